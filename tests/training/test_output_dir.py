# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The output folder of a run (hf_gpt1.training.run_folder): the checks, the claim, and the lock that keeps two runs
out of one folder (and is taken over from a dead run)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from hf_gpt1.training import run_folder
from hf_gpt1.training.arguments import RecipeTrainingArguments
from hf_gpt1.training.run_folder import LOCK_FILE, RUN_FILE, OutputDirLock, check_output_dir, claimed
from tests.utils import (
    COMMON,
    REPO_ROOT,
    _rte_jsonl,
    _same_size_and_time,
    fail_writes_to,
    predict_args,
    run_command,
)

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
        run_folder.os, "access", lambda path, mode: False
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
from hf_gpt1.training.run_folder import OutputDirLock
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


def test_resume_after_the_train_file_changed_is_refused_naming_the_file(tiny, tmp_path, capsys):
    data = tmp_path / "train.jsonl"
    data.write_text(_rte_jsonl(["entailment", "not_entailment"] * 8))
    argv = [
        "--task", "rte", "--model_name_or_path", str(tiny), "--train_file", str(data),
        "--output_dir", str(tmp_path / "run"), "--eval_strategy", "no", "--do_predict", "false",
        "--per_device_train_batch_size", "8", "--max_seq_length", "64", "--save_strategy", "steps",
        "--save_steps", "2", *COMMON,
    ]  # fmt: skip
    run_command(capsys, "glue", *argv).results()
    data.write_text(_rte_jsonl(["not_entailment", "entailment"] * 20))  # 16 -> 40 rows, labels flipped
    error = run_command(capsys, "glue", *map(str, [*argv, "--resume"])).error
    assert f"--train_file {data} has changed" in error, error


def test_a_lock_file_that_is_a_link_is_never_followed(rte_model, glue_slice, tmp_path, capsys):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    out = tmp_path / "predict"
    out.mkdir()
    (out / ".hf_gpt1.lock").symlink_to(outside)
    assert run_command(capsys, "glue", *map(str, predict_args(rte_model, glue_slice, out))).error
    assert outside.read_text() == "keep me"


def test_resume_never_writes_through_a_link_out_of_the_folder(rte_model, glue_slice, tmp_path, capsys):
    out = tmp_path / "predict"
    run_command(capsys, "glue", *predict_args(rte_model, glue_slice, out)).results()
    outside = tmp_path / "precious.tsv"
    outside.write_text("keep me")
    (out / "RTE.tsv").unlink()
    (out / "RTE.tsv").symlink_to(outside)
    resumed = run_command(capsys, "glue", *predict_args(rte_model, glue_slice, out, "--resume"))
    if resumed.code:  # refused: then for the link
        assert "symbolic link" in resumed.error
    assert outside.read_text() == "keep me"


def test_overwrite_never_deletes_the_runs_own_inputs(tiny, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    shutil.copytree(tiny, out / "model")
    train = out / "train.jsonl"
    train.write_text(_rte_jsonl(["entailment", "not_entailment"] * 8))
    (out / "notes.txt").write_text("an old run's file")
    argv = [
        "--task", "rte", "--model_name_or_path", str(out / "model"), "--train_file", str(train),
        "--output_dir", str(out), "--overwrite_output_dir", "--eval_strategy", "no", "--do_predict", "false",
        *COMMON,
    ]  # fmt: skip
    error = run_command(capsys, "glue", *map(str, argv)).error
    assert "--overwrite_output_dir would delete" in error and "inside --output_dir" in error, error
    assert train.is_file() and (out / "model" / "model.safetensors").is_file() and (out / "notes.txt").is_file()


def test_a_full_disk_at_the_claim_is_one_line_naming_the_file(tiny, rte_files, tmp_path, monkeypatch, capsys):
    from tests.utils import glue_argv

    train, dev = rte_files
    fail_writes_to(monkeypatch, "hf_gpt1_run.json", OSError(errno.ENOSPC, "No space left on device"))
    error = run_command(capsys, "glue", *map(str, glue_argv(tiny, train, dev, tmp_path / "out"))).error
    assert "Could not write" in error and "hf_gpt1_run.json: no space is left on its disk" in error, error


def test_resume_after_the_corpus_changed_is_refused_naming_it(tiny_lm, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the cat sat on mat number {i} and ran home\n" for i in range(300)))
    argv = [
        "--train_files", str(corpus), "--tokenizer_name_or_path", str(tiny_lm), "--output_dir", str(tmp_path / "run"),
        "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32", "--max_steps", "2",
        "--per_device_train_batch_size", "4", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "2",
        *COMMON,
    ]  # fmt: skip
    run_command(capsys, "pretrain", *argv).results()
    _same_size_and_time(corpus, corpus.read_text().replace("cat", "dog"))
    error = run_command(capsys, "pretrain", *map(str, [*argv, "--resume"])).error
    assert f"--train_files {corpus} has changed" in error, error
