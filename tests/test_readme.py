"""README examples run as written, on tiny local models in the folders they name (doctest-style: the fenced block is
read from README.md, so an edit that breaks an example fails here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, load_gpt1_tokenizer
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.training.arguments import ModelArguments
from hf_gpt1.training.finetune import build_model
from tests.tools.hub_standin import HubStandIn
from tests.utils import REPO_ROOT, SENTENCES, shared_data, tiny_config_for


def readme_block(section: str, language: str = "python") -> str:
    """The first ```language block after the heading `section` in README.md."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n{section}\n")
    return re.search(rf"```{language}\n(.*?)```", text[start:], re.S)[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The folders the inference example names: runs/pt (a language model), runs/sst2, runs/rte, runs/story_cloze."""
    root = tmp_path_factory.mktemp("readme")
    tokenizer = train_gpt1_tokenizer([s.lower() for s in SENTENCES] * 4, vocab_size=120)
    lm = GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=64))
    add_gpt1_special_tokens(tokenizer, lm)
    lm.save_pretrained(root / "runs" / "pt")
    tokenizer.backend_tokenizer.post_processor = None  # an LM's tokenizer encodes raw text (as recipes/pretrain.py)
    tokenizer.save_pretrained(root / "runs" / "pt")
    for task in ("sst2", "rte", "story_cloze"):
        tokenizer = load_gpt1_tokenizer(root / "runs" / "pt")
        model = build_model(get_task(task), ModelArguments(model_name_or_path=str(root / "runs" / "pt")), tokenizer)
        model.save_pretrained(root / "runs" / task)
        tokenizer.save_pretrained(root / "runs" / task)
    return root


def test_the_inference_and_sharing_example_runs(runs):
    # As a user runs it: a fresh process in the folder holding runs/, the push going to a Hub stand-in.
    code = readme_block("## Inference and sharing")
    with HubStandIn() as hub:
        env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.endpoint, "HF_TOKEN": "hf_standin"}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=runs, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert "me/gpt1-rte" in hub.repos


def test_the_first_run_section_runs(tmp_path):
    # The shell block as written, in a fresh folder: the shared data path made absolute, hf-gpt1 from this environment.
    data = shared_data()
    script = readme_block("## First run", "bash").replace("../shared/data", str(data))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    finetuned = json.loads((tmp_path / "runs" / "first-sst2" / "all_results.json").read_text())["validation"]
    # what the section says: the model beats the majority class clearly
    assert finetuned["eval_validation_accuracy"] > finetuned["eval_validation_baseline_accuracy"] + 0.1
    assert (tmp_path / "runs" / "first-sst2-predict" / "SST-2.tsv").is_file()
    assert "'label': '1'" in done.stdout
