# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The metric table: every score the local metric module computes, with its direction and what a constant prediction
scores, and the metric configs (the scores each one computes). A score of your own is one `SCORES` entry and one
`METRIC_OUTPUTS` config; a task then names them (`metric_config`, `main_metric`).

Light on purpose (numpy, scipy and scikit-learn are imported when a score is computed): tasks are checked against this
table when they are declared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["METRIC_OUTPUTS", "SCORES", "Score", "constant_scores"]


@dataclass(frozen=True)
class Score:
    """One score of the metric module.

    Args:
        compute (`Callable[[np.ndarray, np.ndarray], float]`): `compute(predictions, references)`.
        greater_is_better (`bool`): The direction: what keeps the best checkpoint and what "beats the baseline" means
            (an error such as MSE: False).
        real_valued (`bool`): Scores predictions that are numbers (regression), not class ids.
        constant_is_zero (`bool`): A correlation: a constant prediction correlates with nothing, so its baseline is 0
            (computing it would divide by a zero variance).
        label_sets (`bool`): Scores label sets, one row of 0/1 per class for each example (multi-label), not one
            label per example.
    """

    compute: Callable[[np.ndarray, np.ndarray], float]
    greater_is_better: bool = True
    real_valued: bool = False
    constant_is_zero: bool = False
    label_sets: bool = False


def _accuracy(predictions: np.ndarray, references: np.ndarray) -> float:
    return float((predictions == references).mean())


def _f1(predictions: np.ndarray, references: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y_true=references, y_pred=predictions))  # of the positive class


def _matthews(predictions: np.ndarray, references: np.ndarray) -> float:
    from sklearn.metrics import matthews_corrcoef

    return float(matthews_corrcoef(references, predictions))  # AX: the 3-class MCC


def _pearson(predictions: np.ndarray, references: np.ndarray) -> float:
    from scipy.stats import pearsonr

    return float(pearsonr(predictions, references)[0])


def _spearman(predictions: np.ndarray, references: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(predictions, references)[0])


def _mse(predictions: np.ndarray, references: np.ndarray) -> float:
    import numpy as np

    return float(np.mean((predictions - references) ** 2))


def _mae(predictions: np.ndarray, references: np.ndarray) -> float:
    import numpy as np

    return float(np.mean(np.abs(predictions - references)))


def _micro_f1(predictions: np.ndarray, references: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    # every (row, label) decision pooled; no predicted and no gold label at all scores 0, not a warning
    return float(f1_score(y_true=references.astype(int), y_pred=predictions, average="micro", zero_division=0))


def _macro_f1(predictions: np.ndarray, references: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    # the mean of each label's F1: a rare label weighs as much as a common one
    return float(f1_score(y_true=references.astype(int), y_pred=predictions, average="macro", zero_division=0))


def _subset_accuracy(predictions: np.ndarray, references: np.ndarray) -> float:
    return float((predictions == references).all(axis=-1).mean())  # the whole set right


SCORES: dict[str, Score] = {
    "accuracy": Score(_accuracy),
    "f1": Score(_f1),
    "matthews_correlation": Score(_matthews, constant_is_zero=True),
    "pearson": Score(_pearson, real_valued=True, constant_is_zero=True),
    "spearmanr": Score(_spearman, real_valued=True, constant_is_zero=True),
    "mse": Score(_mse, greater_is_better=False, real_valued=True),
    "mae": Score(_mae, greater_is_better=False, real_valued=True),
    "micro_f1": Score(_micro_f1, label_sets=True),
    "macro_f1": Score(_macro_f1, label_sets=True),
    "subset_accuracy": Score(_subset_accuracy, label_sets=True),
}
"""Every score, by the key the metric module returns it under."""

METRIC_OUTPUTS: dict[str, tuple[str, ...]] = {
    # by kind, for any task
    "accuracy": ("accuracy",),
    "accuracy_f1": ("accuracy", "f1"),
    "matthews_correlation": ("matthews_correlation",),
    "pearson_spearmanr": ("pearson", "spearmanr"),
    "mse_mae": ("mse", "mae"),
    "multi_label": ("micro_f1", "macro_f1", "subset_accuracy"),  # label sets (`label_kind: multi_label`)
    # GLUE's own configs (those of the `glue` metric on the Hub), by task
    "cola": ("matthews_correlation",),
    "ax": ("matthews_correlation",),
    "stsb": ("pearson", "spearmanr"),
    "mrpc": ("accuracy", "f1"),
    "qqp": ("accuracy", "f1"),
    **dict.fromkeys(("sst2", "mnli", "mnli_matched", "mnli_mismatched", "qnli", "rte", "wnli", "hans"), ("accuracy",)),
}
"""The configs of the local metric module (`hf_gpt1/data/metrics/glue`, which reads this table) and the scores each
returns: where a task's `metric_config` and `main_metric` are checked when it is declared, and what the module
computes."""


def constant_scores(names: tuple[str, ...] | list[str], references: np.ndarray, constant: float) -> dict[str, float]:
    """What predicting `constant` for every row scores on `names` (a correlation: 0)."""
    import numpy as np

    constant = np.asarray(constant)  # a number, or one value per label (multi-label: broadcast to every row)
    predictions = np.broadcast_to(constant, references.shape).astype(np.result_type(references, constant))
    return {
        name: 0.0 if SCORES[name].constant_is_zero else SCORES[name].compute(predictions, references) for name in names
    }
