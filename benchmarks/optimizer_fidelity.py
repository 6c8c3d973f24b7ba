# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""How far the recipes' optimizer is from the original code's, over one fine-tuning run.

The recipes use transformers' `AdamW` and linear warm-up/decay schedule. The original code
(openai/finetune-transformer-lm, `opt.py`) differs in three details: its ε is added to √v before the bias correction
(so it is effectively ε/√(1-β₂ᵗ), larger early on), its decoupled L2 is multiplied by the bias-corrected step size
(AdamW's by the plain learning rate), and its `warmup_linear` decays as (1 - t/T) after warm-up where transformers
decays as (T - t)/(T - W). Both optimizers here start from the same weights, see the same batches and dropout masks;
the script reports the distance between the two final parameter sets, relative to how far training moved them, and
both losses.

    python benchmarks/optimizer_fidelity.py --out benchmarks/results/optimizer_fidelity.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hf_gpt1 import GPT1Config, GPT1ForSequenceClassification, add_gpt1_special_tokens  # noqa: E402
from hf_gpt1.data.files import load_glue_tsv  # noqa: E402
from hf_gpt1.data.transforms import prepare_dataset  # noqa: E402
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer  # noqa: E402


class OriginalAdam(torch.optim.Optimizer):
    """The original code's Adam (`opt.py`): `lrt = lr·√(1-β₂ᵗ)/(1-β₁ᵗ)·warmup_linear((t-1)/T)`, then
    `p ← p - lrt·(m/(√v + ε) + l2·p)`, the L2 term only for matrices (`vector_l2=False`)."""

    def __init__(self, params, lr, total_steps, warmup=0.002, b1=0.9, b2=0.999, e=1e-8, l2=0.01):
        super().__init__(params, dict(lr=lr, b1=b1, b2=b2, e=e, l2=l2))
        self.total_steps, self.warmup, self.t = total_steps, warmup, 0

    def schedule(self, x: float) -> float:
        """`warmup_linear` of opt.py at progress x = t / t_total."""
        return (x / self.warmup if x <= self.warmup else 1.0) * (1.0 - x)

    @torch.no_grad()
    def step(self):
        factor = self.schedule(self.t / self.total_steps)
        self.t += 1
        for group in self.param_groups:
            b1, b2, e = group["b1"], group["b2"], group["e"]
            lrt = group["lr"] * math.sqrt(1 - b2**self.t) / (1 - b1**self.t) * factor
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["m"], state["v"] = torch.zeros_like(p), torch.zeros_like(p)
                m, v = state["m"], state["v"]
                m.mul_(b1).add_(p.grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                update = m / (v.sqrt() + e)
                if p.ndim > 1 and group["l2"] > 0:
                    update = update + group["l2"] * p
                p.sub_(lrt * update)


def transformers_optimizer(model, lr, total_steps, warmup=0.002, weight_decay=0.01):
    """What `GPT1Trainer` builds from the recipe defaults: AdamW (decay on matrices) + linear warm-up and decay."""
    from transformers import get_linear_schedule_with_warmup

    decay = [p for p in model.parameters() if p.ndim >= 2]
    other = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": other, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(warmup * total_steps), total_steps)
    return optimizer, scheduler


def run(args) -> dict:
    torch.manual_seed(0)
    rows = load_glue_tsv(args.glue, "sst2", "train").select(range(args.rows))
    tokenizer = train_gpt1_tokenizer(rows["sentence"], vocab_size=args.vocab)
    ids = add_gpt1_special_tokens(tokenizer)
    dataset, collator = prepare_dataset(rows, tokenizer, "sst2", max_length=64)
    config = GPT1Config(
        vocab_size=len(tokenizer), n_positions=64, n_embd=args.width, n_layer=args.layers, n_head=4,
        num_labels=2, start_token_id=ids["start"], delimiter_token_id=ids["delimiter"],
        extract_token_id=ids["extract"], pad_token_id=ids["pad"],
    )  # fmt: skip
    initial = GPT1ForSequenceClassification(config).state_dict()
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(1))
    batches = [
        collator([dataset[int(i)] for i in order[start : start + args.batch]])
        for start in range(0, len(dataset) - args.batch + 1, args.batch)
    ] * args.epochs
    total = len(batches)
    results = {}
    for name in ("transformers", "original"):
        model = GPT1ForSequenceClassification(config)
        model.load_state_dict(initial)
        model.train()
        if name == "transformers":
            optimizer, scheduler = transformers_optimizer(model, args.lr, total)
        else:
            optimizer, scheduler = OriginalAdam(model.parameters(), args.lr, total), None
        torch.manual_seed(2)  # the same dropout masks for both
        losses, started = [], time.time()
        for batch in batches:
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            if scheduler is not None:
                scheduler.step()
            losses.append(float(loss))
        results[name] = {
            "weights": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "mean loss, last 10 steps": sum(losses[-10:]) / 10,
            "seconds": time.time() - started,
        }
    moved = math.sqrt(sum(float((results["transformers"]["weights"][k] - v).pow(2).sum()) for k, v in initial.items()))
    apart = math.sqrt(
        sum(
            float((results["transformers"]["weights"][k] - w).pow(2).sum())
            for k, w in results["original"]["weights"].items()
        )
    )
    return {
        "command": " ".join(sys.argv),
        "setup": vars(args) | {"steps": total, "parameters": sum(v.numel() for v in initial.values())},
        "parameter distance between the two runs / distance travelled": apart / moved,
        "mean training loss, last 10 steps": {
            name: results[name]["mean loss, last 10 steps"] for name in ("transformers", "original")
        },
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--glue", default=str(ROOT.parent / "shared" / "data" / "glue"), help="GLUE TSV root")
    parser.add_argument("--rows", type=int, default=1024, help="SST-2 training rows")
    parser.add_argument("--vocab", type=int, default=2000, help="BPE trained on those rows")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32, help="the paper's fine-tuning batch")
    parser.add_argument("--epochs", type=int, default=3, help="the paper's fine-tuning epochs")
    parser.add_argument("--lr", type=float, default=6.25e-5, help="the paper's fine-tuning learning rate")
    parser.add_argument("--out", help="write the results here as JSON")
    args = parser.parse_args(argv)
    results = run(args)
    print(json.dumps(results, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
