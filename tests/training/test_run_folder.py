# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The owner of a run's folder (hf_gpt1.training.run_folder.RunFolder): its layout, its life (check, claim, lock),
its checkpoints (marking, rotation, resume), its results, and what the card, the report and `reproduce` read back.

The claim's and the lock's behaviours are proved at length in test_output_dir.py (the module's old name, whose
names still answer); here is the contract every other module relies on when it goes through the owner."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import save_file

from hf_gpt1.training.arguments import RecipeTrainingArguments
from hf_gpt1.training.run_folder import RunFolder
from tests.utils import REPO_ROOT

RUN = {"recipe": "glue", "data": {"task": "rte"}, "seed": 1, "inputs": {}}


def checkpoint(run: RunFolder, step: int, complete: bool = True) -> Path:
    """A checkpoint as Trainer writes it (weights, an optimizer file, its state), marked complete by the owner."""
    folder = run.checkpoint(step)
    folder.mkdir(parents=True)
    save_file({"w": torch.full((2, 2), float(step))}, folder / "model.safetensors")
    torch.save({"state": {}, "param_groups": []}, folder / "optimizer.pt")
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if complete:
        run.mark_complete(step)
    return folder


def test_the_layout_is_the_owners(tmp_path):
    run = RunFolder.of(RecipeTrainingArguments(output_dir=str(tmp_path / "out"), report_to=[]))
    assert run.path == tmp_path / "out"
    assert {
        "run": run.run_file.name,
        "lock": run.lock_file.name,
        "results": run.results_file.name,
        "task": run.task_file.name,
        "console": run.console_file.name,
        "curves": run.curves_file.name,
        "checkpoint": run.checkpoint(12).name,
    } == {
        "run": "hf_gpt1_run.json",
        "lock": ".hf_gpt1.lock",
        "results": "all_results.json",
        "task": "task.json",
        "console": "console.log",
        "curves": "curves.png",
        "checkpoint": "checkpoint-12",
    }
    assert all(path.parent == run.path for path in (run.run_file, run.results_file, run.checkpoint(1)))


def test_a_claimed_folder_records_its_run_and_reads_it_back(tmp_path):
    run = RunFolder(tmp_path / "out")
    assert run.identity() is None and run.results() is None and not run.finished
    args = RecipeTrainingArguments(output_dir=str(run.path), report_to=[])
    run.check(RUN, overwrite=False, resume=False)
    with run.claimed(args, RUN):
        assert run.identity() == RUN
        with pytest.raises(ValueError, match="is in use by a running run"):
            RunFolder(run.path).check(RUN, overwrite=False, resume=True)
    with pytest.raises(ValueError, match=r"already holds this same run \(pass --resume"):
        run.check(RUN, overwrite=False, resume=False)
    assert run.write_results({"eval": {"accuracy": 0.5}}) == run.results_file
    assert run.finished and run.results() == {"eval": {"accuracy": 0.5}}
    run.write_task({"name": "mine"})
    assert json.loads(run.task_file.read_text()) == {"name": "mine"}


@pytest.mark.parametrize(
    "text, reason",
    [("[1, 2]", "it is not a JSON object"), ('{"recipe": "glue", "data": [1]}', "its 'data' is not an object")],
)
def test_an_identity_of_another_shape_is_damaged_not_another_run(text, reason, tmp_path):
    """An identity that is not the object a run writes is a damaged file (said as such, with the fix), never read
    as "another run" nor a traceback."""
    run = RunFolder(tmp_path)
    run.run_file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{run.run_file.name} is damaged ({reason})")):
        run.identity()
    with pytest.raises(ValueError, match=re.escape(f"is damaged ({reason})") + ".*Pass --overwrite_output_dir"):
        run.check(RUN, overwrite=False, resume=True)


@pytest.mark.parametrize(
    "results, reason",
    [
        ([1], "it is not a JSON object"),
        ({"task": "rte", "validation": [1]}, "its 'validation' is not an object"),
        ({"log_history": {}}, "its 'log_history' is not a list"),
        ({"task": 5}, "its 'task' is not a string"),
    ],
)
def test_results_of_another_shape_are_damaged(results, reason, tmp_path):
    run = RunFolder(tmp_path)
    run.results_file.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{run.results_file} is damaged ({reason})")):
        run.results()


@pytest.mark.parametrize("damage", ["a key given twice", "not JSON"])
def test_the_run_files_are_read_strictly(damage, tmp_path):
    """A run file holds one meaning: a key given twice is refused as a damaged file is (a byte-order mark is read)."""
    run = RunFolder(tmp_path)
    text = '{"recipe": "glue", "recipe": "pretrain"}' if damage == "a key given twice" else "{damaged"
    run.run_file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=f"{run.run_file.name} is damaged .*: it records which run owns"):
        run.identity()
    with pytest.raises(ValueError, match=f"{run.run_file.name} is damaged .*Pass --overwrite_output_dir"):
        run.check(RUN, overwrite=False, resume=True)  # claiming the folder: the fix
    run.results_file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(run.results_file))):
        run.results()
    run.results_file.write_text('\ufeff{"eval": {}}', encoding="utf-8")
    assert run.results() == {"eval": {}}


def test_checkpoints_are_marked_listed_rotated_and_resumed_by_the_owner(tmp_path):
    run = RunFolder(tmp_path)
    for step in (2, 4, 6):
        checkpoint(run, step)
    checkpoint(run, 8, complete=False)  # a save cut short: never counted, never the reason to delete the last good
    assert run.complete_checkpoints() == [run.checkpoint(2), run.checkpoint(4), run.checkpoint(6)]
    assert run.last_complete_checkpoint() == str(run.checkpoint(6))
    run.rotate(limit=2, keep=run.checkpoint(2))
    assert sorted(p.name for p in run.path.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-6", "checkpoint-8"]
    args = SimpleNamespace(
        resume=True, process_index=0, world_size=1, per_device_train_batch_size=1, gradient_accumulation_steps=1
    )
    run.mark_complete(6, batch={"world_size": 1, "per_device": 1, "accumulation": 1})
    assert run.resume_checkpoint(args) == str(run.checkpoint(6))
    assert run.resume_checkpoint(SimpleNamespace(resume=False)) is None


def _package_sources() -> dict[str, str]:
    files = subprocess.run(
        ["git", "ls-files", "hf_gpt1/*.py"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {name: (REPO_ROOT / name).read_text(encoding="utf-8") for name in files}


@pytest.mark.parametrize(
    "name",
    ["hf_gpt1_run.json", ".hf_gpt1.lock", "all_results.json", "task.json", "console.log", "curves.png",
     "checkpoint_complete.json"],
)  # fmt: skip
def test_each_run_folder_file_name_is_declared_once(name):
    """Every module that reads or writes a run's file asks the owner where it is (docstrings may name it)."""
    declared = [
        module
        for module, text in _package_sources().items()
        if re.search(rf"""^[^#\n]*?(?<![`\w])["']{re.escape(name)}["']""", text, re.MULTILINE)
    ]
    assert len(declared) == 1, declared


def test_the_run_folder_is_read_through_its_owner():
    """`.output_dir` is read by the owner, the two plans that build it, and the commands whose folder is not a
    run's (reproduce's matrix, convert, push); no run file is read with a bare `json.loads`."""
    readers = {module for module, text in _package_sources().items() if re.search(r"\.output_dir\b", text)}
    assert readers <= {
        "hf_gpt1/training/run_folder.py",
        "hf_gpt1/training/finetune.py",
        "hf_gpt1/training/pretrain.py",
        "hf_gpt1/commands/reproduce.py",
        "hf_gpt1/commands/convert.py",
        "hf_gpt1/commands/push.py",
    }, sorted(readers)
    bare = [
        f"{module}: {line.strip()}"
        for module, text in _package_sources().items()
        for line in text.splitlines()
        if re.search(r"json\.loads\(.*(RUN_FILE|RESULTS_FILE|TASK_FILE|COMPLETE_MARKER|all_results)", line)
    ]
    assert bare == []


def test_the_old_homes_still_answer_with_a_warning_naming_the_owner():
    """`hf_gpt1.training.output_dir` (the module's old name), `checkpoints.resume_checkpoint` and
    `curves.CURVES_FILE` answer for one release from the owner."""
    from hf_gpt1.training import checkpoints, output_dir, run_folder

    with pytest.warns(FutureWarning, match=r"output_dir\.claimed moved to hf_gpt1\.training\.run_folder\.claimed"):
        assert output_dir.claimed is run_folder.claimed
    with pytest.warns(FutureWarning, match=r"checkpoints\.resume_checkpoint moved to hf_gpt1\.training\.run_folder"):
        assert checkpoints.resume_checkpoint is run_folder.resume_checkpoint
    from hf_gpt1.training import curves

    with pytest.warns(FutureWarning, match=r"curves\.CURVES_FILE moved to hf_gpt1\.training\.run_folder"):
        assert curves.CURVES_FILE == run_folder.CURVES_FILE == "curves.png"


@pytest.mark.parametrize(
    "left", ["nothing", "a signal before anything", "a checkpoint", "a stop to resume", "a resumed run"]
)
def test_a_start_that_fails_having_written_nothing_leaves_the_folder_as_found(left, tmp_path):
    """A run whose body fails (the Trainer refusing an optimizer or a schedule in `train()`) having written nothing
    but its identity takes the identity back: the corrected command starts without --resume or --overwrite. Anything
    else of the run (a checkpoint, a stop that says --resume, a resumed run's identity) stays."""
    from hf_gpt1.errors import TrainingInterrupted

    run = RunFolder(tmp_path / "out")
    args = RecipeTrainingArguments(output_dir=str(run.path), report_to=[])
    if left == "a resumed run":
        run.run_file.parent.mkdir()
        run.run_file.write_text(json.dumps(RUN))
        args = RecipeTrainingArguments(output_dir=str(run.path), report_to=[], resume=True)
    from hf_gpt1.process_control import Terminated

    error = TrainingInterrupted("stopped: --resume continues", 15) if left == "a stop to resume" else ValueError("no")
    error = Terminated(15) if left == "a signal before anything" else error  # a kill's --resume continues
    with pytest.raises(type(error)), run.claimed(args, RUN):
        if left == "a checkpoint":
            run.checkpoint(1).mkdir()
        raise error
    assert (run.identity() is None) == (left == "nothing")
    if run.identity() is None:
        run.check(RUN, overwrite=False, resume=False)  # the same command, corrected, may start
