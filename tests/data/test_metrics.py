# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The local GLUE `evaluate` module (hf_gpt1/metrics/glue) against scikit-learn / scipy, and loading it offline."""

import json
import os
import subprocess
import sys

import evaluate
import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from hf_gpt1.data.metrics import glue_metric_path, load_metric, prediction_warnings, score_with_baselines
from hf_gpt1.data.tasks import TASKS, get_task
from tests.utils import error_task

ACCURACY_CONFIGS = ["sst2", "mnli", "mnli_matched", "mnli_mismatched", "qnli", "rte", "wnli", "accuracy"]


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("n", [5, 200])
def test_cola_matthews(rng, n):
    predictions, references = rng.integers(0, 2, n), rng.integers(0, 2, n)
    result = evaluate.load(glue_metric_path(), "cola").compute(predictions=predictions, references=references)
    assert result == {"matthews_correlation": pytest.approx(matthews_corrcoef(references, predictions), abs=1e-12)}


@pytest.mark.parametrize("config", ["mrpc", "qqp"])
def test_f1_and_accuracy(rng, config):
    predictions, references = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    result = evaluate.load(glue_metric_path(), config).compute(predictions=predictions, references=references)
    assert result == {
        "accuracy": pytest.approx(accuracy_score(references, predictions), abs=1e-12),
        "f1": pytest.approx(f1_score(references, predictions), abs=1e-12),
    }


def test_stsb_correlations(rng):
    references = rng.uniform(0, 5, 300)
    predictions = references + rng.normal(0, 1, 300)
    result = evaluate.load(glue_metric_path(), "stsb").compute(predictions=predictions, references=references)
    assert result == {
        "pearson": pytest.approx(pearsonr(predictions, references)[0], abs=1e-12),
        "spearmanr": pytest.approx(spearmanr(predictions, references)[0], abs=1e-12),
    }


@pytest.mark.parametrize("config", ACCURACY_CONFIGS)
def test_accuracy(rng, config):
    predictions, references = rng.integers(0, 4, 100), rng.integers(0, 4, 100)
    result = evaluate.load(glue_metric_path(), config).compute(predictions=predictions, references=references)
    assert result == {"accuracy": pytest.approx(accuracy_score(references, predictions), abs=1e-12)}


def test_incremental_batches_match_one_shot(rng):
    predictions, references = rng.integers(0, 2, 64), rng.integers(0, 2, 64)
    metric = load_metric("cola")
    for start in range(0, 64, 16):
        metric.add_batch(predictions=predictions[start : start + 16], references=references[start : start + 16])
    assert metric.compute()["matthews_correlation"] == pytest.approx(matthews_corrcoef(references, predictions))


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_has_a_loadable_metric(task):
    spec = TASKS[task]
    metric = load_metric(task)
    assert metric.config_name == spec.metric_config
    if spec.is_regression:
        result = metric.compute(predictions=[0.5, 2.0, 4.0], references=[1.0, 2.5, 3.0])
    else:
        result = metric.compute(predictions=[0, 1, 1], references=[0, 1, 0])
    assert spec.main_metric in result


def test_unknown_config_is_an_error():
    with pytest.raises(KeyError, match=r"Unknown GLUE metric config 'squad'; valid configs: \['accuracy'"):
        evaluate.load(glue_metric_path(), "squad")


def test_offline_load_in_a_fresh_process(tmp_path):
    # A fresh interpreter with an empty HF cache and the Hub marked offline: only the local folder can serve it.
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env["HF_DATASETS_OFFLINE"] = "1"
    code = (
        "import evaluate, json, sys\n"
        "metric = evaluate.load(sys.argv[1], 'mrpc')\n"
        "print(json.dumps(metric.compute(predictions=[0, 1, 1, 1], references=[0, 1, 0, 1])))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, glue_metric_path()], env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == {"accuracy": 0.75, "f1": 0.8}


def test_every_score_has_the_constant_baseline_and_a_learned_nothing_warning():
    # MRPC's test set: 1,147 of 1,725 pairs are paraphrases; a model answering "1" for all reports accuracy 0.66.
    spec = get_task("mrpc")
    references = np.array([1] * 1147 + [0] * 578)
    scores = score_with_baselines(load_metric(spec), spec, np.ones(1725, dtype=int), references)
    assert scores["accuracy"] == scores["baseline_accuracy"] == pytest.approx(1147 / 1725)
    assert scores["f1"] == scores["baseline_f1"] and (scores["majority_prediction"], scores["majority_share"]) == (
        1,
        1,
    )
    warnings = prediction_warnings(spec, "test", scores)
    assert warnings == [
        "test: every prediction is 'equivalent': the model answers the same whatever the input (check the learning "
        "rate, the number of updates and the labels).",
        f"test: f1 {scores['f1']:.4f} does not beat the majority-class baseline {scores['baseline_f1']:.4f}.",
    ]
    learned = references.copy()
    learned[:100] = 0  # right on 1,625 rows
    scores = score_with_baselines(load_metric(spec), spec, learned, references)
    assert scores["accuracy"] > scores["baseline_accuracy"] and prediction_warnings(spec, "test", scores) == []


# ------------------------------------------------------------------------------ direction and baseline per score


def test_an_error_metric_has_its_direction_and_a_mean_prediction_baseline(own_registry):
    spec = error_task()
    references = np.array([1.0, 2.0, 3.0, 4.0])
    good = score_with_baselines(load_metric(spec), spec, references + 0.1, references)
    assert good["mse"] == pytest.approx(0.01) and good["baseline_mse"] == pytest.approx(1.25)  # the mean, 2.5
    assert good["baseline_mae"] == pytest.approx(1.0)
    scored = {f"eval_v_{k}": v for k, v in good.items()}
    assert prediction_warnings(spec, "v", scored, "eval_v_") == []  # lower than the baseline: it beats it
    bad = score_with_baselines(load_metric(spec), spec, references[::-1] * 2, references)
    warned = prediction_warnings(spec, "v", {f"eval_v_{k}": v for k, v in bad.items()}, "eval_v_")
    assert warned and "does not beat the mean-prediction baseline" in warned[-1]


def test_the_best_checkpoint_follows_the_metric_direction(own_registry, tmp_path):
    from hf_gpt1.training.arguments import GPT1TrainingArguments
    from hf_gpt1.training.finetune import _evaluation_plan

    args = GPT1TrainingArguments(output_dir=str(tmp_path), report_to="none")
    plan = _evaluation_plan(args, error_task(), ["validation"])
    assert plan["metric_for_best_model"] == "eval_validation_mse" and plan["greater_is_better"] is False
    assert _evaluation_plan(args, get_task("stsb"), ["validation"])["greater_is_better"] is True
