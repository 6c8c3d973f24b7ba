# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Shared test set-up: offline hub, deterministic seeds, and the real-data fixtures the recipe tests start from (a tiny
GPT-1 pre-trained on WikiText-2, slices of GLUE folders); helpers are in tests/utils.py."""

import os

# Before transformers/datasets/evaluate are imported anywhere: the Hub is unreachable here, and without these each
# hub call retries for ~23 s before failing.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Under pytest-xdist each worker is one of the cores' processes: one thread each (and each subprocess it starts), or
# two workers' thread pools would contend for the same two cores.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["OMP_NUM_THREADS"] = "1"

import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from tests.utils import COMMON, SENTENCES, TINY_LM, glue_args, shared_data, tiny_config_for, write_glue_slice  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: the full tier only (scripts/test.sh --all): end-to-end runs, real processes (the console script, "
        "python -m, signals, multi-process launches), the demo, the GPU check's dry run, the README as written",
    )
    # marks of transformers' borrowed common tests (tests/test_transformers_common.py)
    borrowed = ("accelerate_tests", "flash_attn_test", "flash_attn_3_test", "flash_attn_4_test", "torch_compile_test")
    for mark in borrowed:
        config.addinivalue_line("markers", f"{mark}: a transformers common-test mark")


@pytest.fixture(scope="session")
def wikitext_slice(tmp_path_factory) -> dict[str, Path]:
    """~100 kB of WikiText-2 for training and a disjoint ~25 kB for held-out perplexity."""
    lines = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("wikitext")
    (folder / "train.txt").write_text("".join(lines[:400]), encoding="utf-8")
    (folder / "valid.txt").write_text("".join(lines[3000:3100]), encoding="utf-8")
    return {"train": folder / "train.txt", "validation": folder / "valid.txt"}


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory, wikitext_slice) -> Path:
    """A tiny GPT-1 pre-trained by `hf-gpt1 pretrain` (dropout 0, so fine-tuning runs are reproducible); its results
    are the folder's (`RunFolder(tiny_lm).results()`)."""
    from hf_gpt1.commands import main

    out = tmp_path_factory.mktemp("pretrain") / "run"
    # the console script's entry point, in this process: a session fixture cannot take capsys (`run_command`)
    main(
        [
            "pretrain",
            "--train_files", str(wikitext_slice["train"]),
            "--validation_files", str(wikitext_slice["validation"]),
            "--output_dir", str(out),
            *TINY_LM, "--dropout", "0",
            "--max_steps", "16", "--per_device_train_batch_size", "8", "--warmup_steps", "4",
            "--eval_steps", "8", "--save_steps", "8", "--logging_steps", "4", "--seed", "1",
            *COMMON,
        ]
    )  # fmt: skip
    return out


@pytest.fixture(scope="session")
def glue_slice(tmp_path_factory) -> Path:
    """The first rows of the real RTE, STS-B and CoLA TSVs, in the GLUE folder layout."""
    return write_glue_slice(tmp_path_factory.mktemp("glue"), ("RTE", "STS-B", "CoLA"))


@pytest.fixture
def no_training(monkeypatch):
    """Bad input must be rejected before the first training step."""
    from transformers import Trainer

    def train(self, *args, **kwargs):
        raise AssertionError("training started despite the bad input")

    monkeypatch.setattr(Trainer, "train", train)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A tiny pre-trained-looking checkpoint folder (2 layers, 64 wide, 64 positions) with its GPT-1 tokenizer, built
    once per session: copy it into `tmp_path` to change it."""
    from hf_gpt1 import GPT1LMHeadModel, train_gpt1_tokenizer

    folder = tmp_path_factory.mktemp("tiny")

    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=120)
    GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=64, n_embd=64)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def rte_files(tmp_path):
    """A 24-row RTE train CSV and a 12-row dev CSV of SENTENCES pairs."""
    pairs = [
        (SENTENCES[i % 5], SENTENCES[(i * 3 + 1) % 5], "entailment" if i % 3 else "not_entailment") for i in range(24)
    ]
    rows = [f'"{a}","{b}",{label}\n' for a, b, label in pairs]
    (tmp_path / "train.csv").write_text("sentence1,sentence2,label\n" + "".join(rows))
    (tmp_path / "dev.csv").write_text("sentence1,sentence2,label\n" + "".join(rows[:12]))
    return tmp_path / "train.csv", tmp_path / "dev.csv"


@pytest.fixture
def restore_determinism():
    """`--full_determinism` in an in-process run turns on `torch.use_deterministic_algorithms` for the whole process:
    switch it back so the tests that follow run as they would alone."""
    before = torch.are_deterministic_algorithms_enabled()
    yield
    torch.use_deterministic_algorithms(before)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In a module declaring SKIP_REASONS (regex of a borrowed test's skip message → the GPT-1 reason), each skip is
    reported with its GPT-1 reason, and a skip without one fails."""
    outcome = yield
    report = outcome.get_result()
    reasons = getattr(item.module, "SKIP_REASONS", None)
    if reasons is None or not report.skipped or not isinstance(report.longrepr, tuple):
        return
    path, line, message = report.longrepr
    why = next((why for pattern, why in reasons.items() if re.search(pattern, message)), None)
    if why is None:
        report.outcome = "failed"
        report.longrepr = f"{item.name} was skipped ({message!r}) with no GPT-1 reason in SKIP_REASONS: state one."
    else:
        report.longrepr = (path, line, f"GPT-1: {why} [{message}]")


@pytest.fixture(scope="session")
def rte_model(tiny_lm, glue_slice, tmp_path_factory) -> Path:
    """An RTE model fine-tuned by the recipe (one epoch on the GLUE slice), once per session: copy it to change it."""
    from hf_gpt1.commands import main

    out = tmp_path_factory.mktemp("rte") / "model"
    # the console script's entry point, in this process: a session fixture cannot take capsys (`run_command`)
    main(["glue", *glue_args("rte", tiny_lm, glue_slice, out, "--do_predict", "false", "--save_strategy", "no")])
    return out


@pytest.fixture
def finished_run(tmp_path, monkeypatch):
    """An RTE run folder as the recipe leaves it, fine-tuned from the local folder `runs/first-pt` (relative, as in
    the README's First run), whose results name files in the run by absolute paths."""
    from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, load_gpt1_tokenizer
    from hf_gpt1.data.atomic import write_json_atomic
    from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
    from hf_gpt1.training.arguments import ModelArguments
    from hf_gpt1.training.finetune import build_model
    from hf_gpt1.training.run_folder import RUN_FILE
    from tests.utils import tiny_config_for

    monkeypatch.chdir(tmp_path)
    base = Path("runs/first-pt")
    tokenizer = train_gpt1_tokenizer(["the cat sat on the mat ."] * 20, vocab_size=60)
    lm = GPT1LMHeadModel(tiny_config_for(tokenizer, n_layer=1))
    add_gpt1_special_tokens(tokenizer, lm)
    lm.save_pretrained(base)
    tokenizer.save_pretrained(base)
    run = tmp_path / "runs" / "rte"
    model = build_model(get_task("rte"), ModelArguments(model_name_or_path=str(base)), load_gpt1_tokenizer(base))
    model.save_pretrained(run)
    load_gpt1_tokenizer(base).save_pretrained(run)
    (run / "RTE.tsv").write_text("index\tprediction\n0\tentailment\n")
    (run / "checkpoint-4").mkdir()
    record = {"recipe": "glue", "model": {"model_name_or_path": str(base)}, "data": {"task": "rte"}, "seed": 42}
    record["inputs"] = {"--model_name_or_path": {str(base / "config.json"): "0" * 64}}
    (run / RUN_FILE).write_text(json.dumps(record))
    results = {"task": "rte", "test_predictions": str((run / "RTE.tsv").resolve())}
    results |= {
        "best_checkpoint": str(run.resolve() / "checkpoint-4"),
        "validation": {"eval_validation_accuracy": 0.5},
    }
    write_json_atomic(run / "all_results.json", results)
    return run
