# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""What a run tells its user: the start line, `all_results.json` (written atomically) and the closing summary."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers.trainer_utils import TrainOutput

from ..data.atomic import WRITE_FAILURES, atomic_save, write_failure
from ..data.metrics import scores_and_baselines
from .arguments import RecipeTrainingArguments
from .callbacks import format_duration
from .curves import write_curves
from .run_folder import RunFolder

if TYPE_CHECKING:  # annotations only: formatting results imports no Trainer
    from .trainer import GPT1Trainer

__all__ = ["format_metrics", "logged_metrics", "print_start", "save_results"]


def print_start(trainer: GPT1Trainer, title: str, plan: Sequence[str] = (), notes: Sequence[str] = ()) -> None:
    """The run's first line (main process): processes, device, the global batch and the training rows; then the
    `plan` lines (what the run will do that a user should know before it starts, warnings included) and the launch's
    `notes` ([`~hf_gpt1.training.launch.settle_launch`])."""
    args = trainer.args
    if not trainer.is_world_process_zero():
        return
    world = args.world_size
    dtype = str(next(trainer.model.parameters()).dtype).removeprefix("torch.")
    precision = " (bf16 mixed precision)" if args.bf16 else " (fp16 mixed precision)" if args.fp16 else ""
    line = f"{title}: {world} process{'es' if world > 1 else ''} on {args.device.type}; weights {dtype}{precision}"
    if args.do_train:
        train = trainer.train_dataset
        rows = len(train) if hasattr(train, "__len__") else "streamed"
        global_batch = args.per_device_train_batch_size * world * args.gradient_accumulation_steps
        line += (
            f"; global batch {args.per_device_train_batch_size} per device × {world} × "
            f"{args.gradient_accumulation_steps} accumulation = {global_batch}; {rows} training rows"
        )
    print(line, flush=True)
    for note in plan:
        print(f"  {note}", flush=True)
    for note in notes:
        print(f"note: {note}", flush=True)


def logged_metrics(trainer: GPT1Trainer, prefix: str, step: int) -> dict[str, float] | None:
    """The metrics (keys starting with `prefix`) of the evaluation logged at `step` during training, or None: the
    model in hand at the end of training was evaluated there, so the results need not evaluate it again."""
    for entry in reversed(trainer.state.log_history):
        if entry.get("step") == step and any(key.startswith(prefix) for key in entry):
            return {key: value for key, value in entry.items() if key.startswith(prefix) or key == "epoch"}
    return None


# How the summary names the losses: Trainer's eval loss is the whole objective.
LOSS_NAMES = {"loss": "L3 loss", "clf_loss": "L2 (task) loss"}


def format_metrics(metrics: dict[str, float], prefix: str, baseline: str | None = None) -> str:
    """`accuracy 0.7500, f1 0.8000, L2 (task) loss 0.51, L3 loss 3.40; majority-class baseline: accuracy 0.6838, …`
    from the float metrics named `prefix...` (timings and the predictions' spread left out; `baseline` names the
    constant whose `baseline_*` scores follow)."""
    scores, constant = scores_and_baselines(metrics, prefix)
    ordered = sorted(scores, key=lambda name: (name in LOSS_NAMES, name))  # the task's metrics first, losses last
    text = ", ".join(f"{LOSS_NAMES.get(name, name)} {scores[name]:.4f}" for name in ordered)
    if constant and baseline:
        text += f"; {baseline} baseline: " + ", ".join(f"{k} {v:.4f}" for k, v in sorted(constant.items()))
    return text


def save_results(
    trainer: GPT1Trainer,
    title: str,
    results: dict[str, Any],
    lines: list[str],
    train_result: TrainOutput | None,
    started: float,
) -> dict[str, Any]:
    """Adds the training metrics (with the steady-state speed) to `results`, then, on the main process, saves the
    tokenizer beside the model, writes `all_results.json` and prints the summary: `title`, `lines`, where things are.
    Called on every process (the speed's token count is summed over them). Returns the results."""
    args, run = trainer.args, RunFolder.of(trainer.args)
    if train_result is not None:
        speed = trainer.speed.summary()
        results = {"train": {**train_result.metrics, "steady_state": speed}, **results}
        results["hyperparameters"] = _hyperparameters(args)
        results["log_history"] = trainer.state.log_history
        if speed:
            lines = [_speed_line(speed, args), *lines]
    if trainer.is_world_process_zero():
        if train_result is None:  # a training run saved its tokenizer with the model
            with atomic_save(run.path) as staging:
                trainer.processing_class.save_pretrained(staging)
        run.write_results(results)  # the result: from here the run is complete
        curves, not_drawn = _draw_curves(trainer.state.log_history, run.curves_file, title)
        session = time.time() - started
        earlier = trainer.earlier_training_s
        took = format_duration(session + earlier)
        if earlier:
            took += f" ({format_duration(session)} in this session, resumed after {format_duration(earlier)})"
        print(f"\n== {title}: done in {took} ==", flush=True)
        for line in lines:
            print(f"  {line}")
        if args.do_train:
            print(f"  model + tokenizer: {run.path}")
        print(f"  results: {run.results_file}", flush=True)
        if curves is not None:
            print(f"  learning curves: {curves}", flush=True)
        if not_drawn is not None:
            print(
                f"  warning: the learning curves were not drawn ({run.curves_file}: {not_drawn}); "
                f"the run is complete, its results are in {run.results_file}",
                flush=True,
            )
    return results


def _draw_curves(log_history: list[dict[str, Any]], path: Path, title: str) -> tuple[Path | None, str | None]:
    """The learning curves drawn at `path` ([`write_curves`]), or why they were not. A figure is not a result: it is
    drawn after `all_results.json` is complete, and any failure to draw or write it (a full disk, a read-only one,
    matplotlib's own) is a warning, never a failed run that `--resume` would train again."""
    try:
        return write_curves(log_history, path, title), None
    except Exception as err:  # noqa: BLE001 - whatever the drawing or the writing raised, the results stand
        failure = write_failure(err, path)
        if failure is not None:
            return None, WRITE_FAILURES[failure.errno]
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return None, first or type(err).__name__


def _hyperparameters(args: RecipeTrainingArguments) -> dict[str, Any]:
    """The training settings a model card reports (the run's effective values)."""
    world = max(args.world_size, 1)
    settings = {
        "learning_rate": args.learning_rate,
        "lr_scheduler_type": str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type)),
        "warmup_steps": args.warmup_steps,
        "weight_decay": args.weight_decay,
        "num_train_epochs": args.num_train_epochs,
        "max_steps": args.max_steps if args.max_steps > 0 else None,
        "per_device_train_batch_size": args.per_device_train_batch_size,
        "processes": world,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "global_batch_size": args.per_device_train_batch_size * world * args.gradient_accumulation_steps,
        "optimizer": str(getattr(args.optim, "value", args.optim)),
        "seed": args.seed,
    }
    return {name: value for name, value in settings.items() if value is not None}


def _speed_line(speed: dict[str, float], args: RecipeTrainingArguments) -> str:
    line = (
        f"training speed: {speed['tokens_per_s']:,.0f} tokens/s, {speed['steps_per_s']:.2f} steps/s in the "
        f"steady state ({speed['steps']} steps; the slowest {speed['max_step_over_median']:.1f}× the median); "
        f"first step {speed['first_step_s']:.1f} s"
    )
    if args.torch_compile:
        line += f" (compilation), {speed['graphs_compiled_after_first_step']} graphs compiled after it"
    return line
