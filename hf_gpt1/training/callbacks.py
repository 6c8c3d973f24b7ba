# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The Trainer callbacks of hf_gpt1: the steady-state speed meter (with its step clock, which the benchmarks use too),
checkpoint completion (a marker once every file is written, then rotation), and the graceful stop on a signal."""

from __future__ import annotations

import signal
import statistics
import sys
import time
from typing import Any

import torch
from accelerate import PartialState
from accelerate.utils import gather, reduce
from transformers import TrainerCallback

from ..process_control import install_stop_handler, launcher_lost, restore_handlers
from .checkpoints import batch_of
from .run_folder import RunFolder

__all__ = ["CheckpointCompletion", "GracefulStop", "SpeedMeter", "StepClock"]


class StepClock:
    """Time points of a training loop, without a host↔device sync between them: CUDA events on a GPU (the time
    between two points is then the GPU's timeline, idle gaps included), `perf_counter` elsewhere."""

    def __init__(self, device: torch.device | str):
        self.cuda = torch.device(device).type == "cuda"
        self.seconds: list[float] = []  # between consecutive marks, once settled
        self._marks: list[Any] = []

    def mark(self) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self._marks.append(event)
        else:
            self._marks.append(time.perf_counter())

    def settle(self) -> list[float]:
        """Adds the times between the marks so far to `seconds` (waiting once for the device) and keeps only the last
        mark, as the start of the next interval; returns `seconds`."""
        if len(self._marks) > 1:
            if self.cuda:
                self._marks[-1].synchronize()
                self.seconds += [a.elapsed_time(b) / 1e3 for a, b in zip(self._marks, self._marks[1:])]
            else:
                self.seconds += [b - a for a, b in zip(self._marks, self._marks[1:])]
            self._marks = self._marks[-1:]
        return self.seconds


def format_duration(seconds: float) -> str:
    """`2 h 13 min`, `4 min 5 s`, `9 s`."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s" if minutes else f"{secs} s"


class SpeedMeter(TrainerCallback):
    """Steady-state training speed: the steps after the first tenth of the run (at least the first step, which
    compiles under `--torch_compile` and makes the first allocations), without the ones an evaluation or a
    checkpoint interrupted.

    The trainer hands each batch to [`count`], which adds its tokens (the attention mask's ones, else every input id)
    on the device; they and the step times are read when the Trainer has just synchronised to log the loss, so the
    meter adds no sync of its own and keeps no more than a logging interval of device objects.
    """

    def __init__(self):
        self.clock: StepClock | None = None
        self.device: torch.device | None = None
        self.steps: list[int] = []  # the global step of each timed step
        self.tokens: list[int] = []  # its tokens on this process, once read
        self.unread: list[torch.Tensor | int] = []  # token counts of the steps since the last reading
        self.interrupted: set[int] = set()  # steps whose interval holds an evaluation or a save
        self.graphs = 0  # dynamo's count of compiled graphs at the end of the first step
        self._step_tokens: torch.Tensor | int = 0  # this optimizer step's tokens so far, on the device

    def count(self, inputs: dict[str, Any]) -> None:
        """Adds one batch's tokens to the current step (on the device, no sync)."""
        mask = inputs.get("attention_mask")
        self._step_tokens = self._step_tokens + (mask.sum() if mask is not None else inputs["input_ids"].numel())

    def on_train_begin(self, args, state, control, **kwargs):
        self.clock, self.device = StepClock(args.device), args.device
        self.steps, self.tokens, self.unread, self.interrupted, self._step_tokens = [], [], [], set(), 0
        self.clock.mark()

    def on_step_end(self, args, state, control, **kwargs):
        self.clock.mark()
        self.steps.append(state.global_step)
        self.unread.append(self._step_tokens)
        self._step_tokens = 0
        if len(self.steps) == 1:
            self.graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]

    def on_log(self, args, state, control, **kwargs):
        self._read()

    def on_evaluate(self, args, state, control, **kwargs):
        self.interrupted.add(state.global_step + 1)

    def on_save(self, args, state, control, **kwargs):
        self.interrupted.add(state.global_step + 1)

    def _read(self) -> None:
        if self.clock is not None:
            self.clock.settle()
            self.tokens += [int(count) for count in self.unread]
            self.unread = []

    def summary(self) -> dict[str, float] | None:
        """The last `train()`'s steady-state speed: `steps`, `steps_per_s`, `tokens_per_s` (all processes: call it on
        every one), `first_step_s`, `max_step_over_median` and `graphs_compiled_after_first_step`; None for a run
        too short to tell."""
        self._read()
        if self.clock is None or len(self.steps) < 3:
            return None
        seconds = self.clock.seconds  # seconds[i]: the step that ended at mark i + 1
        skip = max(1, len(seconds) // 10)
        kept = [i for i in range(skip, len(seconds)) if self.steps[i] not in self.interrupted]
        if not kept:
            return None
        tokens = torch.tensor(sum(self.tokens[i] for i in kept), device=self.device)
        tokens = float(reduce(tokens, reduction="sum"))
        total = sum(seconds[i] for i in kept)
        steady = [seconds[i] for i in kept]
        return {
            "steps": len(kept),
            "steps_per_s": len(kept) / total,
            "tokens_per_s": tokens / total,
            "first_step_s": seconds[0],
            "max_step_over_median": max(steady) / statistics.median(steady),
            "graphs_compiled_after_first_step": torch._dynamo.utils.counters["stats"]["unique_graphs"] - self.graphs,
        }


class TimeEstimate(TrainerCallback):
    """Prints once, at the first log with `after` timed updates behind it, how long the rest of the run should take:
    the median of the [`SpeedMeter`]'s step times (the first step, which compiles and allocates, and the steps an
    evaluation or a save interrupted left out) times the updates left. Add it after the meter, which reads its
    times at the same log."""

    def __init__(self, meter: SpeedMeter, after: int = 10):
        self.meter, self.after, self.said = meter, after, False

    def on_train_begin(self, args, state, control, **kwargs):
        self.said = False

    def on_log(self, args, state, control, **kwargs):
        meter = self.meter
        if self.said or not state.is_world_process_zero or meter.clock is None:
            return
        seconds = meter.clock.seconds  # seconds[i]: the step meter.steps[i]
        steady = [s for s, step in zip(seconds[1:], meter.steps[1:]) if step not in meter.interrupted]
        if len(steady) < self.after:
            return
        self.said = True
        per_update, left = statistics.median(steady), state.max_steps - state.global_step
        print(
            f"expected: about {format_duration(per_update * left)} more for the remaining {left:,} of "
            f"{state.max_steps:,} updates ({per_update:.3g} s per update, the median of {len(steady)} measured; "
            "evaluations and checkpoints add to it)",
            flush=True,
        )


class CheckpointCompletion(TrainerCallback):
    """Marks each checkpoint complete once all its files are written (every process's, for sharded saves), then
    deletes the checkpoints beyond `args.save_total_limit`: never the newest complete one, the
    best one, or one newer than the newest complete one (`hf_gpt1.training.run_folder.RunFolder`)."""

    def __init__(self):
        self.started = time.time()  # moved back by a resumed run's earlier time: markers record the run's total

    def on_save(self, args, state, control, **kwargs):
        run = RunFolder.of(args)  # this Trainer's folder: another Trainer of the process rotates its own
        PartialState().wait_for_everyone()
        if args.should_save:
            run.mark_complete(state.global_step, elapsed_s=time.time() - self.started, batch=batch_of(args))
            # 0 or None keeps every checkpoint
            run.rotate(args.save_total_limit or None, keep=state.best_model_checkpoint)


class GracefulStop(TrainerCallback):
    """SIGTERM (what schedulers and `kill` send), SIGHUP (a closed terminal) or Ctrl-C during training: the current
    optimizer step finishes, a complete checkpoint is saved, and training stops (`GPT1Trainer.train` then raises
    `TrainingInterrupted`). A second Ctrl-C stops at once. Which signals it handles is the process's policy
    (`hf_gpt1.process_control.handled_signals`: one inherited as ignored, such as `nohup`'s SIGHUP, stays ignored).
    Under several processes they agree at each step end, so every rank saves and stops at the same step, and each
    says which machine's launcher went away when that was the cause (`process_control.follow_launcher`)."""

    def __init__(self):
        self.received: int | None = None  # the signal that asked for the stop
        self.cause: str | None = None  # why, when not a signal sent to this run: "machine 1's launcher went away"
        self._previous: dict[int, Any] = {}

    @property
    def what(self) -> str:
        """The stop as the run says it: `SIGTERM`, or `SIGTERM (machine 1's launcher went away)`."""
        name = signal.Signals(self.received).name if self.received else "no signal"
        return f"{name} ({self.cause})" if self.cause else name

    def _handle(self, signum, frame) -> None:
        if self.received is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # the second Ctrl-C: at once
        self.received = signum
        print(
            f"\n{signal.Signals(signum).name}: finishing this step, then saving a checkpoint and stopping"
            f"{' (Ctrl-C again stops at once, without saving)' if signum == signal.SIGINT else ''}.",
            file=sys.stderr,
            flush=True,
        )

    def on_train_begin(self, args, state, control, **kwargs):
        self.received, self.cause = None, None
        self._previous = install_stop_handler(self._handle)

    def on_step_end(self, args, state, control, **kwargs):
        received = self.received or 0
        if args.world_size > 1:  # one rank may have been signalled alone: the largest signal number wins
            lost = launcher_lost()
            mine = [received, 1 if lost else 0, int(lost.get("machine", 0))]
            every = gather(torch.tensor([mine], device=args.device)).view(-1, 3).tolist()
            received = max(row[0] for row in every)
            self.received = received or None
            machines = sorted({row[2] for row in every if row[1]})
            if machines:
                self.cause = f"machine {', '.join(map(str, machines))}'s launcher went away"
        elif launcher_lost():
            self.cause = "its launcher went away"
        if received:
            control.should_save = True
            control.should_training_stop = True

    def on_train_end(self, args, state, control, **kwargs):
        restore_handlers(self._previous)
        self._previous = {}
