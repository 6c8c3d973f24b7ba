# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 pretrain`'s wiring: argv in, the plan made, the Trainer built with the planned arguments, trained and
evaluated (the recipe itself: tests/training/test_pretrain.py)."""

from __future__ import annotations

from hf_gpt1.training import pretrain
from tests.utils import COMMON, TINY_LM, recording_trainer, run_command


def test_pretrain_builds_the_trainer_with_the_planned_arguments(capsys, wikitext_slice, tmp_path, monkeypatch):
    calls = recording_trainer(monkeypatch, pretrain, "PretrainTrainer")
    result = run_command(
        capsys, "pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", str(tmp_path / "out"),
        *TINY_LM, "--max_steps", "2", "--warmup_steps", "1", "--per_device_train_batch_size", "4", "--eval_steps",
        "2", "--save_strategy", "no", "--max_eval_windows", "4", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (_, plan), (built, kwargs) = calls[:2]
    args = kwargs["args"]
    assert built == "init" and args.output_dir == plan.args.output_dir and args.max_steps == plan.args.max_steps == 2
    assert args.warmup_steps == 1 and args.eval_steps == 2 and kwargs["eval_dataset"].num_rows == 4
    called = [name for name, _ in calls[2:]]
    assert called[0] == "train" and "evaluate" in called
