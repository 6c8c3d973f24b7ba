"""Does bf16 fine-tuning reach the fp32 metric? SST-2 accuracy, fp32 vs bf16, several seeds, same everything else.

bf16 here is the mode of the benchmark: bf16 weights and activations end to end, AdamW on fp32 master weights
(`bench_vs_openai_gpt.MasterWeightAdamW`); `--bf16-autocast` compares plain autocast instead. No pre-trained GPT-1
weights are reachable offline, so a small GPT-1 (default 4 × 256) is trained from scratch on a subset of SST-2 train
with L3 (λ = 0.5) and evaluated on the full SST-2 dev set.

    HF_HUB_OFFLINE=1 python benchmarks/bf16_parity.py --seeds 0,1,2 --json benchmarks/bf16_parity.json
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import random
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_vs_openai_gpt", HERE / "bench_vs_openai_gpt.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

from hf_gpt1 import GPT1Config, GPT1ForSequenceClassification  # noqa: E402


def sst2(split: str, limit: int | None) -> tuple[list[list[int]], list[int]]:
    path = bench.DATA / "glue" / "SST-2" / f"{split}.tsv"
    if not path.exists():
        raise SystemExit(f"{path} is absent: this experiment needs the real SST-2 data in ../shared/data")
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    if limit:
        rows = random.Random(0).sample(rows, min(limit, len(rows)))
    ids = bench._tokenizer()([r[0] for r in rows])
    return [[bench.START] + x[:64] + [bench.EXTRACT] for x in ids], [int(r[1]) for r in rows]


def run(seed: int, mode: str, data, args) -> dict:
    (train_x, train_y), (dev_x, dev_y) = data
    torch.manual_seed(seed)
    arch = dict(bench.SIZES[args.size])
    config = GPT1Config(
        vocab_size=bench.VOCAB,
        num_labels=2,
        start_token_id=bench.START,
        delimiter_token_id=bench.DELIM,
        extract_token_id=bench.EXTRACT,
        **arch,
    )
    model = GPT1ForSequenceClassification._from_config(config, attn_implementation="sdpa")
    autocast = nullcontext()
    if mode == "bf16":
        if args.bf16_autocast:
            autocast = torch.autocast("cpu", dtype=torch.bfloat16)
            optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
        else:
            model.to(torch.bfloat16)
            optimizer = bench.MasterWeightAdamW(model, lr=args.lr, weight_decay=0.01)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    order = list(range(len(train_x)))
    rng = random.Random(seed)
    steps = 0
    total = args.epochs * (len(order) // args.batch_size)
    groups = optimizer.optimizer.param_groups if hasattr(optimizer, "optimizer") else optimizer.param_groups
    t0 = time.time()
    model.train()
    for _ in range(args.epochs):
        rng.shuffle(order)
        for i in range(0, len(order) - args.batch_size + 1, args.batch_size):
            idx = order[i : i + args.batch_size]
            batch = bench.pad_batch([train_x[j] for j in idx], [train_y[j] for j in idx])
            for g in groups:  # warmup_linear with 0.2% warm-up, as in the original code
                frac = steps / total
                g["lr"] = args.lr * (frac / 0.002 if frac < 0.002 else 1 - frac)
            with autocast:
                loss = model(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]
                ).loss
            loss.backward()
            if hasattr(optimizer, "params"):
                torch.nn.utils.clip_grad_norm_(optimizer.params, 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            steps += 1
    model.eval()
    correct = 0
    with torch.no_grad(), autocast:
        for i in range(0, len(dev_x), 64):
            batch = bench.pad_batch(dev_x[i : i + 64], dev_y[i : i + 64])
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
            correct += int((logits.float().argmax(-1) == batch["labels"]).sum())
    return {
        "seed": seed,
        "mode": mode,
        "accuracy": correct / len(dev_x),
        "final_loss": float(loss),
        "steps": steps,
        "seconds": time.time() - t0,
    }


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--size", default="small", choices=list(bench.SIZES))
    p.add_argument("--train-examples", type=int, default=8000)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--bf16-autocast", action="store_true")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    data = (sst2("train", args.train_examples), sst2("dev", None))
    results = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        for mode in ("fp32", "bf16"):  # alternated, same seed: same init, same batches
            results.append(run(seed, mode, data, args))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    summary = {}
    for mode in ("fp32", "bf16"):
        accs = [r["accuracy"] for r in results if r["mode"] == mode]
        summary[mode] = {
            "mean": statistics.mean(accs),
            "stdev": statistics.stdev(accs) if len(accs) > 1 else 0.0,
            "accuracies": accs,
        }
    out = {"args": vars(args), "runs": results, "summary": summary}
    print(
        f"SST-2 dev accuracy ({args.size}, {args.train_examples} train examples, {args.epochs} epochs): "
        + "; ".join(f"{m} {s['mean']:.4f} ± {s['stdev']:.4f} {s['accuracies']}" for m, s in summary.items())
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
