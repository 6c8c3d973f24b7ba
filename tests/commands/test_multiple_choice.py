# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 multiple-choice`'s wiring: argv in, the plan made, the Trainer built with the planned arguments, trained
and evaluated (the recipe itself: tests/training/test_finetune.py)."""

from __future__ import annotations

from hf_gpt1.training import finetune
from tests.utils import COMMON, recording_trainer, run_command, story_cloze_csv


def test_multiple_choice_builds_the_trainer_with_the_planned_arguments(capsys, tiny, tmp_path, monkeypatch):
    calls = recording_trainer(monkeypatch, finetune, "GPT1Trainer")
    stories = story_cloze_csv(tmp_path / "val.csv", 8)
    result = run_command(
        capsys, "multiple-choice", "--task", "story_cloze", "--train_file", str(stories), "--validation_file",
        str(stories), "--model_name_or_path", str(tiny), "--output_dir", str(tmp_path / "out"), "--max_steps", "1",
        "--per_device_train_batch_size", "4", "--max_seq_length", "64", "--do_predict", "false", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (_, plan), (built, kwargs) = calls[:2]
    assert built == "init" and kwargs["args"] is plan.args and plan.recipe == "multiple_choice"
    assert kwargs["train_dataset"].num_rows == 8 and set(kwargs["eval_dataset"]) == {"validation"}
    called = [name for name, _ in calls[2:]]
    assert called[0] == "train" and "evaluate" in called
