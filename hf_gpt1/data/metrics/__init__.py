# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Local `evaluate` metric modules, loadable without the Hugging Face Hub, and the constant baselines every score is
shown beside."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..scores import SCORES, constant_scores
from ..tasks import TaskSpec, get_task

__all__ = [
    "baseline_name",
    "beats",
    "glue_metric_path",
    "is_score",
    "load_metric",
    "prediction_warnings",
    "score_with_baselines",
    "scores_and_baselines",
]

if TYPE_CHECKING:  # `evaluate` (and `datasets` under it) is imported to load a metric, not to format scores
    import evaluate

BASELINE_PREFIX = "baseline_"


def glue_metric_path() -> str:
    """The folder of the local GLUE metric module, for `evaluate.load(glue_metric_path(), config)`."""
    return str(Path(__file__).resolve().parent / "glue")


def load_metric(task: str | TaskSpec, **kwargs) -> evaluate.EvaluationModule:
    """Load the metric that scores `task` (any name [`hf_gpt1.data.tasks.get_task`] accepts), offline.

    Keyword arguments go to `evaluate.load` (e.g. `experiment_id` for distributed evaluation).

    Raises:
        `KeyError`: Unknown task.
        `ValueError`: The task has no metric configured.
    """
    import evaluate

    spec = get_task(task)
    if spec.metric_config is None:
        raise ValueError(f"Task {spec.name!r} has no metric_config; set one of the GLUE metric configs.")
    return evaluate.load(glue_metric_path(), spec.metric_config, **kwargs)


def baseline_name(spec: TaskSpec) -> str:
    """What the baseline predicts: the references' mean (regression) or their most common class."""
    return spec.labels.baseline_name


def score_with_baselines(
    metric: evaluate.EvaluationModule, spec: TaskSpec, predictions: np.ndarray, references: np.ndarray
) -> dict[str, Any]:
    """The task's metrics of `predictions`; as `baseline_<metric>`, those of one constant predicted for every row (the
    references' most common class, or for regression their mean: [`~hf_gpt1.data.scores.constant_scores`]); and how
    varied the predictions are (`majority_prediction` and its share, or `prediction_std`): the scores are floats,
    `majority_prediction` the label kind's own value (a class id, a set's names), exact in JSON."""
    predictions, references = np.asarray(predictions), np.asarray(references)
    scores = metric.compute(predictions=predictions, references=references)
    constant, spread = spec.labels.constant(references), spec.labels.spread(spec, predictions)  # the label kind's
    with warnings.catch_warnings():  # e.g. sklearn's "undefined" warnings for a one-class prediction
        warnings.simplefilter("ignore")
        baseline = constant_scores(list(scores), references, constant)
    baseline = {f"{BASELINE_PREFIX}{name}": float(value) for name, value in baseline.items()}
    return {**scores, **baseline, **spread}


SPREAD_KEYS = ("majority_prediction", "majority_share", "prediction_std")
"""Keys of `score_with_baselines` that describe the predictions rather than score them."""

# Keys Trainer logs beside the scores: timings and the epoch.
_NOT_SCORES = ("runtime", "per_second", "model_preparation_time", "epoch", *SPREAD_KEYS)


def is_score(key: str) -> bool:
    """Whether a logged metric key is a score of the model (not a timing, the predictions' spread or a baseline's)."""
    return not key.endswith(_NOT_SCORES) and BASELINE_PREFIX not in key


def scores_and_baselines(metrics: dict[str, Any], prefix: str) -> tuple[dict[str, float], dict[str, float]]:
    """The float scores among `metrics`' keys starting with `prefix` (the prefix removed), and apart the constant
    baseline's (`baseline_` removed too); timings and the predictions' spread are left out."""
    shown = {
        key[len(prefix) :]: value
        for key, value in metrics.items()
        if key.startswith(prefix) and isinstance(value, float) and not key.endswith(_NOT_SCORES)
    }
    scores = {key: value for key, value in shown.items() if not key.startswith(BASELINE_PREFIX)}
    baselines = {key[len(BASELINE_PREFIX) :]: v for key, v in shown.items() if key.startswith(BASELINE_PREFIX)}
    return scores, baselines


def prediction_warnings(spec: TaskSpec, split: str, scores: dict[str, Any], prefix: str = "") -> list[str]:
    """Signs that a model learned nothing, from `score_with_baselines`' keys (after `prefix`): one prediction for
    every row, or a main score no better than the constant baseline's."""
    found = []
    if scores.get(f"{prefix}majority_share") == 1.0:
        label = spec.labels.prediction_name(spec, scores[f"{prefix}majority_prediction"])
        found.append(
            f"{split}: every prediction is {label!r}: the model answers the same whatever the input (check the "
            "learning rate, the number of updates and the labels)."
        )
    if scores.get(f"{prefix}prediction_std") is not None and scores[f"{prefix}prediction_std"] < 1e-6:
        found.append(f"{split}: every prediction is the same score: the model answers the same whatever the input.")
    main, baseline = f"{prefix}{spec.main_metric}", f"{prefix}{BASELINE_PREFIX}{spec.main_metric}"
    if spec.main_metric and main in scores and baseline in scores and not beats(spec, scores[main], scores[baseline]):
        found.append(
            f"{split}: {spec.main_metric} {scores[main]:.4f} does not beat the {baseline_name(spec)} baseline "
            f"{scores[baseline]:.4f}."
        )
    return found


def beats(spec: TaskSpec, score: float, other: float) -> bool:
    """Whether `score` of the task's main metric is strictly better than `other`, in the metric's direction."""
    return score > other if SCORES[spec.main_metric].greater_is_better else score < other
