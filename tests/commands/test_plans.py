# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The plans of `pretrain`, `glue` and `multiple-choice`: `--dry_run` prints the plan and writes nothing, and each
command's wiring (argv in, the Trainer built with the planned arguments, then trained and evaluated)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.utils import COMMON, TINY_LM, run_command, story_cloze_csv


def _listing(root: Path) -> list[str]:
    """Every path under `root` (the test's whole tmp folder): what a dry run must leave as it found it."""
    return sorted(str(Path(folder, name)) for folder, dirs, files in os.walk(root) for name in [*dirs, *files])


def _glue(tiny: Path, glue_slice: Path, out: Path) -> list[str]:
    return ["glue", "--task", "rte", "--data_dir", str(glue_slice), "--model_name_or_path", str(tiny),
            "--output_dir", str(out), "--max_seq_length", "64", *COMMON]  # fmt: skip


@pytest.mark.parametrize("spelling", [["--dry_run"], ["--dry_run=true"], ["--dry-run"], ["--dry_run", "true"], "file"])
def test_glue_dry_run_prints_the_plan_and_writes_nothing(capsys, tiny, glue_slice, tmp_path, monkeypatch, spelling):
    """Every spelling the one parse takes (an argument file's `dry_run: true` too) prints the plan, exits 0 and
    leaves the tmp folder as it was: no output folder, no lock, no log."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    argv = _glue(tiny, glue_slice, out)
    if spelling == "file":
        (tmp_path / "args.yaml").write_text("dry_run: true\n")
        argv = [argv[0], str(tmp_path / "args.yaml"), *argv[1:]]
    else:
        argv += spelling
    before = _listing(tmp_path)
    result = run_command(capsys, *argv)
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before and not out.exists()
    plan = result.stdout
    assert plan.startswith("glue rte: entailment task"), plan
    for said in ("  train: ", "  validation: ", "updates", "warm-up", "evaluation:", "torch.compile:", "precision:",
                 "processes:", f"writes {out}", "dry run: nothing was written"):  # fmt: skip
        assert said in plan, (said, plan)


def test_multiple_choice_dry_run(capsys, tiny, tmp_path):
    """`hf-gpt1 multiple-choice --dry_run`: its plan, nothing written."""
    val = story_cloze_csv(tmp_path / "val.csv", 8)
    out = tmp_path / "run"
    before = _listing(tmp_path)
    result = run_command(
        capsys, "multiple-choice", "--task", "story_cloze", "--train_file", str(val), "--validation_file", str(val),
        "--model_name_or_path", str(tiny), "--output_dir", str(out), "--dry_run", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before
    assert result.stdout.startswith("multiple_choice story_cloze: ") and "  train: 8 rows" in result.stdout


def test_a_dry_run_refuses_a_bad_label(capsys, tiny, tmp_path):
    """The plan parses every label the run reads (the label kind's rule), so a bad label is refused by `--dry_run`
    as by the run, in the same words; a row past `--max_train_samples` is read by neither."""
    rows = "".join(f"A b {i}.,C d.,{'entailment' if i % 2 else 'not_entailment'}\n" for i in range(4))
    train = tmp_path / "t.csv"
    train.write_text(f"sentence1,sentence2,label\n{rows}A b.,C d.,maybe\n")
    argv = ["glue", "--task", "rte", "--train_file", str(train), "--model_name_or_path", str(tiny),
            "--output_dir", str(tmp_path / "run"), "--eval_strategy", "no", "--dry_run", *COMMON]  # fmt: skip
    result = run_command(capsys, *argv)
    assert result.code == 2 and not (tmp_path / "run").exists()
    assert result.error == (
        f"error: --train_file {train}: Row 4, column 'label': Task 'rte': label 'maybe' is not one of the names "
        "['entailment', 'not_entailment'] or the integer ids [0, 1]."
    )
    assert run_command(capsys, *argv, "--max_train_samples", "4").code == 0


def test_pretrain_dry_run_trains_no_tokenizer_and_writes_nothing(capsys, wikitext_slice, tmp_path):
    """`hf-gpt1 pretrain --dry_run` with no tokenizer given: the plan (the corpus's size, the updates and warm-up it
    gives, the evaluation), and no BPE trained or packed windows written in the output folder."""
    out = tmp_path / "pt"
    before = _listing(tmp_path)
    result = run_command(
        capsys, "pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", str(out), *TINY_LM,
        "--max_steps", "20", "--warmup_steps", "2", "--eval_steps", "5", "--dry_run", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before
    plan = result.stdout
    assert plan.startswith(f"pretrain: corpus {wikitext_slice['train']}"), plan
    for said in ("  train: ", "bytes", "tokens", "windows of 64 tokens", "20 updates", "warm-up: 2 of 20 updates",
                 "evaluation: every 5 updates", "precision:", "processes:", f"writes {out}"):  # fmt: skip
        assert said in plan, (said, plan)


def test_a_dry_run_overwrites_nothing(capsys, tiny, glue_slice, tmp_path):
    """`--dry_run --overwrite_output_dir` on a folder holding another run: the plan is printed and the folder stays
    as it was (a run empties it only when it claims it)."""
    from hf_gpt1.training.run_folder import RUN_FILE

    out = tmp_path / "run"
    out.mkdir()
    (out / RUN_FILE).write_text('{"recipe": "pretrain"}')
    (out / "model.safetensors").write_bytes(b"weights")
    before = _listing(tmp_path)
    result = run_command(capsys, *_glue(tiny, glue_slice, out), "--overwrite_output_dir", "--dry_run")
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before and (out / "model.safetensors").read_bytes() == b"weights"
