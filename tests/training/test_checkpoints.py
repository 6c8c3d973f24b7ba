# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Checkpoints that are never lost (hf_gpt1.training.checkpoints): completion markers with file sizes, verified resumes
that fall back past damaged checkpoints, and rotation that never deletes the last complete checkpoint."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from hf_gpt1.commands.glue import main as glue_main
from hf_gpt1.data.atomic import write_json_atomic
from hf_gpt1.training.checkpoints import (
    COMPLETE_MARKER,
    checkpoint_problem,
    last_complete_checkpoint,
    mark_complete,
    rotate_checkpoints,
)
from tests.utils import (
    run_cli,
)


def checkpoint(root: Path, step: int, complete: bool = True) -> Path:
    """A checkpoint folder as Trainer writes it (real safetensors weights, an optimizer file, the trainer state)."""
    folder = root / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    save_file({"w": torch.full((4, 4), float(step))}, folder / "model.safetensors")
    (folder / "optimizer.pt").write_bytes(b"o" * 64)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if complete:
        mark_complete(folder, step)
    return folder


def test_marker_records_every_file_and_its_size(tmp_path):
    folder = checkpoint(tmp_path, 4)
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    assert marker["global_step"] == 4
    assert marker["files"] == {
        name: (folder / name).stat().st_size for name in ("model.safetensors", "optimizer.pt", "trainer_state.json")
    }
    assert checkpoint_problem(folder) is None
    assert not list(folder.glob(".*.tmp"))  # written through a temporary file and a rename


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("no marker", "never completed"),
        ("truncated weights", "model.safetensors has"),
        ("missing optimizer", "optimizer.pt is missing"),
        ("damaged marker", "completion marker checkpoint_complete.json is damaged"),
        ("damaged trainer state", "trainer_state.json is not valid JSON"),
    ],
)
def test_checkpoint_problems_are_named(damage, reason, tmp_path):
    folder = checkpoint(tmp_path, 4, complete=damage != "no marker")
    if damage == "truncated weights":
        data = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif damage == "missing optimizer":
        (folder / "optimizer.pt").unlink()
    elif damage == "damaged marker":
        (folder / COMPLETE_MARKER).write_text("{not json")
    elif damage == "damaged trainer state":  # the same size, other bytes: only reading it tells
        path = folder / "trainer_state.json"
        path.write_text("x" * path.stat().st_size)
    assert reason in checkpoint_problem(folder)


def test_weights_damaged_without_a_size_change_are_caught(tmp_path):
    folder = checkpoint(tmp_path, 4)
    path = folder / "model.safetensors"
    path.write_bytes(b"\xff" * path.stat().st_size)  # same size, no valid header
    assert "model.safetensors does not load" in checkpoint_problem(folder)


def test_resume_falls_back_past_damaged_and_unfinished_checkpoints(tmp_path, caplog):
    checkpoint(tmp_path, 5)
    checkpoint(tmp_path, 7)
    checkpoint(tmp_path, 9)
    checkpoint(tmp_path, 10, complete=False)  # the kill came while it was written
    weights = tmp_path / "checkpoint-9" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:40])  # complete once, truncated later
    (tmp_path / "checkpoint-final").mkdir()
    (tmp_path / "checkpoint-8.tmp").mkdir()
    with caplog.at_level(logging.WARNING, logger="hf_gpt1.training.checkpoints"):
        assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-7")
    messages = caplog.text
    assert "checkpoint-10: it was never completed" in messages
    assert "checkpoint-9: model.safetensors has 40 bytes" in messages and "Trying the checkpoint before it" in messages
    assert last_complete_checkpoint(tmp_path / "absent") is None


def test_rotation_keeps_the_newest_complete_checkpoint_and_the_best(tmp_path):
    for step in (2, 4, 6):
        checkpoint(tmp_path, step)
    checkpoint(tmp_path, 8, complete=False)  # being written: it does not count yet
    rotate_checkpoints(tmp_path, limit=1)
    # checkpoint-8 is not complete, so checkpoint-6 (the newest complete one) stays, and nothing newer is touched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-6", "checkpoint-8"]
    mark_complete(tmp_path / "checkpoint-8", 8)
    checkpoint(tmp_path, 10)
    rotate_checkpoints(tmp_path, limit=2, keep=tmp_path / "checkpoint-6")  # the best one is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-10", "checkpoint-6"]
    rotate_checkpoints(tmp_path, limit=None)  # no limit: nothing is deleted
    assert len(list(tmp_path.iterdir())) == 2


def test_save_total_limit_keeps_what_its_help_says_as_transformers_does(tmp_path):
    """`--save_total_limit 2` with an early best (issue 50): at most 2 checkpoints in all, the best one among them,
    and the newest beside it: what transformers' own rotation keeps on the same folders, and what the help says."""
    from transformers.trainer_utils import rotate_checkpoints as transformers_rotation

    from hf_gpt1.training.arguments import RecipeTrainingArguments

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for root in (ours, theirs):
        for step in (2, 4, 6, 8):
            checkpoint(root, step)
    rotate_checkpoints(ours, limit=2, keep=ours / "checkpoint-2")
    transformers_rotation(str(theirs), 2, best_model_checkpoint=str(theirs / "checkpoint-2"))
    kept = sorted(p.name for p in ours.iterdir())
    assert kept == sorted(p.name for p in theirs.iterdir()) == ["checkpoint-2", "checkpoint-8"]
    text = RecipeTrainingArguments.__dataclass_fields__["save_total_limit"].metadata["help"]
    assert "at most N checkpoints in all" in text and "the best one counts among them" in text


def test_write_json_atomic(tmp_path):
    path = tmp_path / "results.json"
    write_json_atomic(path, {"b": 1, "a": Path("x")})
    assert json.loads(path.read_text()) == {"a": "x", "b": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_an_invalid_config_json_is_one_line_naming_it(tiny, rte_files, tmp_path, capsys):
    from tests.utils import glue_argv

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "n_positions": 0}))
    train, dev = rte_files
    error = run_cli(capsys, lambda: glue_main(glue_argv(broken, train, dev, tmp_path / "out")))
    assert "config.json is invalid" in error and "n_positions 0 must be a positive integer" in error, error


def test_a_transposed_tensor_is_named_with_both_shapes(tiny, rte_files, tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    from tests.utils import glue_argv

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    weights = load_file(broken / "model.safetensors")
    weights["transformer.h.0.mlp.c_fc.weight"] = weights["transformer.h.0.mlp.c_fc.weight"].T.contiguous()
    save_file(weights, broken / "model.safetensors", metadata={"format": "pt"})
    train, dev = rte_files
    error = run_cli(capsys, lambda: glue_main(glue_argv(broken, train, dev, tmp_path / "out")))
    assert "tensor transformer.h.0.mlp.c_fc.weight has shape (64, 256)" in error and "(256, 64)" in error, error


@pytest.mark.parametrize("state", ["rng_state.pth", "optimizer.pt"])
def test_resume_over_a_foreign_pickle_says_what_it_did_not_load(state, tiny, rte_files, tmp_path, capsys):
    import pickle

    from hf_gpt1.commands.glue import main as glue_main
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=("--eval_strategy", "no", "--do_predict", "false",
                                                   "--save_strategy", "steps", "--save_steps", "1"))  # fmt: skip
    glue_main(argv)
    newest = max(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    original = (newest / state).read_bytes()
    foreign = pickle.dumps(os.system, protocol=2)  # a pickle that would run code, padded to the same size
    (newest / state).write_bytes(foreign + b"\0" * (len(original) - len(foreign)))
    capsys.readouterr()
    glue_main([*argv, "--resume"])
    out_text = capsys.readouterr().out
    assert f"warning: {newest.name} was not used: {state} does not load as tensors only" in out_text, out_text
