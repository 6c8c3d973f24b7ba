# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A plan pins what it will load (hf_gpt1.training.pinned, issue 50 section 3): a Hub id's commit, whatever the
cache's refs/main names by the time the run executes, and a folder's weights and tokenizer files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from hf_gpt1.commands.command_line import parse_recipe_args
from hf_gpt1.commands.glue import ARGUMENTS
from hf_gpt1.training.finetune import execute_finetuning, plan_finetuning
from hf_gpt1.training.run_folder import RUN_FILE
from tests.utils import glue_args

SHORT = ["--max_train_samples", "16", "--max_eval_samples", "8", "--do_predict", "false", "--save_strategy", "no"]
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def _model_folder(tiny_lm: Path, folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in MODEL_FILES:
        shutil.copy(tiny_lm / name, folder / name)
    return folder


def _plan(model: str, glue_slice: Path, out: Path):
    return plan_finetuning(*parse_recipe_args(ARGUMENTS, glue_args("rte", model, glue_slice, out, *SHORT)))


def test_a_hub_id_trains_from_the_commit_it_was_planned_on(tiny_lm, glue_slice, tmp_path, monkeypatch):
    """The cache's refs/main moves between plan and execute (a download by another process): the run still reads
    the planned commit's snapshot, and its identity records that commit."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    repo = cache / "models--me--gpt1-tiny"
    planned, later = "a" * 40, "b" * 40
    _model_folder(tiny_lm, repo / "snapshots" / planned)
    _model_folder(tiny_lm, repo / "snapshots" / later)
    (repo / "snapshots" / later / "config.json").write_text("{ not the planned commit")  # would not load
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(planned)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    out = tmp_path / "out"
    plan = _plan("me/gpt1-tiny", glue_slice, out)
    (repo / "refs" / "main").write_text(later)
    results = execute_finetuning(plan)
    assert "validation" in results
    identity = json.loads((out / RUN_FILE).read_text())
    assert identity["pinned"]["--model_name_or_path"]["commit"] == planned
    assert identity["model"]["model_name_or_path"] == "me/gpt1-tiny"  # the arguments as given


def test_a_folder_that_gains_other_weights_after_its_plan_is_refused(tiny_lm, glue_slice, tmp_path):
    """A folder planned with pytorch_model.bin: a model.safetensors that arrives before execute (transformers would
    load it first) is refused in one line, before anything is trained or written."""
    folder = _model_folder(tiny_lm, tmp_path / "model")
    weights = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    torch.save(weights, folder / "pytorch_model.bin")
    out = tmp_path / "out"
    plan = _plan(str(folder), glue_slice, out)
    torch.manual_seed(0)
    from safetensors.torch import save_file

    save_file({name: torch.zeros_like(t) for name, t in weights.items()}, folder / "model.safetensors")
    with pytest.raises(ValueError, match=r"--model_name_or_path .*model: model.safetensors appeared after this run "
                       r"was planned \(it planned pytorch_model.bin, tokenizer.json\)"):  # fmt: skip
        execute_finetuning(plan)
    assert not out.exists()
