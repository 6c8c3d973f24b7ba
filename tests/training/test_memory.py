# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The process's memory settings (hf_gpt1.training.memory): freed CPU memory kept for reuse, and
set only when a run asks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.utils import REPO_ROOT, lm_trainer


def test_retained_cpu_memory_is_reused_without_page_faults():
    """A freed 64 MiB tensor's pages serve the next ones instead of being faulted in again (in a fresh process: the
    setting is process-wide). Without the setting every allocation faults all its pages; with it, after the first
    allocations the heap serves them without faults — not always from the very next one (observed: 0 to 2 of them
    still faulting), so the fewest faults of five allocations is compared."""
    code = """
import resource, torch
from hf_gpt1.training.memory import retain_freed_cpu_memory
def faults_of_an_allocation():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(1 << 24).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults_of_an_allocation()
plain = min(faults_of_an_allocation() for _ in range(5))
applied = retain_freed_cpu_memory()
faults_of_an_allocation()  # the first allocation after the switch grows the heap
print(plain, applied, min(faults_of_an_allocation() for _ in range(5)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    plain, applied, retained = out.stdout.split()
    if applied != "True":
        pytest.skip("retain_freed_cpu_memory needs glibc")
    assert int(plain) > 10_000  # 16,384 pages of 4 KiB, faulted in on every one of the five allocations
    assert int(retained) < 100


def test_constructing_a_trainer_changes_no_process_setting(tmp_path, monkeypatch):
    from hf_gpt1.training import memory

    calls = []
    monkeypatch.setattr(memory, "retain_freed_cpu_memory", lambda: calls.append(1))
    lm_trainer(tmp_path, retain_cpu_memory=True)
    assert calls == []  # the recipes' run functions apply it, never the Trainer behind your back
