# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Checkpoints that are never lost (hf_gpt1.training.checkpoints): completion markers with file sizes and digests,
verified resumes that fall back past damaged checkpoints, and rotation that never deletes the last complete
checkpoint."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import save_file

from hf_gpt1.data.atomic import write_json_atomic
from hf_gpt1.training.checkpoints import (
    COMPLETE_MARKER,
    checkpoint_problem,
    digest_problem,
    last_complete_checkpoint,
    mark_complete,
    rotate_checkpoints,
)
from hf_gpt1.training.run_folder import RunFolder, resume_checkpoint
from tests.utils import (
    COMMON,
    TINY_LM,
    CommandResult,
    glue_argv,
    run_command,
)


def checkpoint(root: Path, step: int, complete: bool = True) -> Path:
    """A checkpoint folder as Trainer writes it (real safetensors weights, an optimizer file, the trainer state)."""
    folder = root / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    save_file({"w": torch.full((4, 4), float(step))}, folder / "model.safetensors")
    torch.save({"state": {}, "param_groups": []}, folder / "optimizer.pt")
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if complete:
        mark_complete(folder, step)
    return folder


def resume_args(root: Path) -> SimpleNamespace:
    """The arguments a resume reads: the folder and the launch's batching."""
    return SimpleNamespace(
        resume=True, output_dir=str(root), process_index=0, world_size=1, per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
    )  # fmt: skip


def test_marker_records_every_file_and_its_size(tmp_path):
    folder = checkpoint(tmp_path, 4)
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    assert marker["global_step"] == 4
    assert marker["files"] == {
        name: (folder / name).stat().st_size for name in ("model.safetensors", "optimizer.pt", "trainer_state.json")
    }
    assert marker["sha256"] == {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in marker["files"]
    }
    assert checkpoint_problem(folder) is None
    assert not list(folder.glob(".*.tmp"))  # written through a temporary file and a rename


def zero_half_of_the_weights(path: Path) -> None:
    """Zeros the second half of a safetensors file's tensor bytes: the same size and a valid header, so it loads."""
    data = path.read_bytes()
    start = 8 + int.from_bytes(data[:8], "little")  # after the header
    middle = start + (len(data) - start) // 2
    path.write_bytes(data[:middle] + bytes(len(data) - middle))


def test_a_checkpoint_changed_at_the_same_size_is_named_and_resume_uses_the_one_before(tmp_path, capsys):
    """Weights half zeros, every size and header as written: only the digests recorded at completion tell."""
    checkpoint(tmp_path, 4)
    newest = checkpoint(tmp_path, 8)
    zero_half_of_the_weights(newest / "model.safetensors")
    assert checkpoint_problem(newest) is None  # the cheap checks (sizes, header) pass
    assert resume_checkpoint(resume_args(tmp_path)) == str(tmp_path / "checkpoint-4")
    out = capsys.readouterr().out
    assert (
        out.count("warning:") == 1
        and (
            "warning: checkpoint-8 was not used: model.safetensors is not the file written there (its SHA-256 differs "
            "from the one recorded when the checkpoint was completed: damaged or overwritten since)"
        )
        in out
    ), out
    # a checkpoint completed before digests were recorded is checked by its sizes and states, as it was
    marker = json.loads((newest / COMPLETE_MARKER).read_text())
    write_json_atomic(newest / COMPLETE_MARKER, {key: value for key, value in marker.items() if key != "sha256"})
    assert resume_checkpoint(resume_args(tmp_path)) == str(newest)


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


def test_an_invalid_config_json_is_one_line_naming_it(tiny, rte_files, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "n_positions": 0}))
    train, dev = rte_files
    error = run_command(capsys, "glue", *map(str, glue_argv(broken, train, dev, tmp_path / "out"))).error
    assert "config.json is invalid" in error and "n_positions 0 must be a positive integer" in error, error


def test_a_transposed_tensor_is_named_with_both_shapes(tiny, rte_files, tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    weights = load_file(broken / "model.safetensors")
    weights["transformer.h.0.mlp.c_fc.weight"] = weights["transformer.h.0.mlp.c_fc.weight"].T.contiguous()
    save_file(weights, broken / "model.safetensors", metadata={"format": "pt"})
    train, dev = rte_files
    error = run_command(capsys, "glue", *map(str, glue_argv(broken, train, dev, tmp_path / "out"))).error
    assert "tensor transformer.h.0.mlp.c_fc.weight has shape (64, 256)" in error and "(256, 64)" in error, error


def resumes_from_the_one_before(folder: Path, resume: Callable[[], CommandResult]) -> None:
    """Zeros half the weights of `folder`'s newest checkpoint, then `resume()`s (a command run to the end): the one
    before it is used, and the damaged one named."""
    steps = sorted(int(p.name.split("-")[1]) for p in folder.glob("checkpoint-*"))
    zero_half_of_the_weights(folder / f"checkpoint-{steps[-1]}" / "model.safetensors")
    resumed = resume()
    resumed.results()  # it finished
    out = resumed.stdout
    assert f"Resuming from {folder / f'checkpoint-{steps[-2]}'}" in out, out
    assert f"warning: checkpoint-{steps[-1]} was not used: model.safetensors is not the file written" in out, out


def test_a_fine_tuning_resume_uses_the_checkpoint_before_one_whose_weights_changed(tiny, rte_files, tmp_path, capsys):
    train, dev = rte_files
    argv = glue_argv(tiny, train, dev, tmp_path / "glue", extra=("--do_predict", "false"))
    run_command(capsys, "glue", *argv).results()
    resumes_from_the_one_before(tmp_path / "glue", lambda: run_command(capsys, "glue", *argv, "--resume"))


@pytest.mark.slow
def test_a_pretraining_resume_uses_the_checkpoint_before_one_whose_weights_changed(
    tiny_lm, wikitext_slice, tmp_path, capsys
):
    run = tmp_path / "pretrain"
    shutil.copytree(tiny_lm, run)  # finished at step 16, with checkpoints at 8 and 16
    argv = ["--train_files", wikitext_slice["train"], "--validation_files", wikitext_slice["validation"]]
    argv += ["--output_dir", run, *TINY_LM, "--dropout", "0", "--max_steps", "16"]
    argv += ["--per_device_train_batch_size", "8", "--warmup_steps", "4", "--eval_steps", "8", "--save_steps", "8"]
    argv += ["--logging_steps", "4", "--seed", "1", "--resume", *COMMON]
    resumes_from_the_one_before(run, lambda: run_command(capsys, "pretrain", *argv))


@pytest.mark.parametrize("state", ["rng_state.pth", "optimizer.pt"])
def test_resume_over_a_foreign_pickle_says_what_it_did_not_load(state, tiny, rte_files, tmp_path, capsys):
    import pickle

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=("--eval_strategy", "no", "--do_predict", "false",
                                                   "--save_strategy", "steps", "--save_steps", "1"))  # fmt: skip
    run_command(capsys, "glue", *argv).results()
    newest = max(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    original = (newest / state).read_bytes()
    foreign = pickle.dumps(os.system, protocol=2)  # a pickle that would run code, padded to the same size
    (newest / state).write_bytes(foreign + b"\0" * (len(original) - len(foreign)))
    resumed = run_command(capsys, "glue", *argv, "--resume")
    resumed.results()  # it finished
    out_text = resumed.stdout
    assert f"warning: {newest.name} was not used: {state} does not load as tensors only" in out_text, out_text


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda m: {**m, "sha256": ["x"]}, "its 'sha256' is not an object of SHA-256 digests"),
        (lambda m: {**m, "sha256": {**m["sha256"], "optimizer.pt": 5}}, "its 'sha256' is not an object of SHA-256"),
        (lambda m: {**m, "files": ["model.safetensors"]}, "its 'files' is not an object of file sizes"),
        (lambda m: {k: v for k, v in m.items() if k != "files"}, "it records no files"),
        (lambda m: {}, "it records no files"),
        (lambda m: [m], "it is not a JSON object"),
        (lambda m: {**m, "sha256": {"model.safetensors": m["sha256"]["model.safetensors"]}}, "lists other files"),
    ],
    ids=["sha256-list", "sha256-number", "files-list", "no-files", "empty", "list", "digests-of-fewer-files"],
)
def test_a_hand_edited_marker_is_damaged_naming_why_and_the_resume_uses_the_one_before(tmp_path, edit, reason):
    """A marker whose shape is not what `mark_complete` writes is a damaged checkpoint, said with the reason (never a
    traceback, never trusted without its digests); `--resume` continues from the checkpoint before it."""
    checkpoint(tmp_path, 4)
    folder = checkpoint(tmp_path, 8)
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    (folder / COMPLETE_MARKER).write_text(json.dumps(edit(marker)))
    problem = checkpoint_problem(folder) or digest_problem(folder)
    assert problem.startswith(f"its completion marker {COMPLETE_MARKER} is damaged (") and reason in problem, problem
    assert resume_checkpoint(resume_args(tmp_path)) == str(tmp_path / "checkpoint-4")


def test_a_marker_with_a_key_given_twice_is_damaged_naming_the_key(tmp_path):
    folder = checkpoint(tmp_path, 4)
    text = (folder / COMPLETE_MARKER).read_text()
    (folder / COMPLETE_MARKER).write_text('{"global_step": 3, ' + text[1:])
    assert "'global_step' is given twice" in checkpoint_problem(folder)


def test_a_skipped_checkpoint_is_said_once_on_resume(tmp_path, capsys, caplog):
    checkpoint(tmp_path, 4)
    (checkpoint(tmp_path, 8) / COMPLETE_MARKER).unlink()
    args = resume_args(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert RunFolder(tmp_path).resumable_checkpoint() == str(tmp_path / "checkpoint-4")  # quiet
        assert resume_checkpoint(args) == str(tmp_path / "checkpoint-4")
    said = capsys.readouterr().out + caplog.text
    assert said.count("checkpoint-8") == 1, said


def test_a_marker_without_digests_is_resumed_from_saying_its_contents_are_unverified(tmp_path, capsys):
    """A marker without SHA-256 digests (written before they were recorded, or edited) still records each file's size,
    which is checked; the resume says that the contents could not be."""
    folder = checkpoint(tmp_path, 4)
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    del marker["sha256"]
    (folder / COMPLETE_MARKER).write_text(json.dumps(marker))
    args = resume_args(tmp_path)
    assert resume_checkpoint(args) == str(folder)
    assert "checkpoint-4's marker records no SHA-256 digests" in capsys.readouterr().out
