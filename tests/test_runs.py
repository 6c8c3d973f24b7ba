"""The run lifecycle of the recipes (hf_gpt1.runs): output-folder checks, the lock that keeps two runs out of one
folder (and is taken over from a dead run), argument files, and one error line for every mistake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

from hf_gpt1 import runs
from hf_gpt1.runs import LOCK_FILE, RUN_FILE, OutputDirLock, check_output_dir, parse_recipe_args, run_recipe
from hf_gpt1.trainer import RecipeTrainingArguments, TrainingError
from tests.conftest import REPO_ROOT

RUN = {"recipe": "glue", "data": {"task": "rte"}}


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
    monkeypatch.setattr(runs.os, "access", lambda path, mode: False)  # a read-only parent (root may write anywhere)
    with pytest.raises(PermissionError, match="is not writable"):
        check_output_dir(tmp_path / "new" / "deeper", RUN, overwrite=False, resume=False)


def test_claiming_with_overwrite_empties_the_folder_but_keeps_its_lock(tmp_path):
    folder = tmp_path / "out"
    (folder / "checkpoint-3").mkdir(parents=True)
    (folder / "notes.txt").write_text("old")
    lock = OutputDirLock(folder)
    runs._claim(lock, RUN, overwrite=True, resume=False)
    try:
        assert sorted(p.name for p in folder.iterdir()) == [LOCK_FILE, RUN_FILE]
        assert json.loads((folder / RUN_FILE).read_text()) == RUN
    finally:
        lock.release()
    check_output_dir(folder, RUN, overwrite=False, resume=True)  # the lock file alone is not "files of another run"


HOLD = """
import sys, time
from hf_gpt1.runs import OutputDirLock
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
            runs._claim(OutputDirLock(folder), RUN, overwrite=False, resume=False)
        assert not (folder / RUN_FILE).exists()  # refused before anything was written
        (folder / RUN_FILE).write_text(json.dumps(RUN))  # the holder's run: a second --resume of it is refused
        prepared = []
        args = RecipeTrainingArguments(output_dir=str(folder), resume=True, report_to=[])
        with pytest.raises(ValueError, match="in use by a running run"):
            runs.run_training(args, RUN, lambda: prepared.append(1), lambda *a: ({}, []), "test")
        assert prepared == []  # at once, before the data and the model were loaded
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # the run dies without releasing anything
        holder.wait()
        holder.stdout.close()
    deadline = time.monotonic() + 10
    while True:  # the kernel released the dead process's lock
        try:
            lock = OutputDirLock(folder)
            runs._claim(lock, RUN, overwrite=False, resume=True)
            break
        except ValueError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    try:
        assert f"pid {os.getpid()}" in (folder / LOCK_FILE).read_text()
    finally:
        lock.release()
    second = OutputDirLock(folder)
    second.acquire()  # released: free again
    second.release()


# ------------------------------------------------------------------------------------------------ argument files


@dataclass
class Options:
    name: str = field(default="x")
    rate: float = field(default=0.5)
    files: list[str] | None = field(default=None)
    flag: bool = field(default=False)


def test_argument_files_and_overrides(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("name: from-yaml\nrate: 1e-3\nfiles: [a.txt, b.txt]\nflag: true\n")
    (options,) = parse_recipe_args((Options,), [str(config), "--rate", "0.25"])
    assert (options.name, options.rate, options.files, options.flag) == ("from-yaml", 0.25, ["a.txt", "b.txt"], True)
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps({"rate": 2, "flag": False}))
    (options,) = parse_recipe_args((Options,), [str(as_json)])
    assert (options.rate, options.flag) == (2.0, False)


@pytest.mark.parametrize(
    "name, content, error, fragment",
    [
        ("empty.yaml", "", ValueError, "holds no arguments"),
        ("list.yaml", "- a\n- b\n", ValueError, "holds no arguments"),
        ("syntax.yaml", "name: x\nrate: [1, 2\n", ValueError, "syntax.yaml:3: not valid YAML"),
        ("damaged.json", '{"rate": ', ValueError, "damaged.json: not valid JSON"),
        ("absent.yaml", None, FileNotFoundError, "absent.yaml does not exist"),
    ],
)
def test_bad_argument_files_are_one_line(name, content, error, fragment, tmp_path):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(error) as info:
        parse_recipe_args((Options,), [str(path)])
    assert fragment in str(info.value)


def test_wrong_values_in_an_argument_file_get_the_command_lines_checks(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text("rate: fast\n")
    with pytest.raises(SystemExit) as info:  # argparse: usage and the error, exit status 2
        parse_recipe_args((Options,), [str(path)])
    assert info.value.code == 2 and "argument --rate: invalid float value: 'fast'" in capsys.readouterr().err
    path.write_text("unknown_key: 1\n")
    with pytest.raises(ValueError, match=r"Unknown argument\(s\) --unknown_key 1: `--help` lists"):
        parse_recipe_args((Options,), [str(path)])


# ------------------------------------------------------------------------------------------------ one line


@pytest.mark.parametrize(
    "error",
    [
        ValueError("a bad value"),
        KeyError("Unknown task 'x'"),
        NotADirectoryError("--output_dir x is a file"),
        PermissionError("not writable"),
        TrainingError("Training stopped"),
    ],
)
def test_run_recipe_prints_one_line_and_exits_2(error, capsys, monkeypatch):
    monkeypatch.delenv("HF_GPT1_TRACEBACK", raising=False)

    def main():
        raise error

    with pytest.raises(SystemExit) as info:
        run_recipe(main)
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {error.args[0]}" and "HF_GPT1_TRACEBACK=1" in err[1]
    monkeypatch.setenv("HF_GPT1_TRACEBACK", "1")
    with pytest.raises(type(error)):
        run_recipe(main)
