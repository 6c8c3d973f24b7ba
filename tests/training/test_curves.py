# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A run's learning curves (hf_gpt1.training.curves): drawn from its log, never a figure of single dots."""

from __future__ import annotations


def test_a_prediction_only_run_draws_no_figure_of_single_dots(tmp_path):
    from hf_gpt1.training.curves import write_curves

    predicted = [{"eval_validation_accuracy": 0.6, "eval_validation_loss": 0.7, "step": 0}]
    assert write_curves(predicted, tmp_path / "curves.png", "glue rte (prediction only)") is None
    assert not (tmp_path / "curves.png").exists()
    trained = [{"loss": 1.0 / step, "learning_rate": 1e-3, "step": step} for step in (1, 2, 3)]
    assert write_curves(trained, tmp_path / "curves.png", "glue rte") == tmp_path / "curves.png"
