# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Decoding tokens/s, transformers' loop against hf_gpt1's device loop: gpu_check's `generate` stage.

For each batch size (b1, b8), a 32-token prompt and 256 new tokens, greedy, from a GPT-1-size model (random weights,
bf16, EOS off so that every run makes every token), on the default static cache of one bucket:

* `transformers`: `generate(..., cache_implementation="static")`, transformers' own `_sample` loop around its
  compiled forward (CUDA graphs): last round's default;
* `device`: `generate(...)`, the default: hf_gpt1's device loop (`hf_gpt1/decoding.py`), the split-KV decode
  attention included;
* `device_sdpa` (with `--split-kv-off`): the device loop with SDPA's kernel for the decode attention instead.

Each case is warmed up once (compiling, recording the CUDA graphs), then timed (median of `--repeats`), and the
tokens of each case are compared with transformers' loop (greedy, and seeded sampling at the largest batch).
`--dry-run`: the CPU and a toy model, the step compiled with the "eager" backend (the mechanics, not the numbers).

    python benchmarks/bench_decoding.py --model DIR [--dry-run]   # prints one JSON line
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from transformers import CompileConfig

from hf_gpt1 import GPT1LMHeadModel, kernels, modeling_gpt1

TARGETS = {1: 1500, 8: 10000}  # tokens/s on an H100 (issue 52)


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a saved GPT1LMHeadModel (gpu_check prepares one)")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--split-kv-off", action="store_true", help="also measure the device loop with SDPA")
    args = parser.parse_args(argv)
    device = "cpu" if args.dry_run else "cuda"
    dtype = torch.float32 if args.dry_run else torch.bfloat16
    model = GPT1LMHeadModel.from_pretrained(args.model, dtype=dtype).to(device).eval()
    model.generation_config.eos_token_id = None  # every run makes every token
    model.generation_config.pad_token_id = 0
    if args.dry_run:  # the CPU standing in for CUDA: its default path, compiled without code generation
        modeling_gpt1.STATIC_DECODING_DEVICES = {"cpu"}
        kernels.SPLIT_KV_DECODE_DEVICES = {"cpu"}
        config = CompileConfig(backend="eager", mode=None, fullgraph=True)
        config._compile_all_devices = True
        model.generation_config.compile_config = config
    new = min(args.new_tokens, model.config.n_positions - args.prompt)
    cases = ["transformers", "device"] + (["device_sdpa"] if args.split_kv_off else [])
    batches = [int(b) for b in args.batches.split(",")]
    result: dict = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "new_tokens": new}
    g = torch.Generator().manual_seed(0)
    for batch in batches:
        prompt = torch.randint(0, 40000 if not args.dry_run else 60, (batch, args.prompt), generator=g).to(device)

        def generate(case: str, prompt: torch.Tensor = prompt, **options) -> torch.Tensor:
            split_kv = kernels.SPLIT_KV_DECODE_DEVICES
            if case == "device_sdpa":
                kernels.SPLIT_KV_DECODE_DEVICES = set()
            try:
                chosen = {"cache_implementation": "static"} if case == "transformers" else {}
                with torch.inference_mode():
                    options = {"do_sample": False, **options}
                    return model.generate(prompt, max_new_tokens=new, **chosen, **options)
            finally:
                kernels.SPLIT_KV_DECODE_DEVICES = split_kv

        row: dict = {"target_tok_s": TARGETS.get(batch)}
        outs = {}
        for case in cases:
            started = time.perf_counter()
            outs[case] = generate(case)  # compiles the bucket's graphs, records the CUDA graphs
            sync(device)
            row[f"{case}_first_call_s"] = round(time.perf_counter() - started, 2)
            times = []
            for _ in range(args.repeats):
                sync(device)
                started = time.perf_counter()
                generate(case)
                sync(device)
                times.append(time.perf_counter() - started)
            row[f"{case}_tok_s"] = round(batch * new / statistics.median(times), 1)
            row[f"{case}_equals_transformers"] = torch.equal(outs[case], outs["transformers"])
        if batch == max(batches):  # seeded sampling: the same draws in both loops?
            sampled = {}
            for case in ("transformers", "device"):
                torch.manual_seed(0)
                sampled[case] = generate(case, do_sample=True, top_k=50, top_p=0.95, temperature=0.8)
            row["sampling_equals_transformers"] = torch.equal(sampled["device"], sampled["transformers"])
        result[f"b{batch}"] = row
    return result


if __name__ == "__main__":
    print(json.dumps(main()))
