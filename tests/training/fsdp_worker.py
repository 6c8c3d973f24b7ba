# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""One process of tests/training/test_fsdp.py, started by torchrun on the CPU (gloo): trains a tiny GPT-1 sharded
with FSDP2's `fully_shard` over its `GPT1Block`s (accelerate's TRANSFORMER_BASED_WRAP, which accelerate applies on
accelerators only), or replicated with DDP, on the same global batches; checkpoints through
torch.distributed.checkpoint (a sharded checkpoint, as accelerate's SHARDED_STATE_DICT writes) and can resume from one.
Writes `<out>/losses-<tag>.json` and, at the end, the full weights as a `save_pretrained` folder `<out>/model-<tag>`.

    torchrun --nproc_per_node 2 -m tests.training.fsdp_worker --out DIR --tag T --mode fsdp|ddp --steps N
             [--save_at K --die_at K+1] [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel

from hf_gpt1 import GPT1LMHeadModel
from tests.utils import tiny_config

GLOBAL_BATCH, LENGTH = 4, 16


def batch(step: int) -> torch.Tensor:
    """The global batch of `step` (the same in every mode and process), before each rank takes its rows."""
    return torch.randint(0, 56, (GLOBAL_BATCH, LENGTH), generator=torch.Generator().manual_seed(1000 + step))


def tied(model: GPT1LMHeadModel) -> bool:
    return model.lm_head.weight is model.transformer.tokens_embed.weight


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--mode", choices=("fsdp", "ddp"), required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--save_at", type=int, default=0)
    parser.add_argument("--die_at", type=int, default=0, help="SIGKILL this process in the middle of that step")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    # dropout off: the modes draw their masks differently; the original single table: L1 over both tables
    config = tiny_config(embd_pdrop=0.0, attn_pdrop=0.0, resid_pdrop=0.0, original_embedding_table=True)
    model = GPT1LMHeadModel(config)
    if args.mode == "fsdp":
        for block in model.transformer.h:  # each GPT1Block one unit (the model's _no_split_modules), then the root
            fully_shard(block)
        fully_shard(model)
        trained = model
    else:
        trained = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    checkpoint = args.out / f"checkpoint-{args.tag}"
    start = 0
    if args.resume:
        state = {"model": get_state_dict(model, optimizer)[0], "optim": get_state_dict(model, optimizer)[1]}
        dcp.load(state, checkpoint_id=str(checkpoint))
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
        start = json.loads((checkpoint / "step.json").read_text())["step"]
    losses = {}
    rows = slice(rank * GLOBAL_BATCH // world, (rank + 1) * GLOBAL_BATCH // world)
    for step in range(start + 1, args.steps + 1):
        ids = batch(step)[rows]
        loss = trained(input_ids=ids, labels=ids).loss
        loss.backward()
        if step == args.die_at:
            os.kill(os.getpid(), signal.SIGKILL)  # killed between its backward and its update
        optimizer.step()
        optimizer.zero_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses[step] = mean.item() / world
        if step == args.save_at:
            model_state, optim_state = get_state_dict(model, optimizer)
            dcp.save({"model": model_state, "optim": optim_state}, checkpoint_id=str(checkpoint))
            if rank == 0:
                (checkpoint / "step.json").write_text(json.dumps({"step": step}))
            dist.barrier()
    assert tied(model), "the LM head and the token table were untied by the wrapping"
    full = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))[0]
    if rank == 0:
        (args.out / f"losses-{args.tag}.json").write_text(json.dumps(losses))
        plain = GPT1LMHeadModel(config)
        plain.load_state_dict({k.removeprefix("module."): v for k, v in full.items()})
        assert tied(plain)
        plain.save_pretrained(args.out / f"model-{args.tag}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
