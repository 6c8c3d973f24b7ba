# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""How a run is launched (hf_gpt1.training.launch): the launch settled once at the start, in any spelling."""

from __future__ import annotations

import os

import pytest

from hf_gpt1.training.arguments import (
    RecipeTrainingArguments,
)
from hf_gpt1.training.launch import settle_launch
from hf_gpt1.training.precision import weights_dtype


def test_the_launch_settles_fsdp_on_the_cpu_once_at_the_start(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    args = RecipeTrainingArguments(output_dir=str(tmp_path), report_to="none")
    assert os.environ["ACCELERATE_USE_FSDP"] == "true"
    notes = settle_launch(args)
    assert os.environ["ACCELERATE_USE_FSDP"] == "false"
    assert any("FSDP shards over accelerators" in note for note in notes)
    assert not any("FSDP" in note for note in settle_launch(args))  # settled: nothing more to say


@pytest.mark.parametrize("spelling", ["true", "1", "yes", "on", "True"])
def test_every_spelling_of_an_fsdp_launch_is_one_launch(monkeypatch, tmp_path, spelling):
    """`ACCELERATE_USE_FSDP` read as accelerate reads it, by the refusal and by the CPU's switch to an unsharded run
    alike: on a GPU machine any spelling makes FSDP own precision; on the CPU any spelling trains unsharded, says so,
    and leaves the dtype to the run (one of them, "true", used to be switched and the others refused)."""
    from hf_gpt1.training.arguments import PretrainTrainingArguments
    from hf_gpt1.training.launch import precision_engine, settle_launch

    args = PretrainTrainingArguments(output_dir=str(tmp_path), report_to="none", eval_strategy="no")
    monkeypatch.setenv("ACCELERATE_USE_FSDP", spelling)
    assert precision_engine(args) == "FSDP"
    (note,) = [line for line in settle_launch(args) if line.startswith("FSDP shards")]
    assert "trains this one process unsharded" in note
    assert precision_engine(args) is None and weights_dtype("bfloat16", True, precision_engine(args)) == "bfloat16"
