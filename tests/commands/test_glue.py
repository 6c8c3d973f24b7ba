# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 glue`'s wiring: argv in, the plan made, the Trainer built with the planned arguments, trained and
evaluated (the recipe itself: tests/training/test_finetune.py)."""

from __future__ import annotations

from hf_gpt1.training import finetune
from tests.utils import COMMON, recording_trainer, run_command


def test_glue_builds_the_trainer_with_the_planned_arguments(capsys, tiny, rte_files, tmp_path, monkeypatch):
    calls = recording_trainer(monkeypatch, finetune, "GPT1Trainer")
    train, dev = rte_files
    result = run_command(
        capsys, "glue", "--task", "rte", "--train_file", str(train), "--validation_file", str(dev),
        "--model_name_or_path", str(tiny), "--output_dir", str(tmp_path / "out"), "--max_steps", "1",
        "--per_device_train_batch_size", "4", "--max_seq_length", "64", "--do_predict", "false", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (_, plan), (built, kwargs) = calls[:2]
    assert built == "init" and kwargs["args"] is plan.args and plan.recipe == "glue"
    assert plan.args.load_best_model_at_end and plan.args.max_steps == 1
    assert {"validation"} == set(kwargs["eval_dataset"]) and kwargs["train_dataset"].num_rows == 24
    called = [name for name, _ in calls[2:]]
    assert called[0] == "train" and "evaluate" in called
