# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""What the two plans (`hf_gpt1.training.finetune.FinetunePlan`, `hf_gpt1.training.pretrain.PretrainPlan`) share:
problems collected and said at once ([`Problems`]), the lines that say the run's schedule and launch
([`run_lines`]), and `--dry_run` ([`print_plan`]: the plan printed, nothing executed or written). What a run will do to
its folder, the folder's owner says (`hf_gpt1.training.run_folder.RunFolder.plan_lines`).

    problems = Problems()
    with problems.collect():
        check_output_dir(...)  # a refusal is kept, and the next check still runs
    problems.raise_any()  # one ArgumentProblems naming each, in the order found
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from transformers.trainer_utils import IntervalStrategy

from ..errors import ArgumentProblems
from .launch import precision_engine
from .precision import weights_dtype

__all__ = ["DRY_RUN_LINE", "Problems", "check_trainer_arguments", "print_plan", "run_lines"]

DRY_RUN_LINE = "dry run: nothing was written; run the same command without --dry_run to carry the plan out."


class Problems:
    """The input problems a plan finds, collected so that one error says them all (`ArgumentProblems`, one line
    each, in the order found). A single problem is raised as it was raised (its type and message kept: a missing
    path stays a `FileNotFoundError`)."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self._errors: list[Exception] = []

    @contextlib.contextmanager
    def collect(self) -> Iterator[None]:
        """Runs one check: its refusal (a `ValueError`, `KeyError` or `OSError`: a missing path, an unreachable Hub;
        or `ArgumentProblems` with several) is kept, not raised."""
        try:
            yield
        except ArgumentProblems as err:
            self.found += err.problems
            self._errors.append(err)
        except (ValueError, KeyError, OSError) as err:  # the errors a command says in one line (`command_errors`)
            self.found.append(err.args[0] if isinstance(err, KeyError) and err.args else str(err))
            self._errors.append(err)

    def add(self, problem: str) -> None:
        """A problem the plan found itself (no check raised it)."""
        self.found.append(problem)
        self._errors.append(ArgumentProblems([problem]))

    def raise_any(self) -> None:
        """Raises every problem collected so far, in one `ArgumentProblems` (one problem: its own error); nothing
        when there is none."""
        if len(self.found) == 1:
            raise self._errors[0]
        if self.found:
            raise ArgumentProblems(self.found)


def check_trainer_arguments(args: Any, updates: int | None) -> None:
    """What `Trainer.train()` builds from the arguments alone, built by the plan: the optimizer's class (its package
    installed) and the learning-rate schedule (on one stand-in parameter), so that a refusal is said with the plan's
    other problems, before the folder is claimed, not from inside `train()`."""
    import torch
    from transformers import Trainer, get_scheduler

    problems = []
    try:
        Trainer.get_optimizer_cls_and_kwargs(args)
    except (ImportError, ValueError, TypeError) as err:  # a package missing (anyprecision, grokadamw: ValueError)
        # GaLore, APOLLO and LOMO need the model itself to be built, which the plan does not load: `train()` checks
        if not re.search(r"pass a `?model`?", str(err)):
            problems.append(f"--optim {getattr(args.optim, 'value', args.optim)}: {err}")
    if args.do_train:
        stand_in = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        total = updates or max(args.max_steps, 1)
        warmup = args.get_warmup_steps(total)
        try:
            schedule = get_scheduler(
                args.lr_scheduler_type, stand_in, num_warmup_steps=warmup, num_training_steps=total,
                scheduler_specific_kwargs=args.lr_scheduler_kwargs,
            )  # fmt: skip
            if not isinstance(schedule, torch.optim.lr_scheduler.ReduceLROnPlateau):  # it steps on a metric
                for _ in range(min(total, warmup + 2)):  # through the warm-up into the decay: each formula computed
                    stand_in.step()
                    schedule.step()
        except (ValueError, TypeError) as err:
            problems.append(f"--lr_scheduler_type {getattr(args.lr_scheduler_type, 'value', '')}: {err}")
    if problems:
        raise ArgumentProblems(problems)


def _when(strategy: Any, steps: float, updates: int | None) -> str:
    strategy = IntervalStrategy(strategy)
    if strategy == IntervalStrategy.NO:
        return "never"
    if strategy == IntervalStrategy.EPOCH:
        return "every epoch"
    if steps < 1:
        every = f"every {steps:.0%} of the run"
        # transformers' `TrainerState.compute_steps` rounds a share up
        if updates is None:
            return every
        count = math.ceil(steps * updates)
        return f"{every} ({count:,} update{'s' if count != 1 else ''})"
    return f"every {steps:g} updates"


def run_lines(args: Any, model_dtype: str | None, updates: int | None, warmup: Sequence[str] = ()) -> list[str]:
    """The plan's lines that both recipes share: the updates (None: decided when the data is read), the warm-up
    (`warmup`: the recipe's own lines, else the arguments'), when it evaluates and saves, compilation, precision,
    the processes, and the folder it writes."""
    batch = args.per_device_train_batch_size * max(args.world_size, 1) * args.gradient_accumulation_steps
    lines = []
    if not args.do_train:
        lines.append("  updates: none (prediction only)")
    else:
        count = f"{updates:,} updates" if updates is not None else "updates: decided when the data is read"
        lines.append(f"  {count}; a global batch of {batch} ({args.per_device_train_batch_size} per device)")
        if warmup:
            lines += [f"  {line}" for line in warmup]
        else:
            asked = args.warmup_steps  # below 1: a share of the run, rounded up as transformers rounds it
            if asked >= 1:
                lines.append(f"  warm-up: {asked:g} updates")
            elif updates is None:
                lines.append(f"  warm-up: {asked:.1%} of the updates")
            else:
                steps = math.ceil(asked * updates)
                lines.append(f"  warm-up: {steps:,} of {updates:,} updates ({asked:.1%} of the run)")
            if updates is not None and (asked if asked >= 1 else steps) >= updates:
                lines.append(
                    f"  warning: the warm-up is as long as the run ({updates:,} updates): the learning rate never "
                    "reaches its peak; lower --warmup_steps."
                )
    lines.append(
        f"  evaluation: {_when(args.eval_strategy, args.eval_steps, updates)}; checkpoints: "
        f"{_when(args.save_strategy, args.save_steps, updates)}"
    )
    compiled = "on" if args.torch_compile else "off"
    mode = f" (mode {args.torch_compile_mode})" if args.torch_compile and args.torch_compile_mode else ""
    lines.append(f"  torch.compile: {compiled}{mode}")
    engine = precision_engine(args)
    compute = "bf16 compute on" if args.bf16 else "fp16 mixed precision" if args.fp16 else "bf16 compute off"
    lines.append(
        f"  precision: {weights_dtype(model_dtype, args.bf16, engine)} weights, {compute}"
        + (f", {engine} owns mixed precision" if engine else "")
    )
    device = "the CPU" if args.use_cpu else str(args.device)
    lines.append(f"  processes: {max(args.world_size, 1)} on {device}")
    return lines


def print_plan(plan: Any, notes: Sequence[str] = ()) -> dict[str, Any]:
    """A `--dry_run`'s whole work: the plan printed (with the launch's `notes`), on the main process only; nothing
    executed, loaded or written. Returns `{"plan": <the plan's text>}`, in place of a run's results.

    The run functions call it instead of executing (`if plan.args.dry_run: return print_plan(plan, notes)`), not
    through a wrapper: the frames between a command and `Trainer.train` stay the command, the run and the execution.
    """
    text = "\n".join([str(plan), *notes, DRY_RUN_LINE])
    if plan.args.process_index == 0:  # a launch's processes plan alike: the main one says it, once
        print(text)
    return {"plan": text}
