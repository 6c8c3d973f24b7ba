# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Predictions out: GLUE submission TSVs and per-task prediction files, one row per input row, in input order,
each written whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .atomic import write_text_atomic
from .tasks import TaskSpec, get_task, glue_task_names

__all__ = ["submission_scores", "write_glue_submission", "write_predictions"]


def submission_scores(spec: TaskSpec, predictions: Sequence[float]) -> tuple[list[float], int]:
    """A regression head's outputs as the GLUE server takes them: clipped to the task's `label_range` (STS-B's
    [0, 5]; a linear head's raw output can fall outside it); returns the scores and how many were clipped."""
    scores = [float(p) for p in predictions]
    if spec.label_range is None:
        return scores, 0
    low, high = spec.label_range
    clipped = [min(max(score, low), high) for score in scores]
    return clipped, sum(a != b for a, b in zip(scores, clipped))


def write_glue_submission(
    task: str | TaskSpec,
    predictions: Sequence[int | float],
    output_dir: str | Path,
    split: str = "test",
    ids: Sequence[int] | None = None,
) -> Path:
    """Write test-set predictions as the GLUE server expects them: `<Task>.tsv` with `index<TAB>prediction` rows.

    Classification predictions are label ids and are written as the label names of the task's TSV files
    (`entailment` for RTE/QNLI/MNLI/AX, `0`/`1` otherwise); STS-B predictions are floats with 3 decimals, clipped to
    [0, 5] ([`submission_scores`]).

    Args:
        task (`str` or `TaskSpec`): A GLUE task.
        predictions (`Sequence[int | float]`): One prediction per test row, in file order.
        output_dir (`str` or `Path`): Folder to write into (created if needed).
        split (`str`): The test split (MNLI: `test_matched`, `test_mismatched` or `test_ax`).
        ids (`Sequence[int]`, *optional*): The rows' `index` values (the test file's own ids); default 0..n-1, the
            `index` of every official GLUE test file.

    Returns:
        `Path`: The written file.
    """
    spec = get_task(task)
    if spec.glue_tsv is None:
        raise ValueError(f"Task {spec.name!r} is not a GLUE task; GLUE TSV tasks: {glue_task_names()}.")
    if split not in spec.glue_tsv.submission_files:
        raise ValueError(
            f"Task {spec.name!r}: submission splits are {list(spec.glue_tsv.submission_files)}, not {split!r}."
        )
    ids = list(range(len(predictions))) if ids is None else list(ids)
    if len(ids) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(ids)} test rows: they must be one per row.")
    lines = ["index\tprediction"]
    for i, (row_id, pred) in enumerate(zip(ids, predictions)):
        lines.append(f"{row_id}\t{spec.labels.submission_value(spec, i, pred)}")  # the label kind writes it
    return write_text_atomic(Path(output_dir) / spec.glue_tsv.submission_files[split], "\n".join(lines) + "\n")


def write_predictions(
    spec: TaskSpec,
    predictions: Sequence[int | float],
    output_dir: str | Path,
    split: str,
    ids: Sequence[object] | None = None,
    id_header: str = "index",
) -> Path:
    """Writes predictions of a task without a GLUE submission format, one row per input row, in input order.

    The file is `<task>_<split>_predictions.tsv` with two columns: the row's id (`id_header`: e.g. Story Cloze's
    `InputStoryid`; by default `index`, the row number) and the prediction under the name of the task's label column,
    in the task's own convention: its label values (Story Cloze's `AnswerRightEnding`, 1 or 2; RACE's `answer`,
    A-D), a choice number counted from `label_offset`, or the score for regression.
    """
    ids = list(range(len(predictions))) if ids is None else list(ids)
    if len(ids) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(ids)} rows: they must be one per row.")
    lines = [f"{id_header}\t{spec.label_column}"]
    for row_id, pred in zip(ids, predictions):
        lines.append(f"{row_id}\t{spec.labels.prediction_value(spec, pred)}")  # the label kind writes it
    return write_text_atomic(Path(output_dir) / f"{spec.name}_{split}_predictions.tsv", "\n".join(lines) + "\n")
