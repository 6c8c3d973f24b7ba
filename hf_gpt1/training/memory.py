# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""CPU training's allocator setting: freed memory kept in the process (the pre-training recipe's default)."""

from __future__ import annotations

import ctypes
import platform

__all__ = ["apply_memory_arguments", "retain_freed_cpu_memory"]

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


def apply_memory_arguments(args) -> None:
    """What a run's `--retain_cpu_memory` asks for, applied by the run functions (process-wide) on CPU training."""
    if args.retain_cpu_memory and args.device.type == "cpu":
        retain_freed_cpu_memory()
