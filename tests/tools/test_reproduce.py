# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 reproduce report` on canned runs: the rows beside the paper's numbers, the comparability rules, Table 5's
averages (MNLI the mean of matched and mismatched), and the golden REPORT.md."""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.utils import CommandResult, run_command

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "reproduce_report.md"


MODEL, DATA = "openai-community/openai-gpt@0123abc", "d" * 64


def _plan(root: Path, task: str, condition: str, seed: int) -> list[str]:
    """Adds a run to the plan in `root/plan.json` (as `reproduce run` writes it); returns its arguments."""
    path = root / "plan.json"
    plan = json.loads(path.read_text()) if path.is_file() else {"model": MODEL, "data": {}, "runs": []}
    argv = ["--task", task, "--seed", str(seed), "--condition-flags", condition]
    plan["data"][task] = DATA
    plan["runs"].append({"task": task, "condition": condition, "seed": seed, "argv": argv})
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan))
    return argv


def _run(root: Path, task: str, condition: str, seed: int, **splits: dict[str, float]) -> Path:
    """A planned run that finished, with the evidence `reproduce run` keeps: its results (and the rows it read), and
    its record, written when it finished."""
    argv = _plan(root, task, condition, seed)
    folder = root / task / condition / f"seed-{seed}"
    folder.mkdir(parents=True)
    results = {split: {f"eval_{split}_{k}": v for k, v in metrics.items()} for split, metrics in splits.items()}
    (folder / "all_results.json").write_text(json.dumps({**results, "data_sha256": DATA}))
    record = {"argv": argv, "data_sha256": DATA, "model": MODEL, "inputs": {}, "finished": True}
    (folder.parent / f"seed-{seed}.argv.json").write_text(json.dumps(record))
    return folder


def _report(capsys, root: Path, *argv: object) -> dict:
    """`hf-gpt1 reproduce report <argv>` on the runs in `root`, finished: what it wrote there (`results.json`: the
    model, the data, the rows and the averages), read as a user's tools read it."""
    reported = run_command(capsys, "reproduce", "report", *argv)
    assert reported.code == 0, reported.stderr[-3000:]
    return json.loads((root / "results.json").read_text())


def _packed(capsys, root: Path, *argv: object) -> tuple[dict, str]:
    """`hf-gpt1 reproduce submit-pack --output_dir root <argv>`, finished: the record it wrote beside the zip
    (`glue_submission.json`: each file's task, seed and run, and the files not packed), and what it printed."""
    packing = run_command(capsys, "reproduce", "submit-pack", "--output_dir", root, *argv)
    assert packing.code == 0, packing.stderr[-3000:]
    return json.loads((root / "glue_submission.json").read_text()), packing.stdout


def _states(plan: CommandResult) -> list[str]:
    """The runs' states as `hf-gpt1 reproduce plan` prints them, a line a run: `  <state> hf-gpt1 <recipe> ...`."""
    assert plan.code == 0, plan.stderr[-3000:]
    return re.findall(r"^  (\S+) +hf-gpt1 (?:glue|multiple-choice) ", plan.stdout, flags=re.MULTILINE)


def _said(queue: CommandResult, what: str) -> list[str]:
    """The runs `hf-gpt1 reproduce run` said `what` of (`running`, `continuing`, `reused`), in the order it said it,
    as its lines name them: `<task> <condition> seed <s>`."""
    return re.findall(rf"^\[\d+/\d+\] (\S+ \S+ seed \d+): {what}\b", queue.stdout, flags=re.MULTILINE)


@pytest.fixture
def runs(tmp_path) -> Path:
    root = tmp_path / "reproduce"
    for seed, accuracy in ((0, 0.60), (1, 0.62), (2, 0.50)):
        _run(root, "rte", "full", seed, validation={"accuracy": accuracy})
    _run(root, "snli", "full", 0, test={"accuracy": 0.88})
    _run(root, "race", "full", 0, test={"accuracy": 0.55, "accuracy_middle": 0.60, "accuracy_high": 0.53})
    _run(root, "qnli", "full", 0, validation={"accuracy": 0.87})
    glue = {"cola": ("matthews_correlation", 0.40), "sst2": ("accuracy", 0.90), "mrpc": ("f1", 0.80),
            "stsb": ("pearson", 0.81), "qqp": ("f1", 0.70)}  # fmt: skip
    for task, (metric, value) in glue.items():
        _run(root, task, "full", 0, validation={metric: value})
    _run(root, "mnli", "full", 0, validation_matched={"accuracy": 0.81}, validation_mismatched={"accuracy": 0.80})
    _run(root, "rte", "no_aux_lm", 0, validation={"accuracy": 0.55})
    (root / "rte" / "full" / "seed-3").mkdir()  # an unfinished run, not planned: not counted
    return root


def test_report_rows_follow_the_comparability_rules(runs, capsys):
    reported = run_command(capsys, "reproduce", "report", "--output_dir", runs)
    assert reported.code == 0, reported.stderr[-3000:]
    report = json.loads((runs / "results.json").read_text())  # what it wrote, as a user's tools read it
    rows = {(r["table"], r["column"], r["condition"]): r for r in report["rows"]}
    rte = rows[(2, "RTE", "full")]
    assert rte["seeds"] == {"0": 60.0, "1": 62.0, "2": 50.0} and rte["median"] == 60.0 and rte["paper"] == 56.0
    assert rte["split"] == "validation" and not rte["like_for_like"] and rte["delta"] is None
    assert "GLUE test server" in rte["note"]
    snli = rows[(2, "SNLI", "full")]
    assert snli["like_for_like"] and snli["delta"] == pytest.approx(88.0 - 89.9) and snli["split"] == "test"
    qnli = rows[(2, "QNLI", "full")]
    assert "dataset changed since the paper" in qnli["note"] and qnli["delta"] is None
    assert rows[(3, "RACE-m", "full")]["median"] == 60.0 and rows[(3, "RACE-h", "full")]["delta"] == pytest.approx(
        -4.4
    )
    assert rows[(2, "MNLI-m", "full")]["median"] == 81.0 and rows[(2, "MNLI-mm", "full")]["median"] == 80.0
    assert rows[(5, "MNLI (acc)", "full")]["median"] == 80.5  # the mean of matched and mismatched
    assert rows[(3, "Story Cloze", "full")]["median"] is None  # no run
    averages = report["averages"]
    assert averages["full"] == {
        "paper": 74.7,
        "ours": pytest.approx((40 + 90 + 80 + 81 + 70 + 80.5 + 87 + 60) / 8, abs=0.005),
        "test_server": None,
        "tasks": 8,
    }
    assert averages["no_aux_lm"] == {"paper": 75.0, "ours": None, "test_server": None, "tasks": 1}
    assert set(averages) == {"full", "no_pretraining", "no_aux_lm"}
    assert (runs / "REPORT.md").read_text() == GOLDEN.read_text() and reported.stdout == GOLDEN.read_text()


@pytest.mark.parametrize("failure", [errno.EROFS, errno.EACCES, errno.EIO])
def test_report_of_a_read_only_copy_prints_the_table_and_says_what_it_did_not_write(
    runs, capsys, monkeypatch, failure
):
    """The runs are only in that folder: the table is printed, then one line saying its files are not saved."""
    import os

    from hf_gpt1.tools import reproduce_report

    def refuse(path, *args, **kwargs):
        raise (PermissionError if failure == errno.EACCES else OSError)(failure, os.strerror(failure), str(path))

    monkeypatch.setattr(reproduce_report, "write_json_atomic", refuse)
    reported = run_command(capsys, "reproduce", "report", "--output_dir", runs)
    if failure == errno.EIO:  # a failing disk is no read-only copy: the error as it is, the command's one line
        assert "Input/output error" in reported.error
        return
    assert reported.code == 1 and reported.stdout == GOLDEN.read_text()
    assert (
        f"error: the table above is not saved: results.json and REPORT.md could not be written in {runs}"
        in reported.stderr
    )


SERVER = {"CoLA": 41.0, "SST-2": 90.5, "MRPC": "81.0/74.2", "STS-B": "80.0/79.1", "QQP": "69.0/88.0",
          "MNLI-m": 80.2, "MNLI-mm": 79.6, "QNLI": 86.0, "RTE": 53.1}  # fmt: skip


def test_glue_test_server_scores_fill_the_papers_columns(runs, tmp_path, capsys):
    """The leaderboard's cells as the GLUE server shows them: the paper's GLUE columns then compare like for like
    (but QNLI, whose dataset changed), and Table 5's average is taken over the server's numbers."""
    scores = tmp_path / "server.json"
    scores.write_text(json.dumps(SERVER))
    report = _report(capsys, runs, "--output_dir", runs, "--glue_test_results", scores)
    rows = {(r["table"], r["column"], r["condition"]): r for r in report["rows"]}
    rte = rows[(2, "RTE", "full")]
    assert rte["test_server"] == 53.1 and rte["like_for_like"] and rte["delta"] == pytest.approx(53.1 - 56.0)
    assert rte["median"] == 60.0 and rte["note"] == ""  # the dev median stays beside it
    assert rows[(4, "MRPC (F1)", "full")]["test_server"] == 81.0  # F1, the cell's first number
    assert rows[(4, "STSB (pc)", "full")]["test_server"] == 80.0  # Pearson
    assert rows[(5, "MNLI (acc)", "full")]["test_server"] == pytest.approx(79.9)  # mean of matched, mismatched
    qnli = rows[(2, "QNLI", "full")]
    assert qnli["test_server"] == 86.0 and not qnli["like_for_like"] and qnli["delta"] is None
    assert rows[(2, "SNLI", "full")]["test_server"] is None  # not a GLUE column: its test split is ours
    mean = (41.0 + 90.5 + 81.0 + 80.0 + 69.0 + 79.9 + 86.0 + 53.1) / 8
    assert report["averages"]["full"]["test_server"] == pytest.approx(mean, abs=0.01)
    assert report["averages"]["no_aux_lm"]["test_server"] is None
    # one submission per condition
    scores.write_text(json.dumps({"no_aux_lm": {"RTE": 50.0}}))
    rows = _report(capsys, runs, "--output_dir", runs, "--glue_test_results", scores)["rows"]
    by_condition = {(r["column"], r["condition"]): r["test_server"] for r in rows if r["table"] == 5}
    assert by_condition[("RTE (acc)", "no_aux_lm")] == 50.0 and by_condition[("RTE (acc)", "full")] is None


@pytest.mark.parametrize(
    "content, message",
    [
        ({"RTE-test": 50}, "'RTE-test' is no GLUE leaderboard column; use CoLA, SST-2"),
        ({"MRPC": "high"}, "MRPC is 'high'; give the leaderboard's cell"),
        ([56.0], "give a JSON object of leaderboard columns"),
    ],
)
def test_glue_test_results_that_cannot_be_read_are_one_line(runs, tmp_path, content, message, capsys):
    scores = tmp_path / "server.json"
    scores.write_text(json.dumps(content))
    error = run_command(capsys, "reproduce", "report", "--output_dir", runs, "--glue_test_results", scores).error
    assert message in error, error
    assert not (runs / "results.json").exists()


def _predicted(root: Path, task: str, seed: int, score: float, data_dir: Path) -> None:
    """A finished run of `task` that predicted its GLUE test split(s) of `data_dir` (a label per row)."""
    from hf_gpt1.data.files import load_glue_tsv
    from hf_gpt1.data.tasks import get_task
    from hf_gpt1.training.run_folder import RUN_FILE

    spec = get_task(task)
    split = spec.eval_splits[0]
    folder = _run(root, task, "full", seed, **{split: {spec.main_metric: score}})
    (folder / RUN_FILE).write_text(json.dumps({"data": {"data_dir": str(data_dir)}}))
    for test_split, name in spec.glue_tsv.submission_files.items():
        rows = load_glue_tsv(data_dir, spec, test_split)
        label = "2.500" if spec.is_regression else spec.label_names[seed % len(spec.label_names)]
        lines = [f"{i}\t{label}" for i in (rows["idx"] if "idx" in rows.column_names else range(rows.num_rows))]
        (folder / name).write_text("\n".join(["index\tprediction", *lines]) + "\n")


def test_submit_pack_zips_each_tasks_median_run(glue_slice, tmp_path, capsys):
    import zipfile

    root = tmp_path / "reproduce"
    for seed, score in ((0, 0.60), (1, 0.55), (2, 0.58)):
        _predicted(root, "rte", seed, score, glue_slice)
    _predicted(root, "stsb", 0, 0.8, glue_slice)
    error = run_command(capsys, "reproduce", "submit-pack", "--output_dir", root).error
    assert re.search(r"writes CoLA.tsv, SST-2.tsv.*all 11 files.*--tasks cola sst2 mrpc", error), error
    assert not (root / "glue_submission.zip").exists()
    packed, printed = _packed(capsys, root, "--partial")
    with zipfile.ZipFile(root / "glue_submission.zip") as archive:
        assert sorted(archive.namelist()) == ["RTE.tsv", "STS-B.tsv"]
        assert archive.read("RTE.tsv").decode().endswith("\tentailment\n")  # seed 2, the median of 0.55, 0.58, 0.60
    assert packed["files"]["RTE.tsv"]["seed"] == 2 and "WNLI.tsv" in packed["missing"]
    assert packed["files"]["STS-B.tsv"]["task"] == "stsb"
    assert _packed(capsys, root, "--partial", "--seeds", "1")[0]["files"]["RTE.tsv"]["seed"] == 1
    assert "glue_submission.zip: 2 files for the GLUE server (gluebenchmark.com); not packed: CoLA.tsv" in printed


def _cut(lines):
    return lines[: len(lines) // 2] + [lines[len(lines) // 2][:3]]  # half the rows, the last one broken


def _swapped(lines):
    return [lines[0], lines[2], lines[1], *lines[3:]]


def _relabelled(lines):
    return [*lines[:-1], lines[-1].replace("entailment", "yes")]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (_cut, r"RTE.tsv: 15 predictions for the 30 rows of rte's test split"),
        (_swapped, r"RTE.tsv:2: expected the row of index 0, got '1\\tentailment'"),
        (_relabelled, r"RTE.tsv:31: 'yes' is not one of \['entailment', 'not_entailment'\]"),
        (lambda lines: ["id\tlabel", *lines[1:]], r"RTE.tsv:1: not a GLUE submission"),
    ],
)
def test_submit_pack_refuses_a_file_that_does_not_match_its_test_split(glue_slice, tmp_path, edit, problem, capsys):
    """A prediction file cut in half, reordered, with a label the task has not, or not a submission: the GLUE server
    scores a team at most once a day, so the zip is refused naming the file and line, and not written."""
    root = tmp_path / "reproduce"
    _predicted(root, "rte", 0, 0.6, glue_slice)
    path = root / "rte" / "full" / "seed-0" / "RTE.tsv"
    path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")
    error = run_command(capsys, "reproduce", "submit-pack", "--output_dir", root, "--partial").error
    assert re.search(problem + ".*run .*seed-0 again", error), error
    assert not (root / "glue_submission.zip").exists()


def test_submit_pack_clips_a_regression_heads_scores_to_the_servers_range_and_says_how_many(glue_slice, tmp_path,
                                                                                          capsys):  # fmt: skip
    """A linear head's STS-B outputs fall outside [0, 5]: the run's own file is packed, its scores clipped to the
    range the server takes, and the count is said (the runs now write them clipped; older files are clipped here)."""
    import zipfile

    root = tmp_path / "reproduce"
    _predicted(root, "stsb", 0, 0.8, glue_slice)
    path = root / "stsb" / "full" / "seed-0" / "STS-B.tsv"
    lines = path.read_text().splitlines()
    lines[1], lines[2] = lines[1].replace("2.500", "5.412"), lines[2].replace("2.500", "-0.300")
    path.write_text("\n".join(lines) + "\n")
    record, printed = _packed(capsys, root, "--partial")
    assert record["files"]["STS-B.tsv"]["clipped_to_label_range"] == 2
    assert "2 scores outside [0, 5] packed as the nearest bound" in printed
    packed = zipfile.ZipFile(root / "glue_submission.zip").read("STS-B.tsv").decode().splitlines()
    assert packed[1].endswith("\t5.000") and packed[2].endswith("\t0.000") and packed[3].endswith("\t2.500")


@pytest.mark.parametrize(
    "batch, refused",
    [(["--per_device_train_batch_size", "16"], True), (["--gradient_accumulation_steps", "3"], True),
     (["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "4"], False),
     (["--gradient_accumulation_steps", "4"], False)],
)  # fmt: skip
def test_every_run_trains_at_the_papers_batch_of_32(glue_slice, tmp_path, batch, refused, capsys):
    argv = ["plan", "--tasks", "rte", "--conditions", "full", "--model_name_or_path", str(tmp_path),
            "--data_dir", str(glue_slice), "--output_dir", str(tmp_path / "out"), *batch]  # fmt: skip
    if refused:
        error = run_command(capsys, "reproduce", *argv).error
        assert "is not the paper's batch of 32 examples" in error, error
    else:
        from hf_gpt1.tools.reproduce import batch_flags

        assert batch_flags(batch) in ([], ["--per_device_train_batch_size", "8"])


def test_report_of_some_tables_and_bad_arguments(runs, capsys):
    rows = _report(capsys, runs, "--output_dir", runs, "--tables", "3")["rows"]
    assert {r["table"] for r in rows} == {3} and len(rows) == 4
    error = run_command(capsys, "reproduce", "report", "--output_dir", runs, "--tables", "6").error
    assert "--tables 6: the paper's result tables are 2, 3, 4 and 5" in error, error


@pytest.mark.slow  # the full tier (scripts/test.sh --all): the queue end to end
def test_run_executes_the_matrix_then_reuses_it_and_continues_what_is_missing(tiny_lm, glue_slice, tmp_path, capsys):
    """The Done-when command of issue 30 on CPU: three GLUE tasks × two seeds from a tiny model, in minutes; then
    again (all reused); then with one run's results gone (only that one runs again, with --resume)."""
    from tests.utils import COMMON

    out = tmp_path / "reproduce"
    argv = [
        "run", "--tasks", "rte", "stsb", "cola", "--seeds", "0", "1", "--conditions", "full",
        "--model_name_or_path", str(tiny_lm), "--data_dir", str(glue_slice), "--output_dir", str(out),
        "--max_train_samples", "48", "--max_eval_samples", "16", "--num_train_epochs", "1", "--do_predict", "false",
        *COMMON,
    ]  # fmt: skip
    first = run_command(capsys, "reproduce", *argv)  # what it did, read from what it printed and wrote
    assert first.code == 0 and "6 ran, 0 reused, 0 failed, 0 not started" in first.stdout, first.stdout[-3000:]
    results = json.loads((out / "results.json").read_text())
    rows = {(r["table"], r["column"]): r for r in results["rows"] if r["condition"] == "full"}
    assert set(rows[(2, "RTE")]["seeds"]) == {"0", "1"} and rows[(4, "STSB (pc)")]["median"] is not None
    assert "| 2 | RTE | full | 56.0 |" in first.stdout
    assert _states(run_command(capsys, "reproduce", "plan", *argv[1:])) == ["done"] * 6
    reused = run_command(capsys, "reproduce", *argv)
    assert reused.code == 0 and "0 ran, 6 reused, 0 failed" in reused.stdout, reused.stdout[-3000:]
    assert _said(reused, "reused") == _said(first, "running")
    (out / "cola" / "full" / "seed-1" / "all_results.json").unlink()  # as if stopped before it finished
    again = run_command(capsys, "reproduce", *argv)
    assert again.code == 0 and "1 ran, 5 reused, 0 failed" in again.stdout, again.stdout[-3000:]
    started = re.findall(r": (?:running|continuing) -> (.+)$", again.stdout, flags=re.MULTILINE)
    assert started == [str(out / "cola" / "full" / "seed-1")]
    assert "Resuming from" in (out / "cola" / "full" / "seed-1.log").read_text()


def test_a_run_folder_of_other_arguments_is_reported_and_the_queue_goes_on(tiny_lm, glue_slice, tmp_path, capsys):
    """Two workers on the CPU (`--devices cpu cpu`): one finds a folder of other arguments, the other runs."""
    from tests.utils import COMMON

    out = tmp_path / "reproduce"
    taken = out / "rte" / "full" / "seed-0"
    taken.mkdir(parents=True)
    (taken / "all_results.json").write_text("{}")  # a finished run of other arguments: never overwritten
    (taken.parent / "seed-0.argv.json").write_text(json.dumps(["--task", "rte", "--seed", "9"]))
    argv = [
        "run", "--tasks", "rte", "--seeds", "0", "1", "--conditions", "full", "--model_name_or_path", str(tiny_lm),
        "--data_dir", str(glue_slice), "--output_dir", str(out), "--max_train_samples", "48",
        "--devices", "cpu", "cpu",
        "--max_eval_samples", "16", "--num_train_epochs", "1", "--do_predict", "false", *COMMON,
    ]  # fmt: skip
    # a run not done: the command fails, after the others ran
    assert run_command(capsys, "reproduce", *argv).code == 1
    failed = json.loads((out / "failures.json").read_text())
    assert [f["folder"] for f in failed] == [str(taken)] and "holds a run with other" in failed[0]["error"]
    assert (out / "rte" / "full" / "seed-1" / "all_results.json").is_file()


def test_story_cloze_without_its_files_is_one_line_before_any_run(tmp_path, capsys):
    error = run_command(capsys, "reproduce", "plan", "--tables", "3", "--output_dir", tmp_path).error
    assert "story_cloze has no Hub copy with its columns: pass --story_cloze_dir" in error, error
    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "cloze_test_val__spring2016.csv").write_text("InputStoryid\n")
    error = run_command(
        capsys, "reproduce", "plan", "--tables", "3", "--story_cloze_dir", tmp_path / "sc", "--output_dir", tmp_path
    ).error
    assert re.search("--story_cloze_dir .*sc has no cloze_test_test__spring2016.csv: put the two", error), error


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a signal to a real queue
def test_ctrl_c_stops_the_queue_and_the_same_command_continues(tiny_lm, glue_slice, tmp_path, capsys):
    """SIGINT to the driver (Ctrl-C, `kill -INT`) reaches its current run through the driver: the run checkpoints and
    stops within seconds, the queue stops, and the same command then continues the interrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.utils import COMMON

    out = tmp_path / "reproduce"
    argv = [
        "reproduce", "run", "--tasks", "rte", "--seeds", "0", "1", "--conditions", "full", "--model_name_or_path",
        str(tiny_lm), "--data_dir", str(glue_slice), "--output_dir", str(out), "--max_train_samples", "96",
        "--max_eval_samples", "16", "--num_train_epochs", "30", "--save_strategy", "steps", "--save_steps", "1",
        "--eval_strategy", "no", "--do_predict", "false", *COMMON,
    ]  # fmt: skip
    # As a terminal starts it: Ctrl-C raises KeyboardInterrupt (a process that inherits SIGINT ignored, as a
    # pytest-xdist worker's children do, would never see it).
    start = "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); " \
            "runpy.run_module('hf_gpt1', run_name='__main__')"  # fmt: skip
    driver = subprocess.Popen(
        [sys.executable, "-c", start, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    first = out / "rte" / "full" / "seed-0" / "checkpoint-1" / "checkpoint_complete.json"
    deadline = time.time() + 300  # a hang guard: the run is training once its first checkpoint is complete
    while not first.is_file() and time.time() < deadline:
        time.sleep(0.2)
    os.kill(driver.pid, signal.SIGINT)  # the driver alone (kill -INT, a supervisor); a terminal's Ctrl-C is the same
    signalled = time.time()
    printed = driver.communicate(timeout=120)[0]
    assert time.time() - signalled < 30, printed  # the run got it from the driver: one step, a checkpoint, stopped
    assert driver.returncode != 0 and "[1/2] rte full seed 0: stopped" in printed
    assert "stopped; the same command continues where the queue stopped" in printed
    assert not (out / "rte" / "full" / "seed-1").exists()  # the queue stopped
    assert _states(run_command(capsys, "reproduce", "plan", *argv[2:])) == ["partial", "new"]


def test_a_glue_task_missing_from_data_dir_is_one_line_before_any_run(glue_slice, tmp_path, capsys):
    argv = ["run", "--tasks", "rte", "mrpc", "--data_dir", glue_slice, "--output_dir", tmp_path / "out"]
    error = run_command(capsys, "reproduce", *argv).error
    assert re.search(r"--data_dir .* has no MRPC/train.tsv: add the task's GLUE files, or drop mrpc", error), error
    assert not (tmp_path / "out").exists()


def test_a_finished_run_on_other_rows_is_not_reused(tmp_path):
    """The same arguments on rows that changed (a Hub copy revised since, a GLUE file replaced) are another run."""
    from hf_gpt1.tools.reproduce import PlannedRun, run_state
    from hf_gpt1.training.run_folder import RUN_FILE

    folder = tmp_path / "rte" / "full" / "seed-0"
    folder.mkdir(parents=True)
    (folder / "all_results.json").write_text("{}")
    (folder / RUN_FILE).write_text(json.dumps({"inputs": {}}))
    run = PlannedRun("rte", "full", 0, "glue", folder, ("--task", "rte"), data_sha256="a" * 64)
    record = folder.parent / "seed-0.argv.json"
    record.write_text(json.dumps({"argv": ["--task", "rte"], "data_sha256": "a" * 64}))
    assert run_state(run) == "done"
    record.write_text(json.dumps({"argv": ["--task", "rte"], "data_sha256": "b" * 64}))
    assert run_state(run) == "other"


def test_a_finished_run_is_reused_whatever_spelling_names_its_data(tmp_path, monkeypatch):
    """`--data_dir glue/`, `./glue` and `glue` are one folder: a finished run is reused under any of them, and a
    run's identity records the folder one way (so `--resume` is not refused for a spelling either)."""
    from hf_gpt1.tools.reproduce import PlannedRun, run_state
    from hf_gpt1.training.run_folder import RUN_FILE, run_identity

    monkeypatch.chdir(tmp_path)
    (tmp_path / "glue").mkdir()
    folder = tmp_path / "rte" / "full" / "seed-0"
    folder.mkdir(parents=True)
    (folder / "all_results.json").write_text("{}")
    (folder / RUN_FILE).write_text(json.dumps({"inputs": {}}))
    record = folder.parent / "seed-0.argv.json"
    record.write_text(json.dumps({"argv": ["--task", "rte", "--data_dir", "glue"], "data_sha256": "a" * 64}))
    for spelling in ("glue/", "./glue", str(tmp_path / "glue")):
        run = PlannedRun("rte", "full", 0, "glue", folder, ("--task", "rte", "--data_dir", spelling), "a" * 64)
        assert run_state(run) == "done", spelling

    @dataclass
    class Data:
        data_dir: str

    identities = [run_identity("glue", Data("m"), Data(spelling), 0, {"--data_dir": spelling})
                  for spelling in ("glue", "glue/", "./glue")]  # fmt: skip
    assert identities[0] == identities[1] == identities[2]


def _finished_without_its_driver(tmp_path: Path):
    """A run folder whose run finished (all_results.json, its identity) after its driver died: no evidence record
    says it finished, only the arguments the driver wrote before starting it."""
    from hf_gpt1.tools.reproduce import PlannedRun
    from hf_gpt1.training.run_folder import RUN_FILE

    root = tmp_path / "reproduce"
    folder = _run(root, "rte", "full", 0, validation={"accuracy": 0.6})
    (folder / RUN_FILE).write_text(json.dumps({"inputs": {}}))
    record = folder.parent / "seed-0.argv.json"
    argv = json.loads(record.read_text())["argv"]
    plan = json.loads((root / "plan.json").read_text())
    record.write_text(json.dumps({"argv": argv, "data_sha256": None}))
    run = PlannedRun("rte", "full", 0, "glue", folder, tuple(argv), None, plan["model"])
    return root, run


def test_a_run_that_finished_without_its_driver_is_recognised_as_finished(tmp_path, capsys):
    """The orphan of a killed driver finished: the next queue reuses it and writes its evidence, so the report
    counts it (before, the queue said "reused" and the report never counted it)."""
    import threading

    from hf_gpt1.tools.reproduce import _run_one
    from hf_gpt1.tools.reproduce_report import collect_runs

    root, run = _finished_without_its_driver(tmp_path)
    assert collect_runs(root)[("rte", "full")].excluded  # its record does not say it finished
    assert _run_one(run, "[1/1]", {}, {}, threading.Event()) == ("reused", str(run.folder))
    assert collect_runs(root)[("rte", "full")].counted.keys() == {0}


def test_the_queue_never_reuses_a_run_the_report_would_not_count(tmp_path, capsys):
    """ "reused" means counted: a finished run the report would exclude is a failure of the queue, with its reason."""
    import threading

    from hf_gpt1.tools.reproduce import _run_one

    root, run = _finished_without_its_driver(tmp_path)
    # planned on rows that digest to b…; the run read other rows (a Hub copy revised between the plan and its read)
    run = type(run)(**{**vars(run), "data_sha256": "b" * 64})
    record = run.folder.parent / "seed-0.argv.json"
    record.write_text(json.dumps({"argv": list(run.argv), "data_sha256": "b" * 64}))
    key, entry = _run_one(run, "[1/1]", {}, {}, threading.Event())
    assert key == "failed" and "trained on other rows" in entry["error"]
    assert "not reused: trained on other rows" in capsys.readouterr().out


def _hold(folder, seconds: float, driver: int | None):
    """A live process holding a run's folder for `seconds`: a run of the driver `driver` (None: started by hand)."""
    import os
    import subprocess
    import sys

    from hf_gpt1.process_control import DRIVER_PID

    env = {key: value for key, value in os.environ.items() if key != DRIVER_PID}
    if driver is not None:
        env[DRIVER_PID] = str(driver)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from hf_gpt1.training.run_folder import OutputDirLock\n"
                               f"OutputDirLock({str(folder)!r}).acquire(); print('held', flush=True); "
                               f"time.sleep({seconds})"], stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_the_queue_waits_for_a_live_run_of_an_earlier_driver(tmp_path, capsys):
    """A run still alive in its folder (its driver was killed; it is stopping): the queue waits for it, saying so and
    again while it waits, and never starts the same run, or the next one, beside it."""
    import subprocess
    import threading
    import time

    from hf_gpt1.tools.reproduce import _STOPPED, PlannedRun, _wait_for_live_run

    gone = subprocess.Popen(["true"])  # the earlier driver, killed
    gone.wait()
    folder = tmp_path / "rte" / "full" / "seed-0"
    holder = _hold(folder, 2, driver=gone.pid)
    run = PlannedRun("rte", "full", 0, "glue", folder, ())
    stopped = threading.Event()
    stopped.set()
    assert _wait_for_live_run(run, "[1/1]", stopped, poll_s=0.1) == _STOPPED  # the queue stopped meanwhile
    started = time.monotonic()
    assert _wait_for_live_run(run, "[1/1]", threading.Event(), poll_s=0.1, remind_s=0.5) is None
    assert holder.poll() is not None and time.monotonic() - started > 0.5  # it waited until the holder was gone
    printed = capsys.readouterr().out
    assert f"[1/1]: waiting: {folder} is held by a run of an earlier reproduce run (pid {holder.pid} on " in printed
    assert f"whose driver (pid {gone.pid}) is gone: it checkpoints and stops on its own" in printed
    assert "[1/1]: still waiting (" in printed  # never silent while it waits


def test_the_queue_does_not_wait_for_a_run_started_by_hand(tmp_path, capsys):
    """A run started by hand in a run's folder has no driver of ours and never stops on its own: the queue says so
    and goes on (it waited without limit, saying the run "stops on its own now that its driver is gone")."""
    import threading

    from hf_gpt1.tools.reproduce import PlannedRun, _run_one

    folder = tmp_path / "rte" / "full" / "seed-0"
    holder = _hold(folder, 60, driver=None)
    try:
        run = PlannedRun("rte", "full", 0, "glue", folder, ("--task", "rte"))
        key, entry = _run_one(run, "[1/1]", {}, {}, threading.Event())
    finally:
        holder.kill()
    assert key == "failed" and entry["error"].startswith(
        f"{folder} is held by a run started by hand (pid {holder.pid}"
    )
    assert "it has no driver of ours and does not stop on its own" in entry["error"]
    printed = capsys.readouterr().out
    assert "[1/1]: not run: " in printed and "waiting" not in printed and "driver is gone" not in printed


def test_a_run_killed_by_a_signal_is_said_so(tmp_path, capsys, monkeypatch):
    """The driver's line for a run that ended on a signal (the OOM killer's SIGKILL) names the signal."""
    import subprocess
    import sys
    import threading

    from hf_gpt1.tools import reproduce
    from hf_gpt1.tools.reproduce import PlannedRun, _run_one

    real = subprocess.Popen
    suicide = [sys.executable, "-c", "import os, signal; print('step 1', flush=True); os.kill(os.getpid(), 9)"]
    monkeypatch.setattr(reproduce.subprocess, "Popen", lambda argv, **kwargs: real(suicide, **kwargs))
    run = PlannedRun("rte", "full", 0, "glue", tmp_path / "rte" / "full" / "seed-0", ("--task", "rte"))
    key, entry = _run_one(run, "[1/1]", {}, {}, threading.Event())
    assert key == "failed" and entry["error"].startswith("killed by SIGKILL (signal 9); its log ends: step 1")


def test_reproduce_reads_an_argument_file_as_every_command_does(runs, tmp_path, capsys):
    """`hf-gpt1 reproduce report args.yaml --tables 3`: the file's arguments (lists as lists), the flags after it
    override them; names are exact (no prefix stands for a name)."""
    arguments = tmp_path / "reproduce.yaml"
    arguments.write_text(f"output_dir: {runs}\ntables: [2, 3]\n")
    assert {r["table"] for r in _report(capsys, runs, arguments)["rows"]} == {2, 3}
    assert {r["table"] for r in _report(capsys, runs, arguments, "--tables", "3")["rows"]} == {3}
    error = run_command(capsys, "reproduce", "report", "--output", runs).error  # a prefix of --output_dir is not it
    assert re.search(r"Unknown argument\(s\) .*--output \(did you mean --output_dir\?\)", error), error
    out = tmp_path / "out"
    seeded = run_command(capsys, "reproduce", "plan", "--tasks", "rte", "--seed", "3", "--output_dir", out)
    assert "--seed is set for each run by reproduce: choose the seeds with --seeds" in seeded.error  # every run's seed


def _value_refused(capsys, argv: list[str]) -> str:
    """`hf-gpt1 reproduce <argv>` refused by the parser for a value (argparse's exit status 2): its error line, the
    last of its usage message (argparse's `<prog>: error: ...`, which [`CommandResult.error`] does not read)."""
    refused = run_command(capsys, "reproduce", *argv)
    assert refused.code == 2, refused.stderr[-3000:]
    return refused.stderr.splitlines()[-1]


def test_a_comma_list_in_an_argument_file_is_refused_as_on_the_command_line(tmp_path, capsys):
    """`seeds: "0,1"` in a file is the command line's `--seeds 0,1`: a list is a YAML list (`seeds: [0, 1]`) or
    separate words since 0.6.0, and the comma form is the wrong value it is, before anything is written."""
    arguments = tmp_path / "reproduce.yaml"
    arguments.write_text(f"output_dir: {tmp_path / 'out'}\ntasks: rte\nseeds: '0,1'\n")
    error = _value_refused(capsys, ["plan", str(arguments)])
    assert error.endswith("reproduce.yaml: argument --seeds: invalid int value: '0,1'"), error
    assert not (tmp_path / "out").exists()


def test_reproduce_lists_are_lists_and_the_comma_form_is_refused(runs, tmp_path, capsys):
    """`--tables 2 3` (a list, as every command's lists); `--tables 2,3` (which warned until 0.6.0) is the wrong
    value it is; each action takes only its own arguments."""
    assert {r["table"] for r in _report(capsys, runs, "--output_dir", runs, "--tables", "2", "3")["rows"]} == {2, 3}
    error = _value_refused(capsys, ["report", "--output_dir", str(runs), "--tables", "2,3"])
    assert error.endswith("error: argument --tables: invalid int value: '2,3'"), error
    arguments = tmp_path / "old.yaml"
    arguments.write_text(f"output_dir: {runs}\ntables: '3'\n")
    assert {r["table"] for r in _report(capsys, runs, arguments)["rows"]} == {3}
    error = run_command(capsys, "reproduce", "report", "--output_dir", runs, "--partial").error  # submit-pack's
    assert re.search(r"Unknown argument\(s\) .*--partial", error), error
    error = run_command(capsys, "reproduce", "reprot", "--output_dir", runs).error
    assert "unknown action 'reprot'; the actions are plan, prefetch, run, report" in error, error


def _planned(tmp_path: Path):
    from hf_gpt1.tools.reproduce import PlannedRun

    folder = tmp_path / "rte" / "full" / "seed-0"
    return PlannedRun("rte", "full", 0, "glue", folder, ("--task", "rte"), data_sha256="a" * 64), folder


def test_an_attempt_that_left_nothing_to_continue_is_restarted(tmp_path, capsys):
    """An unreadable record, a stop before the first checkpoint, a failed start with other (mistaken) arguments: the
    next command runs it again from nothing, instead of refusing it for ever."""
    from hf_gpt1.tools.reproduce import run_state

    run, folder = _planned(tmp_path)
    assert run_state(run) == "new"
    record = folder.parent / "seed-0.argv.json"
    folder.mkdir(parents=True)
    record.write_text('{"argv": ["--task", "rt')  # cut short
    assert run_state(run) == "restart" and "unreadable" in capsys.readouterr().out
    (folder / "hf_gpt1_run.json").write_text("{}")  # started, stopped before any checkpoint
    record.write_text(json.dumps({"argv": ["--task", "rte"], "data_sha256": "a" * 64}))
    assert run_state(run) == "restart"
    record.write_text(json.dumps({"argv": ["--task", "rte", "--lerning_rate", "1"], "data_sha256": "a" * 64}))
    assert run_state(run) == "restart"  # a failed attempt with a misspelt argument: nothing kept
    (folder / "all_results.json").write_text("{}")
    assert run_state(run) == "other"  # a finished run of other arguments: kept, never overwritten


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--seeds", "0", "0", "1"], "--seeds: 0 given twice"),
        (["--tasks", "rte", "rte"], "--tasks: rte given twice"),
        (["--devices", "cuda:3"], "--devices cuda:3: this machine has"),
        (["--devices", "7"], "--devices 7: this machine has"),
        (["--tasks", "my_task.yaml"], "--tasks my_task.yaml: reproduce runs the paper's tasks by name"),
        # a dash spelling is the same argument: run-owned and batch checks see it (issue 45)
        (["--tasks", "rte", "--lm-coef", "0"], "--lm_coef is set for each run by reproduce"),
        (["--tasks", "rte", "--per-device-train-batch-size", "16"], "--per_device_train_batch_size 16 ×"),
        (["--tasks", "rte", "--output-dir=elsewhere"], "--output_dir and --output-dir are one argument"),
        (
            ["--tasks", "rte", "--partial"],
            "--partial is an argument of hf-gpt1 reproduce submit-pack, not of the runs",
        ),
        (["--tasks", "rte", "--lerning_rate", "1"], "--lerning_rate is no argument of hf-gpt1 glue"),
        (["--tasks", "rte", "--seeds", "4294967296"], "--seeds 4294967296: NumPy takes seeds below 2**32"),
        (
            ["--tasks", "rte", "--seed", "1", "--learning-rate", "1e-4", "--learning_rate", "2e-4"],
            "--learning-rate and --learning_rate are one argument, given twice",
        ),
    ],
)
def test_queue_arguments_are_checked_before_any_run(argv, problem, tmp_path, capsys):
    error = run_command(capsys, "reproduce", "run", "--output_dir", tmp_path / "out", *argv).error
    assert problem in error, error
    assert not (tmp_path / "out").exists()


def test_a_misspelt_argument_file_is_refused(tmp_path, capsys):
    error = run_command(capsys, "reproduce", "run", tmp_path / "reproduce.yml", "--output_dir", tmp_path / "out").error
    assert "reproduce.yml does not exist" in error, error


def test_a_second_driver_on_the_same_folder_is_refused(tmp_path):
    from hf_gpt1.tools.reproduce import driver_lock

    with driver_lock(tmp_path), pytest.raises(ValueError, match=r"in use by another hf-gpt1 reproduce run \(pid \d+"):
        with driver_lock(tmp_path):
            pass
    with driver_lock(tmp_path):  # released
        pass


def test_a_run_that_breaks_the_queue_is_a_failure_not_silence(tmp_path, monkeypatch):
    from hf_gpt1.tools import reproduce

    run, _ = _planned(tmp_path)

    def broken(*args, **kwargs):
        raise json.JSONDecodeError("Expecting value", "", 0)

    monkeypatch.setattr(reproduce, "_run_one", broken)
    outcome = reproduce.execute([run, run], tmp_path)
    assert len(outcome["failed"]) == 2 and "JSONDecodeError" in outcome["failed"][0]["error"]


# ----------------------------------------------------------------------------------------- a row's evidence


def test_each_row_counts_only_the_runs_of_its_plan_and_says_why_not(tmp_path, capsys):
    """Runs that are not what the row says are listed as excluded with the reason, never averaged: a dev file
    corrected after the run, another version of the rows, other arguments (1 epoch against 2), another model commit,
    a seed killed before it finished. A row short of its planned seeds is incomplete and gets no Δ."""
    from hf_gpt1.data.fingerprint import file_digest

    root = tmp_path / "reproduce"
    dev = tmp_path / "dev.tsv"
    dev.write_text("the dev file\n")
    for seed in range(6):
        folder = _run(root, "snli", "full", seed, test={"accuracy": 0.80 + seed / 100})
        record_path = folder.parent / f"seed-{seed}.argv.json"
        record = json.loads(record_path.read_text())
        if seed == 1:
            record["inputs"] = {"--data_dir": {str(dev): file_digest(dev)}}
        if seed == 2:
            results = json.loads((folder / "all_results.json").read_text())
            (folder / "all_results.json").write_text(json.dumps({**results, "data_sha256": "e" * 64}))
        if seed == 3:
            record["argv"] = [*record["argv"], "--num_train_epochs", "1"]
        if seed == 4:
            record["model"] = "openai-community/openai-gpt@fffffff"
        record_path.write_text(json.dumps(record))
    (root / "snli" / "full" / "seed-5" / "all_results.json").unlink()  # killed (out of memory) before it finished
    dev.write_text("the dev file, corrected\n")
    report = _report(capsys, root, "--output_dir", root, "--tables", "2")
    snli = next(r for r in report["rows"] if r["task"] == "snli")
    assert snli["seeds"] == {"0": 80.0} and snli["planned_seeds"] == 6 and not snli["complete"]
    assert snli["delta"] is None and not snli["like_for_like"] and snli["note"] == "incomplete: 1 of 6 seeds"
    why = snli["excluded"]
    assert why["1"].startswith(f"its input {dev} changed")
    assert why["2"].startswith("trained on other rows (data digest eeeeeeeeeeee, the plan: dddddddddddd)")
    assert why["3"] == "trained with other arguments (--num_train_epochs 1, the plan: 3)"
    assert why["4"].startswith("trained from another model (openai-community/openai-gpt@fffffff")
    assert why["5"] == "not finished (no all_results.json)"
    text = (root / "REPORT.md").read_text()
    assert "Model: openai-community/openai-gpt@0123abc. Data (SHA-256 of each task's rows): snli dddddddddddd" in text
    assert "| 80.0 (1 of 6) |" in text and "- snli full seed 5: not finished (no all_results.json)" in text
    assert report["model"] == MODEL and report["data"] == {"snli": DATA}


def _smoke_run(root: Path, task: str, **splits: dict[str, float]) -> None:
    """A finished run planned and run at a smoke budget (`--max_train_samples 48`)."""
    folder = _run(root, task, "full", 0, **splits)
    plan = json.loads((root / "plan.json").read_text())
    plan["runs"][0]["argv"] += ["--max_train_samples", "48"]
    (root / "plan.json").write_text(json.dumps(plan))
    record_path = folder.parent / "seed-0.argv.json"
    record_path.write_text(json.dumps({**json.loads(record_path.read_text()), "argv": plan["runs"][0]["argv"]}))


def test_a_smoke_run_is_incomplete_and_gets_no_delta(tmp_path, capsys):
    """--max_train_samples on the real test split: the row says so, with no Δ against the paper's number."""
    root = tmp_path / "reproduce"
    _smoke_run(root, "snli", test={"accuracy": 0.5})
    snli = next(r for r in _report(capsys, root, "--output_dir", root, "--tables", "2")["rows"] if r["task"] == "snli")
    assert snli["seeds"] == {"0": 50.0} and not snli["complete"] and snli["delta"] is None
    assert snli["note"] == "incomplete: smoke budget (--max_train_samples 48)"


def test_a_smoke_row_scored_by_the_glue_server_gets_no_delta_either(tmp_path, capsys):
    """The server's number for a smoke run's predictions follows the same rule as ours: an incomplete row gets no Δ
    and is not like for like, and Table 5's server average counts only complete rows."""
    root = tmp_path / "reproduce"
    _smoke_run(root, "rte", validation={"accuracy": 0.6})
    scores = tmp_path / "server.json"
    scores.write_text(json.dumps({"RTE": 53.1}))
    report = _report(capsys, root, "--output_dir", root, "--tables", "2", "5", "--glue_test_results", scores)
    rte = next(r for r in report["rows"] if r["table"] == 2 and r["column"] == "RTE")
    assert rte["test_server"] == 53.1 and not rte["complete"]
    assert rte["delta"] is None and rte["like_for_like"] is False
    assert report["averages"]["full"]["test_server"] is None


def test_a_folder_without_a_plan_gives_no_table(tmp_path, capsys):
    (tmp_path / "rte" / "full" / "seed-0").mkdir(parents=True)
    (tmp_path / "rte" / "full" / "seed-0" / "all_results.json").write_text("{}")
    error = run_command(capsys, "reproduce", "report", "--output_dir", tmp_path).error
    assert re.search(r"plan.json: no readable plan .* the table counts only the runs of a plan", error), error


def test_run_exits_1_when_a_planned_run_is_not_counted(tiny_lm, glue_slice, tmp_path, capsys, monkeypatch):
    """Every run ran or was reused, yet the report cannot count one (here: none left its evidence): the command says
    which and why, and exits 1, never 0 with a table short of its seeds."""
    from hf_gpt1.commands import reproduce as command

    def every_run_ran(runs, output_dir, devices):
        return {"reused": [], "ran": [str(run.folder) for run in runs], "failed": []}

    monkeypatch.setattr(command, "execute", every_run_ran)
    argv = ["run", "--tasks", "rte", "--conditions", "full", "--model_name_or_path", str(tiny_lm), "--data_dir",
            str(glue_slice), "--output_dir", str(tmp_path / "out")]  # fmt: skip
    stopped = run_command(capsys, "reproduce", *argv)
    assert stopped.code == 1
    assert "error: 1 planned run(s) are not counted by the report: rte full seed 0: not run" in stopped.stderr


# ----------------------------------------------------------------------------------------- the one parse


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--tasks", "rte", "-max_steps", "5"], "-max_steps (did you mean --max_steps?)"),
        (["--tasks", "rte", "--no_from_scratch"], "--no_from_scratch (did you mean --from_scratch?)"),
        (["--tasks", "rte", "--from-scratch=true"], "--from_scratch is set for each run by reproduce"),
        (["--tasks", "rte", "--seed=3"], "--seed is set for each run by reproduce"),
        (["--tasks", "rte", "--overwrite_output_dir=true"], "--overwrite_output_dir is set for each run by"),
        (["--tasks", "rte", "--dry-run"], "--dry_run is set for each run by reproduce: `hf-gpt1 reproduce plan`"),
        (
            ["--tasks", "rte", "--original_embedding_table", "true", "--no-original-embedding-table"],
            "--original_embedding_table and --no_original_embedding_table are one argument, given twice",
        ),
        (["--tasks", "rte", "--max_steps", "5", "--max_steps=6"], "--max_steps is given twice on the command"),
        (["--tasks", "rte", "--max_steps", "five"], "invalid int value: 'five'"),
    ],
)
def test_the_runs_arguments_are_parsed_by_their_parser_before_any_run(argv, problem, tmp_path, capsys):
    """What reproduce passes on to every run is parsed by the runs' own parser (issue 50): a word it would only half
    take (one dash, two values for one argument) and an owned argument in any spelling are refused in one line."""
    error = run_command(capsys, "reproduce", "run", "--output_dir", tmp_path / "out", *argv).error
    assert problem in error, error
    assert not (tmp_path / "out").exists()


def test_the_comma_form_is_refused_in_the_equals_form_too(runs, capsys):
    """`--tables=2,3` is `--tables 2,3` (issue 50): refused alike since 0.6.0; `--tables=3` is the list [3]."""
    error = _value_refused(capsys, ["report", "--output_dir", str(runs), "--tables=2,3"])
    assert error.endswith("error: argument --tables: invalid int value: '2,3'"), error
    assert {r["table"] for r in _report(capsys, runs, "--output_dir", runs, "--tables=3")["rows"]} == {3}


def test_the_smoke_budget_is_seen_in_any_spelling(tmp_path, capsys):
    """`--max_train_samples=32` is a smoke budget as `--max_train_samples 32` is: no Δ against the paper."""
    root = tmp_path / "reproduce"
    _smoke_run(root, "snli", test={"accuracy": 0.5})
    plan = json.loads((root / "plan.json").read_text())
    plan["runs"][0]["argv"][-2:] = ["--max_train_samples=32"]
    (root / "plan.json").write_text(json.dumps(plan))
    record_path = root / "snli" / "full" / "seed-0.argv.json"
    record_path.write_text(json.dumps({**json.loads(record_path.read_text()), "argv": plan["runs"][0]["argv"]}))
    snli = next(r for r in _report(capsys, root, "--output_dir", root, "--tables", "2")["rows"] if r["task"] == "snli")
    assert snli["delta"] is None and snli["note"] == "incomplete: smoke budget (--max_train_samples 32)"


@pytest.mark.parametrize(
    ("recorded", "planned"),
    [
        (["--max_train_samples=32"], ["--max_train_samples", "32"]),  # one argument, two spellings
        ([], ["--resume", "true"]),  # how a run starts, not what it is
        (["--no_original_embedding_table"], ["--original_embedding_table", "false"]),
    ],
)
def test_a_finished_run_is_recognised_by_its_parsed_arguments(recorded, planned, tmp_path):
    from hf_gpt1.tools.reproduce import PlannedRun, run_state
    from hf_gpt1.training.run_folder import RUN_FILE

    folder = tmp_path / "rte" / "full" / "seed-0"
    folder.mkdir(parents=True)
    (folder / "all_results.json").write_text("{}")
    (folder / RUN_FILE).write_text(json.dumps({"inputs": {}}))
    record = folder.parent / "seed-0.argv.json"
    record.write_text(json.dumps({"argv": ["--task", "rte", *recorded], "data_sha256": "a" * 64}))
    run = PlannedRun("rte", "full", 0, "glue", folder, ("--task", "rte", *planned), data_sha256="a" * 64)
    assert run_state(run) == "done"


def test_the_queue_continues_unfinished_runs_itself_whatever_resume_says(
    tiny_lm, glue_slice, tmp_path, monkeypatch, capsys
):
    """`--resume true` given to the queue is what it does anyway: no run is given it twice, no finished run is "other
    arguments"; `--seeds 0 1` plans both seeds."""
    from hf_gpt1.commands import reproduce as command

    planned = []
    monkeypatch.setattr(command, "execute", lambda runs, output_dir, devices: planned.extend(runs) or {
        "reused": [], "ran": [], "failed": []})  # fmt: skip
    argv = ["run", "--tasks", "rte", "--conditions", "full", "--model_name_or_path", str(tiny_lm), "--data_dir",
            str(glue_slice), "--output_dir", str(tmp_path / "out"), "--seeds", "0", "1", "--resume", "true",
            "--max_train_samples=32"]  # fmt: skip
    assert run_command(capsys, "reproduce", *argv).code == 1  # nothing ran (execute is replaced): incomplete
    assert [run.seed for run in planned] == [0, 1]
    assert all("--resume" not in run.argv for run in planned)


def test_the_same_matrix_from_another_working_folder_is_the_same_runs(glue_slice, tmp_path, monkeypatch):
    """Relative paths given from another working folder name the same data, model and runs (issue 50, section 6):
    the finished run is reused, not "other arguments". Paths are recorded as what they name (absolute): a spelling
    is resolved where it was given, never where a record is read again."""
    import shutil

    from hf_gpt1.data.tasks import get_task
    from hf_gpt1.tools.reproduce import _write_evidence, plan_runs, resolve_model, run_state, task_data
    from hf_gpt1.tools.reproduce_report import run_evidence_problem
    from hf_gpt1.training.run_folder import RUN_FILE

    project = tmp_path / "project"
    (project / "elsewhere").mkdir(parents=True)
    shutil.copytree(glue_slice, project / "glue")
    (project / "model").mkdir()

    def planned(cwd: Path, prefix: str):
        monkeypatch.chdir(cwd)
        model = resolve_model(f"{prefix}model")[1]
        data = [task_data(get_task("rte"), f"{prefix}glue")]
        (run,) = plan_runs(data, ["full"], [0], f"{prefix}runs", model, ["--max_train_samples", "32"])
        return type(run)(**{**vars(run), "model": model})

    run = planned(project, "")
    run.folder.mkdir(parents=True)
    (run.folder / "all_results.json").write_text("{}")
    (run.folder / RUN_FILE).write_text(json.dumps({"inputs": {}}))
    _write_evidence(run)  # what the queue records once the run finished
    again = planned(project / "elsewhere", "../")
    assert run_state(again) == "done"
    assert run_evidence_problem(again.folder, again.argv, again.model, None) is None
