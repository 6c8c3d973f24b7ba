# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""One process of tests/training/test_fsdp.py, started by torchrun on the CPU (gloo): trains a tiny GPT-1 sharded
with FSDP2's `fully_shard` over its `GPT1Block`s (accelerate's TRANSFORMER_BASED_WRAP, which accelerate applies on
accelerators only), or replicated with DDP, on the same global batches; checkpoints through
torch.distributed.checkpoint (a sharded checkpoint, as accelerate's SHARDED_STATE_DICT writes) and can resume from one.
Writes `<out>/losses-<tag>.json` and, at the end, the full weights as a `save_pretrained` folder `<out>/model-<tag>`.

    torchrun --nproc_per_node 2 -m tests.training.fsdp_worker --out DIR --steps N --train TAG:MODE[:SAVE_AT:DIE_AT] ...
             [--resume]

Each `--train` trains in turn in the same launch (one process group: a launch costs more than a tiny run), MODE fsdp or
ddp; with SAVE_AT:DIE_AT it checkpoints at SAVE_AT and is SIGKILLed in the middle of DIE_AT (so it comes last).
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
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--train", action="append", required=True, help="TAG:MODE[:SAVE_AT:DIE_AT], in turn")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    for run in args.train:
        tag, mode, *kill = run.split(":")
        assert mode in ("fsdp", "ddp"), mode
        save_at, die_at = (int(kill[0]), int(kill[1])) if kill else (0, 0)
        train(args.out, tag, mode, args.steps, save_at, die_at, args.resume)
    dist.destroy_process_group()


def train(out: Path, tag: str, mode: str, steps: int, save_at: int, die_at: int, resume: bool) -> None:
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    # dropout off: the modes draw their masks differently; the original single table: L1 over both tables
    config = tiny_config(embd_pdrop=0.0, attn_pdrop=0.0, resid_pdrop=0.0, original_embedding_table=True)
    model = GPT1LMHeadModel(config)
    if mode == "fsdp":
        for block in model.transformer.h:  # each GPT1Block one unit (the model's _no_split_modules), then the root
            fully_shard(block)
        fully_shard(model)
        trained = model
    else:
        trained = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    checkpoint = out / f"checkpoint-{tag}"
    start = 0
    if resume:
        state = {"model": get_state_dict(model, optimizer)[0], "optim": get_state_dict(model, optimizer)[1]}
        dcp.load(state, checkpoint_id=str(checkpoint))
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
        start = json.loads((checkpoint / "step.json").read_text())["step"]
    losses = {}
    rows = slice(rank * GLOBAL_BATCH // world, (rank + 1) * GLOBAL_BATCH // world)
    for step in range(start + 1, steps + 1):
        ids = batch(step)[rows]
        loss = trained(input_ids=ids, labels=ids).loss
        loss.backward()
        if step == die_at:
            os.kill(os.getpid(), signal.SIGKILL)  # killed between its backward and its update
        optimizer.step()
        optimizer.zero_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses[step] = mean.item() / world
        if step == save_at:
            model_state, optim_state = get_state_dict(model, optimizer)
            dcp.save({"model": model_state, "optim": optim_state}, checkpoint_id=str(checkpoint))
            if rank == 0:
                (checkpoint / "step.json").write_text(json.dumps({"step": step}))
            dist.barrier()
    assert tied(model), "the LM head and the token table were untied by the wrapping"
    full = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))[0]
    if rank == 0:
        (out / f"losses-{tag}.json").write_text(json.dumps(losses))
        plain = GPT1LMHeadModel(config)
        plain.load_state_dict({k.removeprefix("module."): v for k, v in full.items()})
        assert tied(plain)
        plain.save_pretrained(out / f"model-{tag}")
    dist.barrier()


if __name__ == "__main__":
    main()
