# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""FSDP2 trains GPT-1: `fully_shard` over its `GPT1Block`s, two processes on the CPU (gloo), against DDP on the same
global batches (tests/training/fsdp_worker.py). Accelerate applies FSDP on accelerators only, so the wrapping is
torch's own, as accelerate's TRANSFORMER_BASED_WRAP does it; the GPU's `accelerate launch` path is gpu_check's `fsdp`
stage. Observed on 2 CPU cores (torch 2.13): FSDP's losses equal DDP's to the bit, the resumed run's too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from hf_gpt1 import GPT1LMHeadModel
from tests.utils import REPO_ROOT

pytestmark = pytest.mark.slow  # the full tier: multi-process launches

LOSS_ATOL = 1e-5  # FSDP's reduce-scatter sums in another order than DDP's all-reduce: fp32 rounding only
STEPS = 6


def launch(out: Path, tag: str, mode: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("LOCAL_RANK", None), env.pop("WORLD_SIZE", None)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    command += ["-m", "tests.training.fsdp_worker", "--out", str(out), "--tag", tag, "--mode", mode]
    command += ["--steps", str(STEPS), *extra]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def losses(out: Path, tag: str) -> dict[int, float]:
    return {int(k): v for k, v in json.loads((out / f"losses-{tag}.json").read_text()).items()}


def test_fully_sharded_training_matches_ddp_resumes_exactly_and_loads(tmp_path):
    for tag, mode, extra in (("ddp", "ddp", ()), ("fsdp", "fsdp", ())):
        done = launch(tmp_path, tag, mode, *extra)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    ddp, fsdp = losses(tmp_path, "ddp"), losses(tmp_path, "fsdp")
    assert sorted(fsdp) == list(range(1, STEPS + 1))
    assert max(abs(ddp[s] - fsdp[s]) for s in ddp) <= LOSS_ATOL, (ddp, fsdp)
    # killed (SIGKILL) in step 4, after a sharded checkpoint at step 3; resumed from it
    killed = launch(tmp_path, "resumed", "fsdp", "--save_at", "3", "--die_at", "4")
    assert killed.returncode != 0 and not (tmp_path / "losses-resumed.json").exists()
    assert (tmp_path / "checkpoint-resumed" / "step.json").exists()
    resumed = launch(tmp_path, "resumed", "fsdp", "--resume")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-4000:]
    after = losses(tmp_path, "resumed")
    assert sorted(after) == [4, 5, 6] and all(after[s] == fsdp[s] for s in after), (after, fsdp)
    # the gathered weights: a folder from_pretrained loads, tied, equal to the uninterrupted run's and near DDP's
    models = {tag: GPT1LMHeadModel.from_pretrained(tmp_path / f"model-{tag}") for tag in ("ddp", "fsdp", "resumed")}
    for model in models.values():
        assert model.lm_head.weight.data_ptr() == model.transformer.tokens_embed.weight.data_ptr()
    for name, weight in models["fsdp"].state_dict().items():
        assert torch.equal(weight, models["resumed"].state_dict()[name]), name
        assert torch.allclose(weight, models["ddp"].state_dict()[name], atol=1e-5), name
