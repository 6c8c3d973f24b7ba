# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 reproduce` as a researcher uses it, on the tiny profile: a random 2-layer model with the real tokenizer
served as `openai-community/openai-gpt`, RACE and SNLI laid out as `ehovy/race` and `stanfordnlp/snli` are (RACE's
article ids shared by their questions, over-long articles; SNLI's -1 test rows), and Story Cloze's 2016 CSVs.
`prefetch` fills a Hugging Face cache where the Hub is reachable (a stand-in); `plan`, `run` and `report` then work
from that cache with the Hub switched off, as on a GPU host without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools.hub_standin import HubStandIn, online_env
from tests.utils import COMMON, openai_gpt_folder, shared_data, story_cloze_csv

pytestmark = [
    pytest.mark.slow,  # the full tier (scripts/test.sh --all): the reproduction end to end, from a Hub stand-in
    pytest.mark.skipif(
        not shared_data().joinpath("gpt1_bpe").is_dir(),
        reason="needs ../shared/data/gpt1_bpe (the original BPE files)",
    ),
]

RACE_SPLITS = {"train": 16, "validation": 4, "test": 6}  # articles per split, two questions each
SNLI_ROWS = {"train": 32, "validation": 16, "test": 16}
SNLI_UNLABELLED_TEST_ROWS = 3  # pairs without annotator consensus: label -1 on the Hub
SMOKE = ["--max_train_samples", "32", "--max_eval_samples", "16", "--num_train_epochs", "1", "--max_seq_length",
         "64", "--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "4", *COMMON]  # fmt: skip


def _dataset_repo(folder: Path, config: str, splits: dict[str, object]) -> dict[str, bytes]:
    """A Hub dataset repository as the Hub lays these out: a README declaring one config, a parquet file per split."""
    files, entries = {}, []
    for split, rows in splits.items():
        path = folder / config / f"{split}-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows.to_parquet(path)
        files[f"{config}/{path.name}"] = path.read_bytes()
        entries.append(f"  - split: {split}\n    path: {config}/{split}-*")
    files["README.md"] = (
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n{chr(10).join(entries)}\n---\n".encode()
    )
    return files


def race_rows(articles: int) -> list[dict]:
    """`ehovy/race`'s rows: `example_id` is the article's file (`high12.txt`), shared by its questions; every third
    article is short, the others are about 300 tokens (over --max_seq_length 64)."""
    rows = []
    for i in range(articles):
        words = 8 if i % 3 == 0 else 150
        article = " ".join(f"sentence {(i * 7 + k) % 50} of the story ." for k in range(words // 6 + 1))
        for q in range(2):
            rows.append(
                {"example_id": f"{'middle' if i % 2 else 'high'}{i}.txt", "article": article,
                 "answer": "ABCD"[(i + q) % 4], "question": f"What is question {q} about?",
                 "options": ["the cat", "a dog", "the sun", "rain"]}
            )  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    import datasets

    root = tmp_path_factory.mktemp("hub")
    race = {split: datasets.Dataset.from_list(race_rows(n)) for split, n in RACE_SPLITS.items()}
    labels = datasets.ClassLabel(names=["entailment", "neutral", "contradiction"])
    features = datasets.Features({"premise": datasets.Value("string"), "hypothesis": datasets.Value("string"),
                                  "label": labels})  # fmt: skip
    snli = {}
    for split, n in SNLI_ROWS.items():
        label = [i % 3 for i in range(n)]
        if split == "test":
            label[-SNLI_UNLABELLED_TEST_ROWS:] = [-1] * SNLI_UNLABELLED_TEST_ROWS
        premise = [f"A person number {i} walks in the park ." for i in range(n)]
        hypothesis = [("Someone walks .", "A dog sleeps .", "Nobody is outside .")[i % 3] for i in range(n)]
        snli[split] = datasets.Dataset.from_dict(
            {"premise": premise, "hypothesis": hypothesis, "label": label}, features=features
        )
    with HubStandIn() as stand_in:
        stand_in.add_repo("openai-community/openai-gpt", openai_gpt_folder(root / "openai-gpt", n_layer=2))
        stand_in.add_repo("ehovy/race", _dataset_repo(root / "race", "all", race), kind="dataset")
        stand_in.add_repo("stanfordnlp/snli", _dataset_repo(root / "snli", "plain_text", snli), kind="dataset")
        yield stand_in


def reproduce(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hf_gpt1", "reproduce", *argv], env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def test_prefetch_then_plan_run_and_report_without_the_hub(hub, tmp_path):
    online = online_env(hub, tmp_path / "hf")
    offline = {**online, **{var: "1" for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}}
    sc = tmp_path / "story_cloze"
    sc.mkdir()
    story_cloze_csv(sc / "cloze_test_val__spring2016.csv", 400)
    story_cloze_csv(sc / "cloze_test_test__spring2016.csv", 12)
    out = tmp_path / "reproduce"
    argv = ["--tables", "3", "--story_cloze_dir", str(sc), "--output_dir", str(out), *SMOKE]

    # nothing cached and no Hub: one line that says what to do, before anything runs
    refused = reproduce(offline, "plan", *argv)
    assert refused.returncode == 2, refused.stderr[-2000:]
    error = refused.stderr.splitlines()[0]
    assert error.startswith("error: --model_name_or_path openai-community/openai-gpt: not in this machine's")
    assert "run `hf-gpt1 reproduce prefetch`" in error and not out.exists()

    fetched = reproduce(online, "prefetch", *argv)
    assert fetched.returncode == 0, fetched.stderr[-3000:]
    sha = hub.commits["openai-community/openai-gpt"]
    assert f"prefetched openai-community/openai-gpt@{sha} and 1 Hub dataset(s)" in fetched.stdout

    plan = reproduce(offline, "plan", *argv)
    assert plan.returncode == 0, plan.stderr[-3000:]
    lines = {line.split()[0]: line for line in plan.stdout.splitlines() if line.startswith("  ") and ":" in line}
    # RACE with the real tokenizer: 2 of every 3 articles are too long for 64 tokens, whichever the split
    long_rows = {split: 2 * sum(1 for i in range(n) if i % 3) for split, n in RACE_SPLITS.items()}
    race = lines["race"]
    assert "the Hub copy ehovy/race/all" in race, race
    for split, n in RACE_SPLITS.items():
        assert f"{split} {2 * n} ({long_rows[split]} too long)" in race, race
    # the protocol: 374 of the 400 stories validate, the rest train; --max_eval_samples 16 keeps 16 of them
    assert (
        "story_cloze" in lines and "train 26 (0 too long), validation 16 (0 too long), test 12" in lines["story_cloze"]
    )
    assert f"model: openai-community/openai-gpt@{sha}" in plan.stdout
    assert "2 runs (2 tasks × conditions × seeds)" in plan.stdout and "2 new" in plan.stdout
    assert "--story_cloze_protocol true" in plan.stdout  # Story Cloze always under the original protocol
    assert "--per_device_train_batch_size 8 --gradient_accumulation_steps 4" in plan.stdout  # 32 per update

    ran = reproduce(offline, "run", *argv)
    assert ran.returncode == 0, ran.stderr[-3000:] + ran.stdout[-3000:]
    assert "2 ran, 0 reused, 0 failed" in ran.stdout
    rows = {r["column"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    for column in ("RACE-m", "RACE-h", "RACE", "Story Cloze"):  # the test splits, at a smoke budget: no Δ
        assert rows[column]["split"] == "test" and rows[column]["seeds"] and not rows[column]["like_for_like"]
        assert rows[column]["delta"] is None and rows[column]["note"].startswith("incomplete: smoke budget (--max_")
    record = json.loads((out / "race" / "full" / "seed-0.argv.json").read_text())
    assert str(Path(record["argv"][record["argv"].index("--model_name_or_path") + 1]).name) == sha  # pinned

    again = reproduce(offline, "run", *argv)
    assert again.returncode == 0 and "0 ran, 2 reused, 0 failed" in again.stdout, again.stderr[-2000:]


def test_snli_from_its_hub_layout_scores_the_labelled_test_rows(hub, tmp_path):
    out = tmp_path / "reproduce"
    env = online_env(hub, tmp_path / "hf")
    ran = reproduce(env, "run", "--tasks", "snli", "--output_dir", str(out), *SMOKE)
    assert ran.returncode == 0, ran.stderr[-3000:] + ran.stdout[-3000:]
    log = (out / "snli" / "full" / "seed-0.log").read_text()
    scored = SNLI_ROWS["test"] - SNLI_UNLABELLED_TEST_ROWS
    assert f"test ({scored} rows): accuracy" in log
    assert f"({SNLI_UNLABELLED_TEST_ROWS} rows without a gold label predicted, not scored)" in log
    snli = next(r for r in json.loads((out / "results.json").read_text())["rows"] if r["column"] == "SNLI")
    assert snli["split"] == "test" and len(snli["seeds"]) == 1  # counted: the rows it read are the plan's
    assert not snli["like_for_like"] and "smoke budget" in snli["note"]  # a smoke run is no reproduction
    assert os.path.getsize(out / "snli" / "full" / "seed-0" / "snli_test_predictions.tsv") > 0
