# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Where a step's time goes, on the device and on the host: gpu_check's `profile` stage (`--dry-run`: the CPU).

Each case is timed twice. Without the profiler: `wall_ms` per step (the host clock over N steps, one sync at the end)
and `issue_ms` (the host's time to queue them, before that sync). With it: `device_ms` (the kernels' time per step),
the top kernels by name, the top operators by name and input shapes (which operator launched the copies), and the
host's time in the named regions (compiled graphs, eager attention, the optimizer). `device_ms / wall_ms` is how busy
the GPU was; a step that is issued no faster than it runs (`issue_ms ≈ wall_ms`) is bound by the host.

Cases: `pretrain` (GPT-1 size, bf16 weights and fp32 masters, compiled, 32 × 512: the recipe's step),
`pretrain_autocast` (the same under `torch.autocast(bf16)`, as accelerate wraps the forward of a `--bf16` run),
`finetune_eager` and `finetune_compiled` (classification, 32 × 64: SST-2's bucket), `*_cudagraphs` (compiled with
`mode="reduce-overhead"`: each compiled region replayed as a CUDA graph), `optimizer` (the master-weight AdamW step
alone), `decode_b1` (one new token per step from a static cache, the decode step `generate()` replays).

    python benchmarks/step_profile.py --work DIR [--dry-run] [--cases pretrain,decode_b1]   # prints one JSON line
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

CASES = (
    "pretrain", "pretrain_autocast", "pretrain_cudagraphs", "finetune_eager", "finetune_compiled",
    "finetune_cudagraphs", "optimizer", "decode_b1",
)  # fmt: skip
# Host regions worth naming: what the profiler calls them, and ours.
REGIONS = {
    "CompiledFunction": "compiled forward",
    "CompiledFunctionBackward": "compiled backward",
    "Optimizer.step": "optimizer",
    "aten::_scaled_dot_product_flash_attention": "eager attention (forward)",
    "aten::_scaled_dot_product_flash_attention_backward": "eager attention (backward)",
    "aten::_foreach_copy_": "master-weight copies",
    "aten::_fused_adamw_": "fused AdamW",
}
FAMILIES = {  # a kernel's family, by the first marker its lower-cased name holds
    "attention_flash": ("flash",),
    "attention_efficient": ("efficient", "fmha"),
    "gemm": ("gemm", "matmul", "sm90", "nvjet", "cutlass"),
    "copy": ("copy", "cast", "clone", "cat"),
    "optimizer": ("adam", "multi_tensor"),
}


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def family(name: str) -> str:
    lower = name.lower()
    return next((f for f, markers in FAMILIES.items() if any(m in lower for m in markers)), "other")


def measure(step: Callable[[], None], device: str, steps: int, warmup: int = 3) -> dict:
    """`step` timed on the host clock, then profiled: the numbers of the module docstring."""
    for _ in range(warmup):  # compiles, allocates
        step()
    sync(device)
    started = time.perf_counter()
    for _ in range(steps):
        step()
    issued = time.perf_counter()
    sync(device)
    done = time.perf_counter()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, record_shapes=True) as prof:
        for _ in range(steps):
            step()
        sync(device)
    kernels, ops, regions = {}, {}, {}
    for event in prof.key_averages():
        if event.key in REGIONS or event.key.split("#")[0] in REGIONS:
            label = REGIONS.get(event.key) or REGIONS[event.key.split("#")[0]]
            regions[label] = regions.get(label, 0.0) + event.cpu_time_total / steps / 1000
        # (on the GPU timeline the profiler also draws the host's annotated regions, which are no kernels)
        annotation = getattr(event, "is_user_annotation", False) or event.key.startswith(("## ", "Optimizer."))
        on_device = event.device_type == torch.autograd.DeviceType.CUDA
        if device == "cuda" and on_device and event.self_device_time_total and not annotation:
            kernels[event.key] = kernels.get(event.key, 0.0) + event.self_device_time_total / steps / 1000
    time_of = (lambda e: e.self_device_time_total) if device == "cuda" else (lambda e: e.self_cpu_time_total)
    for event in prof.key_averages(group_by_input_shape=True):
        if event.device_type == torch.autograd.DeviceType.CPU and event.key.startswith("aten::") and time_of(event):
            key = f"{event.key} {event.input_shapes}"[:160]
            ops[key] = ops.get(key, 0.0) + time_of(event) / steps / 1000
    if device != "cuda":  # the CPU's own kernels are its operators
        kernels = {k.split(" [")[0]: v for k, v in ops.items()}
    device_ms = sum(kernels.values())
    shares: dict[str, float] = {}
    for name, ms in kernels.items():
        shares[family(name)] = shares.get(family(name), 0.0) + ms / device_ms
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:25]
    return {
        "wall_ms": (done - started) / steps * 1000,
        "issue_ms": (issued - started) / steps * 1000,
        "device_ms": device_ms,
        "device_busy": device_ms / ((done - started) / steps * 1000),
        "shares": shares,
        "host_regions_ms": regions,
        "top_kernels": [{"ms": round(ms, 4), "name": name[:160]} for name, ms in top],
        "top_ops": [{"ms": round(ms, 4), "op": op} for op, ms in sorted(ops.items(), key=lambda kv: -kv[1])[:25]],
    }


def training_step(
    model, optimizer, batch: dict, compiled: bool, backend: str, mode: str | None, autocast: bool = False
) -> Callable[[], None]:
    if autocast:  # what accelerate does to the model of a --bf16 run: its forward under autocast, outputs in fp32
        from accelerate.utils import convert_outputs_to_fp32

        device = next(model.parameters()).device.type
        model.forward = convert_outputs_to_fp32(torch.autocast(device, dtype=torch.bfloat16)(model.forward))
    forward = torch.compile(model, backend=backend, mode=mode) if compiled else model

    def step() -> None:
        forward(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def run(work: Path, dry: bool, cases: list[str]) -> dict:
    from hf_gpt1 import GPT1ForSequenceClassification, GPT1LMHeadModel
    from hf_gpt1.training.precision import MasterWeightOptimizer

    device = "cpu" if dry else "cuda"
    backend = "aot_eager" if dry else "inductor"  # dry: the mechanics, no code generation
    steps = 2 if dry else 10
    pretrain_shape, finetune_shape = ((2, 64), (4, 16)) if dry else ((32, 512), (32, 64))
    results = {"device": torch.cuda.get_device_name() if not dry else "cpu", "torch": torch.__version__}

    def optimizer_for(model):
        return MasterWeightOptimizer(model.parameters(), torch.optim.AdamW, lr=6.25e-5, fused=not dry)

    for case in cases:
        torch._dynamo.reset()
        mode = "reduce-overhead" if case.endswith("cudagraphs") and not dry else None
        if case.startswith("pretrain") or case in ("optimizer", "decode_b1"):
            model = GPT1LMHeadModel.from_pretrained(work / "gpt1").to(device, torch.bfloat16)
        else:
            model = GPT1ForSequenceClassification.from_pretrained(work / "gpt1", num_labels=2)
            model = model.to(device, torch.bfloat16)
        vocab = model.config.vocab_size - 4  # the special tokens are the last four ids
        if case.startswith("pretrain"):
            ids = torch.randint(0, vocab, pretrain_shape, device=device)
            batch = {"input_ids": ids, "labels": ids}
            autocast = case.endswith("autocast")
            step = training_step(model.train(), optimizer_for(model), batch, True, backend, mode, autocast)
        elif case.startswith("finetune"):
            ids = torch.randint(0, vocab, finetune_shape, device=device)
            ids[:, 0], ids[:, -1] = model.config.start_token_id, model.config.extract_token_id
            batch = {"input_ids": ids, "labels": torch.randint(0, 2, finetune_shape[:1], device=device)}
            compiled = not case.endswith("eager")
            step = training_step(model.train(), optimizer_for(model), batch, compiled, backend, mode)
        elif case == "optimizer":
            optimizer = optimizer_for(model)
            for param in model.parameters():
                param.grad = torch.randn_like(param)

            def step(optimizer=optimizer) -> None:
                optimizer.step()

        else:  # decode_b1: the decode step generate() replays, from a static cache
            step = decode_step(model.eval(), device, backend, dry)
        results[case] = measure(step, device, steps)
        del model, step
        if device == "cuda":
            torch.cuda.empty_cache()
    return results


def decode_step(model, device: str, backend: str, dry: bool) -> Callable[[], None]:
    """One token at a time from a static cache, compiled as `generate()` compiles it on a GPU (CUDA graphs)."""
    from transformers import StaticCache

    cache = StaticCache(config=model.config, max_cache_len=64 if dry else 512)
    prompt = torch.randint(0, 1000, (1, 32), device=device)
    with torch.no_grad():
        model(prompt, cache=cache, use_cache=True)
    mode = None if dry else "reduce-overhead"
    forward = torch.compile(model.forward, backend=backend, mode=mode, fullgraph=True)
    token = prompt[:, -1:]
    position = torch.full((1, 1), 32, device=device)

    @torch.no_grad()
    def step() -> None:
        # the same position every step: each replay writes one cache slot, as a decode step does
        forward(input_ids=token, cache=cache, use_cache=True, position_ids=position)

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, help="folder holding gpt1/ (gpu_check prepares it)")
    parser.add_argument("--dry-run", action="store_true", help="the CPU, toy steps: the mechanics")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma list of {','.join(CASES)}")
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"--cases: unknown {unknown}; the cases are {','.join(CASES)}")
    print(json.dumps(run(Path(args.work), args.dry_run, cases)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
