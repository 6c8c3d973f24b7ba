# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Determinism on CPU: the same seed and settings give the same metrics and the same weights, run to run; a different
seed does not (so the comparison can fail)."""

from __future__ import annotations

import pytest
from safetensors.torch import load_file

from tests.utils import glue_argv, run_command

pytestmark = pytest.mark.usefixtures("restore_determinism")


def _run(capsys, tiny, rte_files, output_dir, seed):
    train, dev = rte_files
    extra = ["--save_strategy", "no", "--num_train_epochs", "1"]
    results = run_command(capsys, "glue", *glue_argv(tiny, train, dev, output_dir, seed=seed, extra=extra)).results()
    return results, load_file(output_dir / "model.safetensors")


def test_same_seed_same_metrics_and_weights(capsys, tiny, rte_files, tmp_path):
    first, weights_1 = _run(capsys, tiny, rte_files, tmp_path / "a", seed=5)
    second, weights_2 = _run(capsys, tiny, rte_files, tmp_path / "b", seed=5)
    other, weights_3 = _run(capsys, tiny, rte_files, tmp_path / "c", seed=6)
    for key in ("eval_validation_loss", "eval_validation_accuracy"):
        assert first["validation"][key] == second["validation"][key], key
    assert first["train"]["train_loss"] == second["train"]["train_loss"]
    assert all((weights_1[k] == weights_2[k]).all() for k in weights_1), "same seed, different weights"
    assert first["train"]["train_loss"] != other["train"]["train_loss"]
    assert any((weights_1[k] != weights_3[k]).any() for k in weights_1), "the seed changed nothing"
