# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Prediction files (hf_gpt1.data.submissions): GLUE submission TSVs and each task's own prediction format."""

from __future__ import annotations

import errno

import pytest

from hf_gpt1.data.submissions import write_glue_submission, write_predictions
from hf_gpt1.data.tasks import get_task
from tests.utils import GLUE_ROWS, Killed, fail_writes_to, predict_args, run_command


def test_write_glue_submission(tmp_path):
    path = write_glue_submission("rte", [0, 1, 1], tmp_path)
    assert path.name == "RTE.tsv"
    assert path.read_text() == "index\tprediction\n0\tentailment\n1\tnot_entailment\n2\tnot_entailment\n"
    assert (
        write_glue_submission("sts-b", [4.25, 0.1], tmp_path).read_text() == "index\tprediction\n0\t4.250\n1\t0.100\n"
    )
    assert write_glue_submission("mnli", [2], tmp_path, split="test_mismatched").name == "MNLI-mm.tsv"
    with pytest.raises(ValueError, match="submission splits are"):
        write_glue_submission("mnli", [2], tmp_path)
    with pytest.raises(ValueError, match="is not a label id"):
        write_glue_submission("cola", [2], tmp_path)


def test_write_glue_submission_uses_the_files_ids(tmp_path):
    path = write_glue_submission("qqp", [1, 0], tmp_path, ids=[7, 3])
    assert path.read_text() == "index\tprediction\n7\t1\n3\t0\n"
    with pytest.raises(ValueError, match="2 predictions for 3 test rows"):
        write_glue_submission("qqp", [1, 0], tmp_path, ids=[7, 3, 4])
    assert write_glue_submission("mnli", [0], tmp_path, split="test_ax").name == "AX.tsv"
    assert write_glue_submission("ax", [2], tmp_path).read_text() == "index\tprediction\n0\tcontradiction\n"


def test_write_predictions_in_the_tasks_own_convention(tmp_path):
    story = get_task("story_cloze")
    path = write_predictions(story, [0, 1, 1], tmp_path, "test", ids=["a", "b", "c"], id_header="InputStoryid")
    assert path.name == "story_cloze_test_predictions.tsv"
    assert path.read_text() == "InputStoryid\tAnswerRightEnding\na\t1\nb\t2\nc\t2\n"
    race = write_predictions(get_task("race"), [3], tmp_path, "test")
    assert race.read_text() == "index\tanswer\n0\tD\n"


# ------------------------------------------------------------------------------------------------ local files


def test_a_kill_while_the_submission_is_written_leaves_no_partial_file(
    rte_model, glue_slice, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", Killed())
    with pytest.raises(Killed):  # a kill, not a refusal: it leaves the command as raised
        run_command(capsys, "glue", *predict_args(rte_model, glue_slice, out))
    assert not (out / "RTE.tsv").exists()  # the old file or the whole new one: here there was none
    monkeypatch.undo()
    run_command(capsys, "glue", *predict_args(rte_model, glue_slice, out, "--resume")).results()  # completes it
    rows = (out / "RTE.tsv").read_text().splitlines()
    assert rows[0] == "index\tprediction" and len(rows) == GLUE_ROWS["test"]  # header + every test row
    assert not [p.name for p in out.iterdir() if p.name.startswith(".hf_gpt1-tmp")]


def test_a_full_disk_at_the_submission_is_one_line_and_leaves_no_partial_file(
    rte_model, glue_slice, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", OSError(errno.ENOSPC, "No space left on device"))
    error = run_command(capsys, "glue", *map(str, predict_args(rte_model, glue_slice, out))).error
    assert "RTE.tsv" in error and "full" in error and "free space" in error.lower(), error
    assert not (out / "RTE.tsv").exists()


def test_a_read_only_disk_is_not_told_to_free_space(rte_model, glue_slice, tmp_path, monkeypatch, capsys):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", OSError(errno.EROFS, "Read-only file system"))
    error = run_command(capsys, "glue", *map(str, predict_args(rte_model, glue_slice, out))).error
    assert "read-only" in error and "free space" not in error.lower(), error


def test_a_glue_submission_holds_the_scores_the_server_takes(tmp_path):
    """STS-B scores outside [0, 5] (a linear head's raw output) are written as the nearest bound."""
    from hf_gpt1.data.submissions import write_glue_submission

    path = write_glue_submission("stsb", [5.4, -0.2, 3.0], tmp_path)
    assert path.read_text().splitlines()[1:] == ["0\t5.000", "1\t0.000", "2\t3.000"]


def test_only_a_ranged_regression_task_has_its_scores_clipped():
    from hf_gpt1.data.submissions import submission_scores
    from hf_gpt1.data.tasks import get_task

    assert submission_scores(get_task("stsb"), [5.4, 2.0]) == ([5.0, 2.0], 1)
    assert submission_scores(get_task("rte"), [7.0]) == ([7.0], 0)  # no label range: nothing to clip
