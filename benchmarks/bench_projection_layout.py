# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The blocks' projections as transformers' `Conv1D` (hf_gpt1 0.2) and as `nn.Linear` (now), side by side in one run.

Forward + backward of each of GPT-1's four projection shapes on one batch of tokens, the two layouts interleaved
`--repeats` times; the best time of each. The same matrix product, stored `(in, out)` against `(out, in)`.

    python benchmarks/bench_projection_layout.py --json benchmarks/results/projection_layout.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch import nn
from transformers.pytorch_utils import Conv1D


def time_layer(layer: nn.Module, inputs: torch.Tensor, steps: int) -> float:
    """Seconds per forward + backward, after two warm-up steps."""
    for _ in range(2):
        layer(inputs).sum().backward()
    start = time.perf_counter()
    for _ in range(steps):
        layer(inputs).sum().backward()
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n_embd", type=int, default=768)
    parser.add_argument("--tokens", type=int, default=8 * 512, help="rows of the batch (default: 8 windows of 512)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    c = args.n_embd
    shapes = {"attn.c_attn": (c, 3 * c), "attn.c_proj": (c, c), "mlp.c_fc": (c, 4 * c), "mlp.c_proj": (4 * c, c)}
    best: dict[str, dict[str, float]] = {name: {} for name in shapes}
    for _ in range(args.repeats):
        for name, (fan_in, fan_out) in shapes.items():
            inputs = torch.randn(args.tokens, fan_in, requires_grad=True)
            for layout, layer in (("conv1d", Conv1D(fan_out, fan_in)), ("linear", nn.Linear(fan_in, fan_out))):
                seconds = time_layer(layer, inputs, args.steps)
                best[name][layout] = min(best[name].get(layout, float("inf")), seconds)
    rows = {name: {**times, "linear_over_conv1d": times["linear"] / times["conv1d"]} for name, times in best.items()}
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "args": vars(args), "layers": rows}
    for name, row in rows.items():
        print(f"{name}: conv1d {row['conv1d'] * 1e3:.1f} ms, linear {row['linear'] * 1e3:.1f} ms "
              f"(linear / conv1d {row['linear_over_conv1d']:.3f})")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
