# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A resume under another batching (processes, rows per device, accumulation) than the checkpoint's: the same global
batch continues exactly and says so; another one is refused under a schedule planned in updates (one line naming the
flags that restore it, nothing written), and said, with the windows read again, under a constant one.

In one process here; the resumes on another number of processes are in tests/training/test_ddp.py (full tier)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hf_gpt1.training.checkpoints import COMPLETE_MARKER
from hf_gpt1.training.run_folder import RunFolder
from tests.utils import COMMON, TINY_LM, run_command


def _interrupted_copy(tiny_lm: Path, tmp_path: Path) -> Path:
    """The tiny model's run as it stood at checkpoint-8 of its 16 updates (a run stopped there)."""
    run = tmp_path / "run"
    shutil.copytree(tiny_lm, run)
    shutil.rmtree(run / "checkpoint-16")
    return run


def _argv(wikitext_slice, run: Path, *batch: str) -> list[str]:
    """tiny_lm's command line (tests/conftest.py), resumed, with another batching."""
    argv = ["--train_files", str(wikitext_slice["train"]), "--validation_files", str(wikitext_slice["validation"])]
    argv += ["--output_dir", str(run), *TINY_LM, "--dropout", "0", "--max_steps", "16", "--warmup_steps", "4"]
    argv += ["--eval_steps", "8", "--save_steps", "8", "--logging_steps", "4", "--seed", "1", "--resume", *COMMON]
    return [*argv, *batch]


def _losses(history: list[dict]) -> dict[int, float]:
    return {entry["step"]: entry["loss"] for entry in history if "loss" in entry}


def test_a_checkpoint_records_its_batching(tiny_lm):
    marker = json.loads((tiny_lm / "checkpoint-8" / COMPLETE_MARKER).read_text())
    assert marker["batch"] == {"world_size": 1, "per_device": 8, "accumulation": 1}


def test_the_same_global_batch_by_accumulation_resumes_exactly_and_says_so(capsys, tiny_lm, wikitext_slice, tmp_path):
    run = _interrupted_copy(tiny_lm, tmp_path)
    resumed_run = run_command(
        capsys,
        "pretrain",
        *_argv(wikitext_slice, run, "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "2"),
    )
    results, out = resumed_run.results(), resumed_run.stdout
    assert (
        "note: checkpoint-8 was trained with 1 process × 8 per device × 1 accumulation = a global batch of 8; this "
        "launch has 1 process × 4 per device × 2 accumulation, the same global batch: the data position is exact "
        "(update 9 reads the windows the run would have read next)." in out
    ), out
    unbroken = _losses(RunFolder(tiny_lm).results()["log_history"])
    resumed = {step: loss for step, loss in _losses(results["log_history"]).items() if step > 8}  # this session's
    assert sorted(resumed) == [12, 16]
    for step in resumed:  # the same windows in each update: equal up to the order of fp32 sums
        assert resumed[step] == pytest.approx(unbroken[step], abs=1e-4), (resumed, unbroken)


def test_another_global_batch_under_a_planned_schedule_is_refused_before_anything_is_written(
    capsys, tiny_lm, wikitext_slice, tmp_path
):
    run = _interrupted_copy(tiny_lm, tmp_path)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*")}
    err = run_command(
        capsys, "pretrain", *map(str, _argv(wikitext_slice, run, "--per_device_train_batch_size", "4"))
    ).error
    assert err == (
        "error: --resume: checkpoint-8 was trained with 1 process × 8 per device × 1 accumulation = a global batch "
        "of 8; this launch has 1 process × 4 per device × 1 accumulation = 4, and under the cosine learning-rate "
        "schedule (planned in updates) the rest of the run would train at another batch and windows 33–64 of epoch "
        "1's order are read again. Pass --per_device_train_batch_size 4 --gradient_accumulation_steps 2 to resume "
        "with the global batch of 8."
    ), err
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*")} == before


def test_another_global_batch_under_a_constant_schedule_says_which_windows_repeat(
    capsys, tiny_lm, wikitext_slice, tmp_path
):
    run = _interrupted_copy(tiny_lm, tmp_path)
    batch = ["--per_device_train_batch_size", "16", "--lr_scheduler_type", "constant"]
    resumed_run = run_command(capsys, "pretrain", *_argv(wikitext_slice, run, *batch))
    resumed_run.results()  # it finished
    out = resumed_run.stdout
    assert (
        "note: checkpoint-8 was trained with 1 process × 8 per device × 1 accumulation = a global batch of 8; this "
        "launch has 1 process × 16 per device × 1 accumulation: the global batch changes to 16, and windows 65–128 "
        "of epoch 1's order are skipped." in out
    ), out
    assert json.loads((run / "checkpoint-16" / COMPLETE_MARKER).read_text())["batch"]["per_device"] == 16
