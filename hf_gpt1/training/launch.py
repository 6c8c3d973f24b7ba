# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""What the machine and the launch decide, in one place: the arguments' machine-dependent defaults (computed when the
arguments are built, so `to_dict()` records them) and the environment a run settles once, when it starts.

No argument is changed after it is built: a run's data-driven decisions go through
[`~hf_gpt1.training.arguments.final_arguments`] only.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from collections.abc import Iterator
from typing import Any

import torch
from transformers import TrainingArguments
from transformers import logging as transformers_logging
from transformers.utils import is_torch_tf32_available

__all__ = [
    "COMPILE_PAYS_OFF_UPDATES",
    "CUDA_GRAPHS_MODE",
    "accelerator_config_default",
    "compiles_finetuning",
    "finetuning_compile_mode",
    "cpu_only",
    "engine_problem",
    "loader_workers_default",
    "machine_by_machine",
    "on_cuda",
    "precision_engine",
    "quiet_replicas",
    "settle_launch",
    "tf32_default",
]


def cpu_only() -> bool:
    """`--use_cpu`'s default: true without an accelerator. `use_cpu` is what makes three things work there: Trainer
    refuses `--bf16` otherwise (and on CPUs with AMX bf16 is the fast path), only with it does Accelerate set up CPU
    distributed training (gloo) under `accelerate launch --multi_gpu` / `torchrun` (without it each process believes
    it is rank 0 of 1 and trains alone on all the data), and data loaders do not ask for pinned memory."""
    return not torch.accelerator.is_available()


def on_cuda() -> bool:
    """`--torch_compile`'s default for pre-training: on with a CUDA GPU."""
    return torch.cuda.is_available()


# A fine-tuning run compiles by default from this many optimizer updates: compiling a length bucket's step costs
# ~22 s and saves ~3 ms a step (GPT-1 on an H100 at SST-2's 32 x 64, benchmarks/README.md "GPU"), so a run earns it
# back after ~7,000 updates (SST-2's 6,300 do not quite; MNLI's 36,800 do; RTE's 234 never).
COMPILE_PAYS_OFF_UPDATES = 7500


def compiles_finetuning(bf16: bool, updates: int | None) -> bool:
    """`--torch_compile`'s default for fine-tuning: on with a CUDA GPU under `--bf16` for a run of at least
    [`COMPILE_PAYS_OFF_UPDATES`] updates."""
    return torch.cuda.is_available() and bf16 and updates is not None and updates >= COMPILE_PAYS_OFF_UPDATES


# The compile mode that replays each compiled graph as a CUDA graph: one launch per graph instead of one per kernel.
CUDA_GRAPHS_MODE = "reduce-overhead"


def finetuning_compile_mode(args: TrainingArguments, compiled: bool) -> str | None:
    """`--torch_compile_mode`'s default for a fine-tuning run: [`CUDA_GRAPHS_MODE`] when it compiles on one CUDA GPU
    (its step is one graph per length bucket, and at GPT-1's size the host launches kernels slower than the GPU runs
    them); None (the compiler's default) otherwise, when the mode is given, or under several processes or an engine
    that owns precision, whose collectives run between the graphs."""
    if not compiled or args.torch_compile_mode is not None or not torch.cuda.is_available():
        return None
    return CUDA_GRAPHS_MODE if args.world_size == 1 and not precision_engine(args) else None


def loader_workers_default() -> int:
    """`--dataloader_num_workers`'s default: on a CUDA GPU two worker processes prepare (and pin) the next batches
    while the GPU runs a step; elsewhere the main process collates (a CPU step has no idle time to fill)."""
    return 2 if torch.cuda.is_available() else 0


def tf32_default() -> bool | None:
    """`--tf32`'s default: fp32 matmuls on Ampere or newer run on TF32 tensor cores (None: transformers' default)."""
    return True if torch.cuda.is_available() and is_torch_tf32_available() else None


def accelerator_config_default() -> dict[str, Any] | None:
    """`--accelerator_config`'s default on a CUDA GPU: batches come from pinned memory, and a blocking copy of each one
    would wait for every kernel queued before it, so the host could never prepare a step while the GPU runs one."""
    return {"non_blocking": True} if torch.cuda.is_available() else None


def _env_flag(name: str) -> bool:
    """An accelerate switch in the environment (`ACCELERATE_USE_FSDP`, …), read as accelerate reads it (`str_to_bool`:
    true, 1, yes, on, …); unset or empty is off."""
    from accelerate.utils import str_to_bool

    value = os.environ.get(name, "").strip()
    return bool(value) and bool(str_to_bool(value))


def precision_engine(args: TrainingArguments | None = None) -> str | None:
    """The engine that owns mixed precision in this launch: "FSDP" or "DeepSpeed" (`accelerate launch` with such a
    config, or `--fsdp` / `--deepspeed`), else None. Such an engine keeps fp32 weights and computes in bf16 itself
    (FSDP2's `MixedPrecisionPolicy`, DeepSpeed's bf16 master weights): a run under it trains fp32 weights with
    Trainer's own optimizer, whose parameters the engine swaps for their shards."""
    if _env_flag("ACCELERATE_USE_FSDP") or (args is not None and args.fsdp):
        return "FSDP"
    if _env_flag("ACCELERATE_USE_DEEPSPEED") or (args is not None and args.deepspeed):
        return "DeepSpeed"
    return None


def engine_problem(args: TrainingArguments) -> str | None:
    """What stops the launch's engine ([`precision_engine`]) on this machine, as one line, or None. Called while the
    arguments are built, before transformers': without the deepspeed package, `--deepspeed cfg.json` or an
    `accelerate launch` with a DeepSpeed config ends in transformers' traceback from inside TrainingArguments."""
    if precision_engine(args) != "DeepSpeed" or importlib.util.find_spec("deepspeed") is not None:
        return None
    given = f"--deepspeed {args.deepspeed}" if args.deepspeed else "ACCELERATE_USE_DEEPSPEED=true (accelerate launch)"
    return f"{given} trains with DeepSpeed, which is not installed here: pip install deepspeed, or launch without it."


def quiet_replicas(args: TrainingArguments) -> None:
    """Under several processes, only the main one logs warnings: the others log at `--log_level_replica`."""
    if args.process_index > 0:
        level = args.get_process_log_level()
        transformers_logging.set_verbosity(level)
        logging.getLogger("hf_gpt1").setLevel(level)


@contextlib.contextmanager
def machine_by_machine(args: TrainingArguments, desc: str) -> Iterator[None]:
    """Around work that fills the datasets cache (packing, tokenization): machine 0's main process does it first while
    every other process waits; then each other machine's main process (which finds machine 0's copy where machines
    share one cache folder, and does the work into its own cache otherwise) while the rest of its machine waits; then
    the rest, which read their machine's copy. So a shared cache is never filled by several machines at once, and a
    machine's cache by one process only. One machine: its main process first, as `main_process_first`."""
    with args.main_process_first(local=False, desc=f"{desc} (machine 0)"):
        with args.main_process_first(local=True, desc=desc):
            yield


def settle_launch(args: TrainingArguments) -> list[str]:
    """Makes the launch's environment decisions, once, when a run starts (before the model loads); returns the notes
    the start screen prints: what the launch does that differs from what it asked for.

    * Under several processes only the main one logs warnings (`--log_level_replica`, "error" by default).
    * Without an accelerator, DeepSpeed (if installed) is told the CPU is its device (`DS_ACCELERATOR=cpu`) instead of
      warning on every process that it found none.
    * Accelerate shards with FSDP on accelerators only: on the CPU it trains an FSDP launch as DDP (gloo). Loading
      follows (`ACCELERATE_USE_FSDP=false`), or transformers would load the weights for FSDP's rank-0 broadcast (meta
      tensors on the other ranks, which DDP cannot move).
    """
    quiet_replicas(args)
    if cpu_only():
        # DeepSpeed, where installed, is imported by every Trainer, and on a machine without an accelerator it warns
        # on each process that it "was unable to detect" one: told so, it does not.
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    notes = []
    # `accelerate launch` sets MASTER_PORT when asked for several processes, and WORLD_SIZE when it started them.
    if args.world_size == 1 and "MASTER_PORT" in os.environ and "WORLD_SIZE" not in os.environ:
        notes.append(
            "accelerate launch was asked for several processes and started one (with --cpu, or use_cpu in its config, "
            "it starts one for FSDP, DeepSpeed and multi-GPU configs); `accelerate launch --multi_gpu "
            "--num_processes N` runs N on the CPU (docs/SCALING.md)."
        )
    if args.use_cpu and _env_flag("ACCELERATE_USE_FSDP"):
        os.environ["ACCELERATE_USE_FSDP"] = "false"
        trained = (
            "trains this one process unsharded"
            if args.world_size == 1
            else f"trains these {args.world_size} processes as DDP (gloo)"
        )
        notes.append(f"FSDP shards over accelerators; on the CPU accelerate {trained}, each holding the whole model "
                     "and optimizer.")  # fmt: skip
    engine = precision_engine(args)
    if engine and args.bf16:
        notes.append(
            f"--bf16 under {engine}: {engine} owns mixed precision (fp32 weights, bf16 compute); the run keeps fp32 "
            "weights and Trainer's own optimizer, without fp32 master copies."
        )
    return notes
