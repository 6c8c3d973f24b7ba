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


def launch(out: Path, *runs: str, resume: bool = False) -> subprocess.CompletedProcess:
    """One 2-process launch training `runs` (`TAG:MODE[:SAVE_AT:DIE_AT]`) in turn (tests/training/fsdp_worker.py)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("LOCAL_RANK", None), env.pop("WORLD_SIZE", None)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    command += ["-m", "tests.training.fsdp_worker", "--out", str(out), "--steps", str(STEPS)]
    command += [word for run in runs for word in ("--train", run)] + (["--resume"] if resume else [])
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def losses(out: Path, tag: str) -> dict[int, float]:
    return {int(k): v for k, v in json.loads((out / f"losses-{tag}.json").read_text()).items()}


def test_fully_sharded_training_matches_ddp_resumes_exactly_and_loads(tmp_path):
    # one launch (a launch costs more than these runs): DDP, FSDP, then FSDP killed (SIGKILL) in step 4 after a
    # sharded checkpoint at step 3; a second launch resumes from it
    killed = launch(tmp_path, "ddp:ddp", "fsdp:fsdp", "resumed:fsdp:3:4")
    assert killed.returncode != 0 and not (tmp_path / "losses-resumed.json").exists()
    assert (tmp_path / "checkpoint-resumed" / "step.json").exists()
    ddp, fsdp = losses(tmp_path, "ddp"), losses(tmp_path, "fsdp")  # finished before the kill
    assert sorted(fsdp) == list(range(1, STEPS + 1))
    assert max(abs(ddp[s] - fsdp[s]) for s in ddp) <= LOSS_ATOL, (ddp, fsdp)
    resumed = launch(tmp_path, "resumed:fsdp", resume=True)
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
