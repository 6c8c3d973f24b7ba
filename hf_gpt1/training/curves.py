# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""A run's learning curves, drawn from its log history as `curves.png` beside `all_results.json`: the training
losses (L1, or L3 with its parts L2 and L1 when fine-tuning), the held-out losses and metrics, the learning rate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.atomic import write_figure_atomic
from ..data.metrics import is_score
from ..module_names import moved_names

__all__ = ["learning_curves", "write_curves"]

# where a run's curves go is its folder's: hf_gpt1.training.run_folder.RunFolder.curves_file
__getattr__ = moved_names(__name__, ("hf_gpt1.training.run_folder",), ("CURVES_FILE",))
# the training log's names → what the curve shows ("loss" is L3 when fine-tuning, L1 when pre-training)
TRAINING_LOSSES = {"loss": "training loss", "clf_loss": "training L2", "lm_loss": "training L1"}


def learning_curves(log_history: list[dict[str, Any]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """The curves of a Trainer log history, by panel ("losses", "validation", "learning rate"): name → (step, value)
    points, in the order they were logged."""
    panels: dict[str, dict[str, list[tuple[int, float]]]] = {"losses": {}, "validation": {}, "learning rate": {}}
    for entry in log_history:
        step = entry.get("step")
        for key, value in entry.items():
            if step is None or not isinstance(value, int | float) or isinstance(value, bool):
                continue
            if key in TRAINING_LOSSES:
                panel, name = "losses", TRAINING_LOSSES[key]
            elif key == "learning_rate":
                panel, name = "learning rate", key
            elif key.startswith("eval_") and key.endswith("loss"):
                panel, name = "losses", f"held-out {key.removeprefix('eval_')}"
            elif key.startswith("eval_") and is_score(key):
                panel, name = "validation", key.removeprefix("eval_")
            else:
                continue
            panels[panel].setdefault(name, []).append((step, float(value)))
    return {panel: curves for panel, curves in panels.items() if curves}


def write_curves(log_history: list[dict[str, Any]], path: str | Path, title: str) -> Path | None:
    """Draws `learning_curves` into one PNG at `path` (atomically); None when no quantity was logged twice (a
    prediction-only run logs each metric once: a figure of single dots shows nothing)."""
    panels = learning_curves(log_history)
    if not any(len(points) > 1 for curves in panels.values() for points in curves.values()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5 * len(panels), 4))
    for axes, (panel, curves) in zip(figure.subplots(1, len(panels), squeeze=False)[0], panels.items()):
        for name, points in curves.items():
            steps, values = zip(*points)
            axes.plot(steps, values, "o-" if len(points) < 20 else "-", label=name, markersize=3)
        axes.set(title=panel, xlabel="update")
        axes.legend(fontsize="small")
    figure.suptitle(title)
    figure.tight_layout()
    return write_figure_atomic(figure, path, dpi=100)
