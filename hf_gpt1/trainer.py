"""The GPT-1 `Trainer` and the training arguments every hf_gpt1 recipe shares.

Everything here is plain transformers `Trainer` + Accelerate: multi-GPU, multi-node, FSDP and DeepSpeed come from
`accelerate launch --config_file recipes/configs/<...>.yaml`, never from code of ours. What `GPT1Trainer` adds:
GPT-1's weight-decay grouping, L1/L2 logging, evaluation in input order, checkpoints that are marked complete before
older ones are rotated away, and a clear stop when the loss stops being finite or the disk fills up.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import math
import platform
import shutil
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import SequentialSampler
from transformers import Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, has_length
from transformers.utils import is_torch_tf32_available

from .checkpoints import last_complete_checkpoint, mark_complete, rotate_checkpoints

__all__ = [
    "GPT1Trainer",
    "RecipeTrainingArguments",
    "StepClock",
    "TrainingError",
    "check_finite_floats",
    "retain_freed_cpu_memory",
]


class TrainingError(RuntimeError):
    """Training cannot go on (a non-finite loss, a full disk); the message says why and how to continue."""


@dataclass
class RecipeTrainingArguments(TrainingArguments):
    """`TrainingArguments` plus what every hf_gpt1 recipe adds: run ownership, resume, `--bf16` on CPU, TF32 on
    CUDA and the CPU allocator switch."""

    logging_steps: float = field(default=10, metadata={"help": "Log every N steps."})
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Empty an output dir holding another run first (not with --resume)."}
    )
    resume: bool = field(default=False, metadata={"help": "Continue from the newest complete checkpoint."})
    logging_nan_inf_filter: bool = field(
        default=False,
        metadata={"help": "Hide NaN/inf losses from the logs (transformers' default); off: a non-finite loss stops."},
    )
    do_train: bool = field(default=True, metadata={"help": "Train (false: evaluate/predict a trained model only)."})
    tf32: bool | None = field(
        default=None,
        metadata={"help": "CUDA fp32 matmuls in TF32 (default: on with a CUDA GPU; --tf32 false keeps full fp32)."},
    )
    retain_cpu_memory: bool = field(
        default=False,
        metadata={
            "help": "CPU training: keep freed memory in the process (glibc mallopt, process-wide) so the next step "
            "reuses it instead of page-faulting it in again; best where every batch has one shape."
        },
    )

    def __post_init__(self):
        check_finite_floats(self)
        for name in ("per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} {getattr(self, name)} must be a positive integer.")
        for name in ("learning_rate", "weight_decay", "warmup_steps", "num_train_epochs", "max_grad_norm"):
            if getattr(self, name) < 0:
                raise ValueError(f"--{name} {getattr(self, name)} must be >= 0.")
        if self.save_total_limit is not None and self.save_total_limit < 1:
            raise ValueError(f"--save_total_limit {self.save_total_limit} must be >= 1 (leave it out to keep all).")
        if self.resume and self.overwrite_output_dir:
            raise ValueError(
                "--resume continues the run in the output dir and --overwrite_output_dir deletes it: pass one of them."
            )
        # Without an accelerator, `use_cpu` is what makes three things work: Trainer refuses `--bf16` otherwise (and
        # on CPUs with AMX bf16 is the fast path), only with it does Accelerate set up CPU distributed training
        # (gloo) under `accelerate launch --multi_gpu` / `torchrun` (without it each process believes it is rank 0
        # of 1 and trains alone on all the data), and data loaders do not ask for pinned memory.
        if not torch.accelerator.is_available():
            self.use_cpu = True
        if not self.use_cpu and torch.cuda.is_available():
            self._cuda_defaults()
        super().__post_init__()

    def _cuda_defaults(self) -> None:
        if self.tf32 is None and is_torch_tf32_available():
            self.tf32 = True  # fp32 matmuls on Ampere or newer run on TF32 tensor cores unless --tf32 false
        if self.accelerator_config is None:
            # Batches come from pinned memory (`dataloader_pin_memory`); a blocking copy of each one to the GPU would
            # wait for every kernel queued before it, so the host could never prepare a step while the GPU runs one.
            self.accelerator_config = {"non_blocking": True}


def check_finite_floats(args: object) -> None:
    """Refuses NaN and infinite values in every float field of an argument dataclass (`--lm_coef inf` would train an
    all-NaN model to the end and save it)."""
    for item in dataclasses.fields(args):
        value = getattr(args, item.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"--{item.name} {value} is not a finite number.")


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


class _SteadyState(TrainerCallback):
    """Steady-state training speed: the steps after the first tenth of the run (at least the first step, which
    compiles under `--torch_compile` and makes the first allocations), without the ones an evaluation or a
    checkpoint interrupted. The trainer counts each step's tokens (the attention mask's ones, else every input id) on
    the device; they and the step times are read when the Trainer has just synchronised to log the loss, so this adds
    no sync of its own and keeps no more than a logging interval of device objects."""

    def __init__(self, trainer: GPT1Trainer):
        self.trainer = trainer
        self.clock: StepClock | None = None
        self.steps: list[int] = []  # the global step of each timed step
        self.tokens: list[int] = []  # its tokens on this process, once read
        self.unread: list[torch.Tensor | int] = []  # token counts of the steps since the last reading
        self.interrupted: set[int] = set()  # steps whose interval holds an evaluation or a save
        self.graphs = 0  # dynamo's count of compiled graphs at the end of the first step

    def on_train_begin(self, args, state, control, **kwargs):
        self.clock, self.steps, self.tokens, self.unread, self.interrupted = StepClock(args.device), [], [], [], set()
        self.trainer._step_tokens = 0
        self.clock.mark()

    def on_step_end(self, args, state, control, **kwargs):
        self.clock.mark()
        self.steps.append(state.global_step)
        self.unread.append(self.trainer._step_tokens)
        self.trainer._step_tokens = 0
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
        self._read()
        if self.clock is None or len(self.steps) < 3:
            return None
        seconds = self.clock.seconds  # seconds[i]: the step that ended at mark i + 1
        skip = max(1, len(seconds) // 10)
        kept = [i for i in range(skip, len(seconds)) if self.steps[i] not in self.interrupted]
        if not kept:
            return None
        tokens = torch.tensor(sum(self.tokens[i] for i in kept), device=self.trainer.args.device)
        tokens = float(self.trainer.accelerator.reduce(tokens, reduction="sum"))
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


class GPT1Trainer(Trainer):
    """`Trainer` with GPT-1's optimizer grouping, L1/L2 logging and crash-safe checkpoints.

    * Weight decay (decoupled, as the original Adam "L2" of 0.01) applies to matrices only: tensors of rank ≥ 2
      (embeddings and projections), never to biases or LayerNorm gains — the original code's `vector_l2=False`.
    * When the model returns `clf_loss` and `lm_loss` (the fine-tuning heads), both are logged beside `loss`.
    * Evaluation and prediction read the data in order, whatever `train_sampling_strategy` says (transformers would
      group eval batches by length too): `predict()`'s row i is example i.
    * A checkpoint is marked complete (`hf_gpt1.checkpoints.mark_complete`) before older ones are rotated away; no
      model or checkpoint is written from non-finite weights, and a non-finite training loss or a full disk stops the
      run with a `TrainingError` that names the last good checkpoint.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._component_sums: dict[str, float] = defaultdict(float)
        self._component_counts: dict[str, int] = defaultdict(int)
        self._step_tokens: torch.Tensor | int = 0  # this optimizer step's tokens so far, on the device
        self._steady_state = _SteadyState(self)
        self.add_callback(self._steady_state)

    def steady_state(self) -> dict[str, float] | None:
        """The last `train()`'s steady-state speed (see `_SteadyState`): `steps`, `steps_per_s`, `tokens_per_s`
        (all processes), `first_step_s`, `max_step_over_median` and `graphs_compiled_after_first_step`; None for a
        run too short to tell."""
        return self._steady_state.summary()

    def training_step(self, model, inputs, *args, **kwargs):
        mask = inputs.get("attention_mask")
        # counted on the device, without a sync (read at the next log line)
        self._step_tokens = self._step_tokens + (mask.sum() if mask is not None else inputs["input_ids"].numel())
        return super().training_step(model, inputs, *args, **kwargs)

    def get_decay_parameter_names(self, model: torch.nn.Module) -> list[str]:
        return [name for name, param in model.named_parameters() if param.ndim >= 2]

    def _get_dataloader(self, *args, is_training: bool = False, **kwargs):
        # `dataloader_drop_last` is for training batches (the original drops the partial last one); transformers would
        # apply it to evaluation and prediction too, silently losing the last rows of a test file.
        if is_training:
            return super()._get_dataloader(*args, is_training=True, **kwargs)
        with _overriding(self.args, dataloader_drop_last=False):
            return super()._get_dataloader(*args, **kwargs)

    def _get_eval_sampler(self, eval_dataset):
        if eval_dataset is None or not has_length(eval_dataset):
            return None
        # Several processes: Accelerate shards the data in order and `gather_for_metrics` restores that order.
        return SequentialSampler(eval_dataset) if self.args.world_size <= 1 else None

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        if model.training:
            for key in ("clf_loss", "lm_loss"):
                value = outputs.get(key) if isinstance(outputs, dict) else getattr(outputs, key, None)
                if value is not None:
                    # detached and summed on the device: read (synchronised) only when a log line is written
                    self._component_sums[key] = self._component_sums[key] + value.detach().float()
                    self._component_counts[key] += 1
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], *args, **kwargs) -> None:
        if "loss" in logs:  # a training log: add the running means of L2 and L1 since the last one
            keys = sorted(self._component_sums)
            if keys:
                means = torch.stack(
                    [torch.as_tensor(self._component_sums[k]) / self._component_counts[k] for k in keys]
                )
                if self.args.world_size > 1:  # every rank logs here: average over ranks, as Trainer does `loss`
                    means = self.accelerator.reduce(means.to(self.args.device), reduction="mean")
                for key, mean in zip(keys, means.tolist()):
                    logs[key] = round(mean, 4)
            self._component_sums.clear()
            self._component_counts.clear()
            for key in ("loss", "grad_norm"):
                if key in logs and not math.isfinite(logs[key]):
                    what = "the training loss" if key == "loss" else "the gradient norm"
                    self._stop_on_non_finite(f"{what} is {logs[key]}")
        super().log(logs, *args, **kwargs)

    def _stop_on_non_finite(self, what: str) -> None:
        last = last_complete_checkpoint(self.args.output_dir)
        resume = f"the last good checkpoint is {last}" if last else "no checkpoint was written before it"
        raise TrainingError(
            f"Training stopped at step {self.state.global_step}: {what}, so the weights are no longer usable and "
            f"nothing more is saved; {resume}. Lower --learning_rate or --lm_coef, or check the data, then start "
            "again (--resume continues from that checkpoint)."
        )

    def _issue_warnings_after_load(self, load_result) -> None:
        # The tied LM head is stored once, as the token embedding: it is not "missing" from a checkpoint.
        tied = set(getattr(self.model, "_tied_weights_keys", None) or ())
        if tied & set(load_result.missing_keys):
            self.model.tie_weights()
        missing = [key for key in load_result.missing_keys if key not in tied]
        super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        # Checkpoints and the final model alike: weights that are no longer finite are never written.
        if not bool(torch.stack([torch.isfinite(p).all() for p in self.model.parameters()]).all()):  # one sync
            self._stop_on_non_finite("some weights are NaN or infinite")
        super().save_model(output_dir, _internal_call=_internal_call)

    def _save_checkpoint(self, model, trial) -> None:
        folder = Path(self._get_output_dir(trial=trial)) / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        try:
            with _overriding(self.args, save_total_limit=None):  # rotated below, once this checkpoint is complete
                super()._save_checkpoint(model, trial)
            self.accelerator.wait_for_everyone()  # sharded saves: every rank's files are written
            if self.args.should_save:
                mark_complete(folder, self.state.global_step)
        except TrainingError:
            raise
        except (OSError, RuntimeError) as err:
            raise self._save_error(folder, err) from err
        if self.args.should_save:
            rotate_checkpoints(folder.parent, self.args.save_total_limit, keep=self.state.best_model_checkpoint)

    def _save_error(self, folder: Path, err: BaseException) -> TrainingError:
        """A save failure as one line: the disk is full (ENOSPC, or torch's writer failing with no space left), or
        the system's own message; either way what `--resume` will do."""
        existing = folder.parent if folder.parent.exists() else Path.cwd()
        full = any(getattr(e, "errno", None) == errno.ENOSPC for e in _chain(err))
        full = full or shutil.disk_usage(existing).free < 1 << 20
        cause = f"the disk holding {folder.parent} is full" if full else f"{type(err).__name__}: {err}"
        last = last_complete_checkpoint(folder.parent)
        resume = f"--resume continues from {last}" if last else "no complete checkpoint exists yet"
        return TrainingError(f"Could not write {folder}: {cause}. Free space, then rerun with --resume; {resume}.")


@contextmanager
def _overriding(args: TrainingArguments, **values: Any) -> Iterator[None]:
    """Sets argument values for the duration of one Trainer call that reads them from `self.args`."""
    saved = {name: getattr(args, name) for name in values}
    for name, value in values.items():
        setattr(args, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(args, name, value)


def _chain(err: BaseException) -> list[BaseException]:
    seen = []
    while err is not None and err not in seen:
        seen.append(err)
        err = err.__cause__ or err.__context__
    return seen


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, glibc's malloc.h


def retain_freed_cpu_memory() -> bool:
    """Keeps the memory PyTorch frees on the CPU inside the process, so the next training step reuses it.

    glibc serves each allocation above its mmap threshold (32 MiB at most) with a fresh `mmap` and unmaps it when it
    is freed, so every training step faults all its large tensors in again page by page: the LM head's logits, the
    embedding and master-weight gradients, AdamW's temporaries (benchmarks/README.md has the measurements). Here
    large allocations come from the heap and freed memory is not trimmed back to the system, so after the first
    steps none fault. The process's resident memory then stays at its training high-water mark, as a GPU's caching
    allocator keeps its blocks; with batches of varying shapes the never-trimmed heap fragments and grows.
    Process-wide: the recipes call it only when `--retain_cpu_memory` is on (the pre-training recipe's default).

    Returns:
        `bool`: whether the setting took effect (False where the C library is not glibc).
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL("libc.so.6")
    return bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
