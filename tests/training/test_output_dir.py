# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The output folder of a run (hf_gpt1.training.output_dir): the checks, the claim, and the lock that keeps two runs
out of one folder (and is taken over from a dead run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hf_gpt1.training import output_dir
from hf_gpt1.training.arguments import RecipeTrainingArguments
from hf_gpt1.training.output_dir import LOCK_FILE, RUN_FILE, OutputDirLock, check_output_dir, claimed
from tests.utils import REPO_ROOT

RUN = {"recipe": "glue", "data": {"task": "rte"}}


def claim(folder, overwrite=False, resume=False):
    args = RecipeTrainingArguments(output_dir=str(folder), overwrite_output_dir=overwrite, resume=resume, report_to=[])
    return claimed(args, RUN)


def test_an_occupied_folder_is_refused_without_touching_it(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="files that are not from an hf_gpt1 run.*--overwrite_output_dir"):
        check_output_dir(folder, RUN, overwrite=False, resume=False)
    (folder / RUN_FILE).write_text(json.dumps(RUN))
    with pytest.raises(ValueError, match="this same run \\(pass --resume to continue it\\)"):
        check_output_dir(folder, RUN, overwrite=False, resume=False)
    check_output_dir(folder, RUN, overwrite=False, resume=True)  # the same run may resume
    with pytest.raises(ValueError, match="holds a different run"):
        check_output_dir(folder, {**RUN, "seed": 2}, overwrite=False, resume=True)
    assert sorted(p.name for p in folder.iterdir()) == [RUN_FILE, "notes.txt"]
    (folder / RUN_FILE).write_text("{damaged")
    with pytest.raises(ValueError, match=f"{RUN_FILE} is damaged.*--overwrite_output_dir"):
        check_output_dir(folder, RUN, overwrite=False, resume=True)


def test_output_dir_that_cannot_be_used(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file; give a folder"):
        check_output_dir(afile, RUN, overwrite=False, resume=False)
    with pytest.raises(ValueError, match="holds no run to resume"):
        check_output_dir(tmp_path / "new", RUN, overwrite=False, resume=True)
    monkeypatch.setattr(
        output_dir.os, "access", lambda path, mode: False
    )  # a read-only parent (root may write anywhere)
    with pytest.raises(PermissionError, match="is not writable"):
        check_output_dir(tmp_path / "new" / "deeper", RUN, overwrite=False, resume=False)


def test_claiming_with_overwrite_empties_the_folder_but_keeps_its_lock(tmp_path):
    folder = tmp_path / "out"
    (folder / "checkpoint-3").mkdir(parents=True)
    (folder / "notes.txt").write_text("old")
    with claim(folder, overwrite=True):
        assert sorted(p.name for p in folder.iterdir()) == [LOCK_FILE, RUN_FILE]
        assert json.loads((folder / RUN_FILE).read_text()) == RUN
        assert OutputDirLock(folder).in_use() is not None  # held for the body of the `with` ...
    assert OutputDirLock(folder).in_use() is None  # ... and released after it
    check_output_dir(folder, RUN, overwrite=False, resume=True)  # the lock file alone is not "files of another run"


HOLD = """
import sys, time
from hf_gpt1.training.output_dir import OutputDirLock
OutputDirLock(sys.argv[1]).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_run_cannot_use_a_folder_in_use_and_a_dead_runs_lock_is_taken_over(tmp_path):
    folder = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=REPO_ROOT, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"locked"
        with pytest.raises(ValueError, match=rf"in use by a running run \(pid {holder.pid} on .*\); wait for it"):
            with claim(folder):
                pass
        assert not (folder / RUN_FILE).exists()  # refused before anything was written
        (folder / RUN_FILE).write_text(json.dumps(RUN))  # the holder's run: a second --resume of it is refused
        with pytest.raises(ValueError, match="in use by a running run"):  # by the check a run makes before loading
            check_output_dir(folder, RUN, overwrite=False, resume=True)
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # the run dies without releasing anything
        holder.wait()
        holder.stdout.close()
    deadline = time.monotonic() + 10
    while OutputDirLock(folder).in_use():  # the kernel releases the dead process's lock
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with claim(folder, resume=True):
        assert f"pid {os.getpid()}" in (folder / LOCK_FILE).read_text()
    second = OutputDirLock(folder)
    second.acquire()  # released: free again
    second.release()
