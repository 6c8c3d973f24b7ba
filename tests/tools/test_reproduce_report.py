# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The report of the paper's tables (hf_gpt1.tools.reproduce_report): which runs are smoke runs and which are the
same run, by their arguments as parsed, in any spelling (the report itself: tools/test_reproduce.py)."""

from __future__ import annotations

from hf_gpt1.tools.reproduce_report import PAPER_EPOCHS, comparable_argv, smoke_flags

TASK = ["--task", "rte", "--data_dir", "glue", "--output_dir", "out"]


def test_a_cut_budget_is_a_smoke_run_in_any_spelling_and_the_papers_is_not():
    assert smoke_flags([*TASK, "--num_train_epochs", str(PAPER_EPOCHS)]) == []
    assert smoke_flags([*TASK, "--max_train_samples=32", "--max-steps", "5"]) == ["--max_train_samples 32",
                                                                                    "--max_steps 5"]  # fmt: skip
    assert smoke_flags([*TASK, "--num_train_epochs", "1"]) == ["--num_train_epochs 1"]
    assert smoke_flags([*TASK, "--seed", "1", "--seed", "2"]) == []  # arguments that do not parse cut nothing


def test_two_spellings_of_the_same_arguments_are_the_same_run():
    one = comparable_argv([*TASK, "--max_train_samples=32"])
    assert one == comparable_argv([*TASK, "--max-train-samples", "32"])
    assert one != comparable_argv([*TASK, "--max_train_samples", "64"])
