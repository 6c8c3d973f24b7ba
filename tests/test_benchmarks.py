# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Smoke run of benchmarks/bench_vs_openai_gpt.py on a tiny config: it runs and writes its table and JSON.

The benchmark's numbers are not checked here (CI machines are not benchmark machines); see benchmarks/README.md.
"""

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_vs_openai_gpt.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_vs_openai_gpt", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a benchmark run
def test_benchmark_runs_on_a_tiny_config(bench, tmp_path, capsys):
    out = tmp_path / "bench.json"
    results = bench.main(
        [
            "--sizes",
            "tiny",
            "--dtypes",
            "fp32",
            "--repeats",
            "1",
            "--steps",
            "1",
            "--batch-size",
            "2",
            "--pretrain-batch",
            "1",
            "--new-tokens",
            "4",
            "--prompt",
            "8",
            "--gen-batches",
            "1,2",
            "--matmul-n",
            "256",
            "--nominal-tflops",
            "1",
            "--json",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert "| tiny | fp32 | finetune |" in printed and "| tiny | fp32 | pretrain |" in printed
    saved = json.loads(out.read_text())
    assert saved["table"] == results["table"]
    tasks = {row["task"] for row in saved["rows"]}
    assert tasks == {"finetune", "pretrain", "generate_b1", "generate_b2"}
    for row in saved["rows"]:
        assert row["ref_tok_s"] > 0 and row["ours_tok_s"] > 0 and row["ratio"] > 0
        assert row["ours_mfu_nominal"] == pytest.approx(row["ours_mfu"] * saved["matmul_peak_flops"]["fp32"] / 1e12)
    assert "nominal)" in saved["table"]  # MFU against the datasheet peak beside the measured one
    run = saved["runs"]["tiny/fp32"]
    # same weights and a deterministic greedy decode: both packages continue the prompt identically
    assert run["generate"]["b1"]["greedy_token_agreement"] == 1.0
    assert run["finetune"]["real_tokens_per_repeat"][0] <= run["finetune"]["padded_tokens_per_repeat"][0]
    # transformers' static cache (compiled decoding on a GPU) continues exactly as the dynamic cache does
    assert run["generate"]["b1"]["static_equals_eager"] and run["generate"]["b2"]["static_equals_eager"]
    rows = {row["task"]: row for row in saved["rows"]}
    assert rows["generate_b1"]["ours_static_tok_s"] > 0 and "static cache" in saved["table"]
    assert rows["finetune"]["ours_max_step_over_median"] >= 1.0 and "× median" in saved["table"]

    # the same measurements, as if taken at GPT-1 size in bf16 on a GPU: the GPU targets are checked
    saved["device"] = "cuda"
    saved["runs"] = {"gpt1/bf16": run}
    saved["matmul_peak_flops"] = {"bf16": saved["matmul_peak_flops"]["fp32"]}
    targets = {row["task"]: [t["what"] for t in row["targets"]] for row in bench.rows_of(saved)}
    assert targets == {
        "finetune": ["×ref", "median/max step", "mem ≤ ref"],
        "pretrain": ["×ref", "MFU", "mem ≤ ref"],
        "generate_b1": ["tok/s"],
        "generate_b2": [],
    }


def test_reference_gets_the_same_weights(bench):
    import torch

    ref, ours = bench.build("lm", "tiny", "cpu", "sdpa")
    ref.eval(), ours.eval()
    x = torch.randint(0, bench.BPE_VOCAB, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(ours(input_ids=x).logits, ref(input_ids=x).logits, rtol=1e-4, atol=1e-4)
    ref, ours = bench.build("clf", "tiny", "cpu", "sdpa")
    torch.testing.assert_close(ours.score.weight, ref.multiple_choice_head.summary.weight)


def test_the_original_adam_is_opt_py(tmp_path):
    """benchmarks/optimizer_fidelity.py's reference optimizer follows opt.py's update, checked on two steps by hand."""
    import math

    import torch

    spec = importlib.util.spec_from_file_location("fidelity", BENCH.with_name("optimizer_fidelity.py"))
    fidelity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fidelity)
    matrix, vector = torch.tensor([[1.0, -2.0]]), torch.tensor([0.5])
    params = [torch.nn.Parameter(matrix.clone()), torch.nn.Parameter(vector.clone())]
    optimizer = fidelity.OriginalAdam(params, lr=0.1, total_steps=10, warmup=0.2, l2=0.01)
    grads = [torch.tensor([[0.3, -0.1]]), torch.tensor([0.2])]
    m = [torch.zeros_like(g) for g in grads]
    v = [torch.zeros_like(g) for g in grads]
    expected = [matrix.clone(), vector.clone()]
    for t in (1, 2):
        for p, g in zip(params, grads):
            p.grad = g.clone()
        optimizer.step()
        x = (t - 1) / 10  # warmup_linear at progress t/t_total, t counted before the update
        schedule = (x / 0.2 if x <= 0.2 else 1.0) * (1 - x)
        lrt = 0.1 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t) * schedule
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            step = m[i] / (v[i].sqrt() + 1e-8) + (0.01 * expected[i] if i == 0 else 0)  # L2 on matrices only
            expected[i] = expected[i] - lrt * step
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.data, e)


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a benchmark run
def test_the_data_preparation_benchmark_runs_on_a_small_corpus(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_data_prep", BENCH.parent / "bench_data_prep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.BPE.is_dir():
        pytest.skip(f"real data {module.BPE} is absent (the benchmark tokenizes with the original GPT-1 BPE)")
    out = tmp_path / "prep.json"
    argv = ["--sizes", "1", "--workers", "1,2", "--recipe-sizes", "", "--scratch", str(tmp_path), "--json", str(out)]
    result = module.main(argv)
    rows = json.loads(out.read_text())["rows"]
    assert rows == result["rows"] and [row["workers"] for row in rows] == [1, 2]
    assert rows[0]["windows"] == rows[1]["windows"] > 0 and rows[0]["bytes_per_token"] <= 2.1


def test_the_projection_layout_benchmark_runs_on_a_tiny_config(tmp_path):
    path = BENCH.with_name("bench_projection_layout.py")
    spec = importlib.util.spec_from_file_location("bench_projection_layout", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "layout.json"
    result = module.main(["--n_embd", "16", "--tokens", "8", "--repeats", "1", "--steps", "1", "--json", str(out)])
    assert json.loads(out.read_text()) == result
    assert set(result["layers"]) == {"attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"}
    assert all(row["linear"] > 0 and row["conv1d"] > 0 for row in result["layers"].values())
