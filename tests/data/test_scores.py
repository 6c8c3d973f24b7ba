# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The scores a task declares (hf_gpt1.data.scores): each computed as declared, a constant prediction flagged."""

import evaluate
import numpy as np
import pytest

from hf_gpt1.data.metrics import glue_metric_path, load_metric, prediction_warnings, score_with_baselines
from hf_gpt1.data.tasks import get_task
from tests.utils import error_task


def test_regression_baseline_is_the_mean_and_constant_scores_are_flagged():
    spec = get_task("stsb")
    references = np.linspace(0, 5, 50)
    scores = score_with_baselines(load_metric(spec), spec, np.full(50, 2.5), references)
    assert scores["baseline_pearson"] == scores["baseline_spearmanr"] == 0.0 and scores["prediction_std"] == 0.0
    assert prediction_warnings(
        spec, "validation", {f"eval_validation_{k}": v for k, v in scores.items()}, "eval_validation_"
    )[0].startswith("validation: every prediction is the same score")


def test_the_metric_module_computes_what_the_task_table_declares():
    """`METRIC_OUTPUTS` (where a task's metric is checked when it is declared) is the module's table of configs:
    every config loads and returns exactly the declared scores."""
    from hf_gpt1.data.scores import METRIC_OUTPUTS, SCORES

    for config, scores in METRIC_OUTPUTS.items():
        regression = any(SCORES[name].real_valued for name in scores)
        predictions, references = ([0.5, 2.0, 4.0], [1.0, 2.5, 3.0]) if regression else ([0, 1, 1], [0, 1, 0])
        if any(SCORES[name].label_sets for name in scores):  # multi-label: a row of 0/1 per class for each example
            predictions, references = [[0, 1], [1, 1], [1, 0]], [[0, 1], [1, 0], [1, 0]]
        result = evaluate.load(glue_metric_path(), config).compute(predictions=predictions, references=references)
        assert tuple(result) == scores, config


def test_a_score_declared_from_outside_is_computed_and_checked(own_registry, monkeypatch):
    from hf_gpt1.data.scores import METRIC_OUTPUTS, SCORES, Score

    rmse = Score(lambda p, r: float(np.sqrt(np.mean((p - r) ** 2))), greater_is_better=False, real_valued=True)
    monkeypatch.setitem(SCORES, "rmse", rmse)
    monkeypatch.setitem(METRIC_OUTPUTS, "rmse", ("rmse",))
    spec = error_task("rmse", "rmse")
    scores = score_with_baselines(load_metric(spec), spec, np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    assert scores["rmse"] == pytest.approx(1.0) and scores["baseline_rmse"] == 0.0
    monkeypatch.setitem(METRIC_OUTPUTS, "undeclared", ("brier",))
    with pytest.raises(ValueError, match=r"gives \['brier'\], which hf_gpt1.data.scores.SCORES does not declare"):
        error_task("undeclared", "brier")
