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
    run = saved["runs"]["tiny/fp32"]
    # same weights and a deterministic greedy decode: both packages continue the prompt identically
    assert run["generate"]["b1"]["greedy_token_agreement"] == 1.0
    assert run["finetune"]["real_tokens_per_repeat"][0] <= run["finetune"]["padded_tokens_per_repeat"][0]


def test_reference_gets_the_same_weights(bench):
    import torch

    ref, ours = bench.build("lm", "tiny", "cpu", "sdpa")
    ref.eval(), ours.eval()
    x = torch.randint(0, bench.BPE_VOCAB, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(ours(input_ids=x).logits, ref(input_ids=x).logits, rtol=1e-4, atol=1e-4)
    ref, ours = bench.build("clf", "tiny", "cpu", "sdpa")
    torch.testing.assert_close(ours.score.weight, ref.multiple_choice_head.summary.weight)
