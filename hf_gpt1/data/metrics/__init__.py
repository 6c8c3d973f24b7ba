"""Local `evaluate` metric modules, loadable without the Hugging Face Hub."""

from pathlib import Path

import evaluate

from ..tasks import TaskSpec, get_task

__all__ = ["glue_metric_path", "load_metric"]


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
    spec = get_task(task)
    if spec.metric_config is None:
        raise ValueError(f"Task {spec.name!r} has no metric_config; set one of the GLUE metric configs.")
    return evaluate.load(glue_metric_path(), spec.metric_config, **kwargs)
