# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""README examples run as written, on tiny local models in the folders they name (doctest-style: the fenced block is
read from README.md, so an edit that breaks an example fails here)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, load_gpt1_tokenizer
from hf_gpt1.data.files import load_task_splits
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.training.arguments import ModelArguments
from hf_gpt1.training.finetune import build_model
from tests.tools.hub_standin import HubStandIn, online_env
from tests.utils import (
    REPO_ROOT,
    SENTENCES,
    openai_gpt_folder,
    overridden,
    run_command,
    shared_data,
    story_cloze_csv,
    tiny_config_for,
    write_glue_slice,
)


def readme_blocks(section: str, language: str = "python") -> list[str]:
    """The ```language blocks of the README section under the heading `section` (up to the next `## ` heading)."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n{section}\n")
    end = text.find("\n## ", start + 1)
    return re.findall(rf"```{language}\n(.*?)```", text[start : end if end > 0 else None], re.S)


def readme_block(section: str, language: str = "python") -> str:
    """The first ```language block of a README section."""
    return readme_blocks(section, language)[0]


def readme_commands(section: str) -> list[str]:
    """The commands of a section's bash block: continued lines joined, comments dropped."""
    script = readme_block(section, "bash").replace("\\\n", " ")
    lines = (re.sub(r"\s+#.*$", "", line).strip() for line in script.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The folders the inference example names: runs/pt (a language model), runs/sst2, runs/rte, runs/story_cloze."""
    root = tmp_path_factory.mktemp("readme")
    tokenizer = train_gpt1_tokenizer([s.lower() for s in SENTENCES] * 4, vocab_size=120)
    lm = GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=64))
    add_gpt1_special_tokens(tokenizer, lm)
    lm.save_pretrained(root / "runs" / "pt")
    tokenizer.backend_tokenizer.post_processor = None  # an LM's tokenizer encodes raw text (as recipes/pretrain.py)
    tokenizer.save_pretrained(root / "runs" / "pt")
    for task in ("sst2", "rte", "story_cloze"):
        tokenizer = load_gpt1_tokenizer(root / "runs" / "pt")
        model = build_model(get_task(task), ModelArguments(model_name_or_path=str(root / "runs" / "pt")), tokenizer)
        model.save_pretrained(root / "runs" / task)
        tokenizer.save_pretrained(root / "runs" / task)
    return root


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_inference_and_sharing_example_runs(runs):
    # As a user runs it: a fresh process in the folder holding runs/, the push going to a Hub stand-in.
    code = readme_block("## Inference and sharing")
    with HubStandIn() as hub:
        env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.endpoint, "HF_TOKEN": "hf_standin"}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=runs, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert "me/gpt1-rte" in hub.repos


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_first_run_section_runs(tmp_path):
    # The shell block as written, in a fresh folder: the shared data path made absolute, hf-gpt1 from this environment.
    data = shared_data()
    script = readme_block("## First run", "bash").replace("../shared/data", str(data))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    finetuned = json.loads((tmp_path / "runs" / "first-sst2" / "all_results.json").read_text())["validation"]
    # what the section says: the model beats the majority class clearly
    assert finetuned["eval_validation_accuracy"] > finetuned["eval_validation_baseline_accuracy"] + 0.1
    assert (tmp_path / "runs" / "first-sst2-predict" / "SST-2.tsv").is_file()
    assert "'label': 'positive'" in done.stdout  # the class's name, not the GLUE file's value '1'


# What the First run's commands get in the fast tier in place of their own values (`overridden`: an argument given
# twice is refused): a few steps and rows, the same models, data and files.
FIRST_RUN_BUDGET = {
    "pretrain": ["--max_steps", "4", "--eval_steps", "2", "--save_steps", "2"],
    "glue": ["--max_train_samples", "64", "--max_eval_samples", "32", "--num_train_epochs", "1"],
}


def test_the_first_run_section_runs_on_a_budget(tmp_path, capsys, monkeypatch):
    """The fast tier's run of the First run block: each command as written with a small budget appended, in this
    process (`hf-gpt1` through `hf_gpt1.commands.main`, the `python -c` code executed), in a fresh folder; the full
    tier runs the block as written, in bash."""

    data = shared_data()
    monkeypatch.chdir(tmp_path)
    script = readme_block("## First run", "bash").replace("../shared/data", str(data)).replace("\\\n", " ")
    commands = [line for line in script.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    python = script[script.index("python -c '") :]  # the last command spans lines: its code is quoted
    hf_commands = [shlex.split(line) for line in commands if line.startswith("hf-gpt1 ")]
    assert [argv[1] for argv in hf_commands] == ["pretrain", "glue", "glue"]
    for argv in hf_commands:
        done = run_command(capsys, *overridden(argv[1:], FIRST_RUN_BUDGET[argv[1]]))
        assert done.code == 0, f"{shlex.join(argv)}\n{done.stderr[-3000:]}"
    assert (tmp_path / "runs" / "first-sst2" / "all_results.json").is_file()
    assert (tmp_path / "runs" / "first-sst2-predict" / "SST-2.tsv").is_file()
    exec(compile(shlex.split(python)[2], "README.md", "exec"), {})
    # the class's name (a model trained on a budget may name either), never the GLUE file's value '1'
    assert re.search(r"\[\{'label': '(positive|negative)', 'score': 0\.\d+\}\]", capsys.readouterr().out)


# ------------------------------------------------------------------ examples that read the Hub, served by a stand-in

HUB_ROWS = {"train": 48, "validation": 16, "test": 16}  # rows of each split in the stand-in's copy of GLUE


def glue_hub_files(folder: Path) -> dict[str, bytes]:
    """`nyu-mll/glue`'s layout (a README declaring the configs, parquet files per config and split) for RTE and SST-2,
    each split the first `HUB_ROWS` rows of the real GLUE files, test labels -1 as on the Hub."""
    import datasets

    configs, files = [], {}
    for task in ("rte", "sst2"):
        spec = get_task(task)
        splits, _ = load_task_splits(spec, data_dir=str(shared_data("glue")))
        configs.append(f"- config_name: {task}\n  data_files:")
        for split, rows in splits.items():
            rows = rows.select(range(HUB_ROWS[split]))
            if "label" not in rows.column_names:
                labels = datasets.ClassLabel(names=list(spec.label_names))
                rows = rows.add_column("label", [-1] * rows.num_rows, feature=labels)
            path = folder / task / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows.to_parquet(path)
            files[f"{task}/{path.name}"] = path.read_bytes()
            configs.append(f"  - split: {split}\n    path: {task}/{split}-*")
    files["README.md"] = ("---\nconfigs:\n" + "\n".join(configs) + "\n---\n").encode()
    return files


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A Hub stand-in holding what the README's examples download: `openai-community/openai-gpt` and `nyu-mll/glue`."""
    root = tmp_path_factory.mktemp("hub")
    with HubStandIn() as hub:
        hub.add_repo("openai-community/openai-gpt", openai_gpt_folder(root / "openai-gpt"))
        hub.add_repo("nyu-mll/glue", glue_hub_files(root / "glue"), kind="dataset")
        yield hub


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_using_it_examples_run(hub, tmp_path):
    # The section's blocks in order, one session as a user pastes them: the model from the Hub, then a Trainer.
    code = "\n".join(readme_blocks("## Using it"))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=online_env(hub, tmp_path / "hf"), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "runs" / "my-rte").is_dir()
    assert not hub.unhandled or all("/api/agent" in call for call in hub.unhandled), hub.unhandled


# What each recipe's commands get in the test in place of their own values (`overridden`: an argument given twice is
# refused): small budgets and a small model only. The arguments that the README writes still apply wherever these do
# not replace them.
BUDGETS = {
    "recipes/glue.py": ["--max_train_samples", "24", "--max_eval_samples", "16", "--num_train_epochs", "1",
                        "--per_device_train_batch_size", "8", "--max_seq_length", "128"],
    "recipes/multiple_choice.py": ["--max_train_samples", "16", "--max_eval_samples", "8", "--num_train_epochs", "1",
                                   "--per_device_train_batch_size", "8"],
    "recipes/pretrain.py": ["--n_layer", "2", "--n_embd", "32", "--n_head", "2", "--n_positions", "32",
                            "--vocab_size", "300", "--max_steps", "2", "--per_device_train_batch_size", "4",
                            "--eval_steps", "2", "--save_steps", "2", "--logging_steps", "1"],
    "recipes/zero_shot.py": ["--max_eval_samples", "16"],
    "benchmarks/bench_vs_openai_gpt.py": ["--sizes", "tiny", "--repeats", "1", "--batch-size", "2",
                                          "--pretrain-batch", "1", "--matmul-n", "256", "--nominal-tflops", "1"],
}  # fmt: skip
for _script in ("recipes/glue.py", "recipes/multiple_choice.py", "recipes/pretrain.py"):
    BUDGETS[_script] += ["--report_to", "none"]


def run_readme_commands(section: str, cwd: Path, env: dict[str, str]) -> None:
    """Runs each command of the section's bash block in `cwd` with its script's budget in place of its own values, in
    order (bash still expands the README's globs)."""
    for command in readme_commands(section):
        budget = next(args for script, args in BUDGETS.items() if script in command)
        words = overridden(shlex.split(command), budget)
        line = " ".join(word if "*" in word else shlex.quote(word) for word in words)
        started = time.time()
        done = subprocess.run(
            ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
        print(f"{time.time() - started:5.1f} s  {command}")


def recipes_folder(work: Path) -> None:
    """The files the Recipes commands name, in a fresh folder: a GLUE folder (the first rows of the real RTE, STS-B and
    SST-2 files, and a diagnostic file) as `../shared/data/glue` and `glue_data`, QNLI TSVs, the Story Cloze CSVs,
    text corpora (real WikiText-2), and the MNLI model `--task ax` predicts with."""
    (work / "recipes").symlink_to(REPO_ROOT / "recipes")
    # what ../shared/data/glue names: the first rows of the real files
    glue = write_glue_slice(work.parent / "shared" / "data" / "glue", ("RTE", "STS-B", "SST-2"))
    (work / "glue_data").symlink_to(glue)
    (glue / "diagnostic").mkdir()
    pairs = [(SENTENCES[i], SENTENCES[i + 1]) for i in range(12)]
    (glue / "diagnostic" / "diagnostic.tsv").write_text(
        "index\tsentence1\tsentence2\n" + "".join(f"{i}\t{a}\t{b}\n" for i, (a, b) in enumerate(pairs))
    )
    (work / "QNLI").mkdir()
    labels = ("entailment", "not_entailment")
    labelled = "".join(f"{i}\t{a}?\t{b}\t{labels[i % 2]}\n" for i, (a, b) in enumerate(pairs))
    for name in ("train", "dev"):
        (work / "QNLI" / f"{name}.tsv").write_text("index\tquestion\tsentence\tlabel\n" + labelled)
    (work / "QNLI" / "test.tsv").write_text(
        "index\tquestion\tsentence\n" + "".join(f"{i}\t{a}?\t{b}\n" for i, (a, b) in enumerate(pairs))
    )
    story_cloze_csv(work / "cloze_test_val__spring2016.csv", 1871)
    story_cloze_csv(work / "cloze_test_test__spring2016.csv", 20)
    text = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8")
    for folder in ("corpus", "books"):
        (work / folder).mkdir()
        for i in range(2):
            (work / folder / f"part{i}.txt").write_text(text[i * 20_000 : (i + 1) * 20_000], encoding="utf-8")
    # an MNLI model, as an MNLI run would have saved it (its head marked as fine-tuned on mnli)
    base = openai_gpt_folder(work.parent / "openai-gpt")
    tokenizer = load_gpt1_tokenizer(base)
    model = build_model(get_task("mnli"), ModelArguments(model_name_or_path=str(base)), tokenizer)
    model.save_pretrained(work / "runs" / "mnli")
    tokenizer.save_pretrained(work / "runs" / "mnli")


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_recipes_commands_run(hub, tmp_path):
    # Every command of the Recipes block in order (later ones read what earlier ones wrote), as bash runs them, from
    # a folder holding the files they name; the Hub they read is the stand-in.
    work = tmp_path / "work"
    work.mkdir()
    recipes_folder(work)
    run_readme_commands("## Recipes", work, online_env(hub, tmp_path / "hf"))
    # what the commands promise: models, submissions, predictions, metrics
    assert (work / "runs" / "rte" / "RTE.tsv").is_file() and (work / "runs" / "rte-test" / "RTE.tsv").is_file()
    assert (work / "runs" / "ax" / "AX.tsv").is_file() and (work / "runs" / "qnli" / "QNLI.tsv").is_file()
    assert (work / "runs" / "sc" / "story_cloze_test_predictions.tsv").is_file()
    assert (work / "runs" / "gpt1" / "model.safetensors").is_file()
    for run in ("stsb", "sst2-6layers", "rte-seed3", "pt"):
        assert (work / "runs" / run / "all_results.json").is_file(), run


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_performance_command_runs(tmp_path):
    # The benchmark command as written, on the tiny size, in a folder whose benchmarks/results/ is its own (the
    # committed results stay untouched).
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    script = Path("benchmarks", "bench_vs_openai_gpt.py")
    (tmp_path / script).symlink_to(REPO_ROOT / script)
    run_readme_commands("## Performance", tmp_path, dict(os.environ))
    rows = json.loads((tmp_path / "benchmarks" / "results" / "cpu_training.json").read_text())["rows"]
    assert {row["task"] for row in rows} == {"finetune", "pretrain"} and all(row["ratio"] > 0 for row in rows)


@pytest.mark.slow  # the full tier (scripts/test.sh --all): as written
def test_the_reproduction_commands_run(tiny_lm, glue_slice, tmp_path, capsys, monkeypatch):
    """The "Reproducing the paper" block as written, in a folder with `glue_data` and `story_cloze`, each command with
    a budget in place of its own values (`overridden`: one task, one seed, the tiny model, 48 rows). Each `hf-gpt1`
    runs in this process (`hf_gpt1.commands.main`, what the console script calls: the script itself is proved by
    test_commands.py); the queue's runs are its own processes, as always."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "glue_data").symlink_to(glue_slice)
    (tmp_path / "story_cloze").mkdir()
    for name in ("cloze_test_val__spring2016.csv", "cloze_test_test__spring2016.csv"):
        story_cloze_csv(tmp_path / "story_cloze" / name, 40)
    (tmp_path / "glue_server.json").write_text(json.dumps({"RTE": 53.1}))
    budget = [
        "--tasks", "rte", "--seeds", "0", "--model_name_or_path", str(tiny_lm), "--max_train_samples", "48",
        "--max_eval_samples", "16", "--num_train_epochs", "1", "--report_to", "none",
    ]  # fmt: skip
    commands = readme_commands("### Reproducing the paper (Tables 2–5)")
    actions = ("prefetch", "plan", "run", "run", "submit-pack", "report")
    assert [c.split()[:3] for c in commands] == [["hf-gpt1", "reproduce", a] for a in actions]
    printed = []
    for command, action in zip(commands, actions):
        # the zip of one task's predictions: the others (--partial) were not run on this budget
        after = {"report": [], "submit-pack": ["--partial"]}.get(action, budget)
        argv = overridden(command.split()[1:], after)
        if "--devices" in argv and not torch.cuda.is_available():  # GPU indices are refused where there are none
            first = argv.index("--devices") + 1
            last = next((i for i in range(first, len(argv)) if argv[i].startswith("--")), len(argv))
            argv[first:last] = ["cpu"]
        done = run_command(capsys, *argv)
        assert done.code == 0, f"{command}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        printed.append(done.stdout)
    report = (tmp_path / "runs" / "reproduce" / "REPORT.md").read_text()
    assert "| 2 | RTE | full | 56.0 |" in report and "| 5 | RTE (acc) | no_aux_lm | 54.4 |" in report
    assert "3 ran, 0 reused, 0 failed" in printed[2] and "0 ran, 3 reused, 0 failed" in printed[3]
    assert "glue_submission.zip: 1 file for the GLUE server" in printed[4]
    # the server's score of a smoke run's predictions is shown, with no Δ: the row is incomplete (its budget)
    assert "| 2 | RTE | full | 56.0 |" in report and "| 53.1 |  | incomplete: smoke budget" in report
