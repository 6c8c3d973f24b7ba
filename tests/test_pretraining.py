"""The pre-training recipe (`hf_gpt1.pretraining`) on a WikiText-2 slice, and its argument checks."""

from __future__ import annotations

import json
import math

import pytest

from hf_gpt1.checkpoints import COMPLETE_MARKER, last_complete_checkpoint
from hf_gpt1.pretraining import PretrainTrainer, PretrainTrainingArguments, pack_windows, pretrain_main
from tests.conftest import COMMON, run_cli


def test_pretrain_wikitext_slice(tiny_lm):
    results = json.loads((tiny_lm / "all_results.json").read_text())
    for name in ("model.safetensors", "config.json", "tokenizer.json", "hf_gpt1_run.json"):
        assert (tiny_lm / name).is_file(), name
    assert last_complete_checkpoint(tiny_lm) == str(tiny_lm / "checkpoint-16")
    assert (tiny_lm / "checkpoint-8" / COMPLETE_MARKER).is_file()
    validation = results["validation"]
    loss, perplexity = validation["eval_loss"], validation["eval_perplexity"]
    assert math.isclose(perplexity, math.exp(loss), rel_tol=1e-6)
    # A 1,004-token vocabulary: a uniform guess has perplexity ~1004; 16 steps must already beat it, and a 2-layer
    # model cannot get near 1 on held-out text.
    assert 20 < perplexity < 1004
    assert results["train"]["train_loss"] < math.log(1004) + 0.1
    losses = [entry["loss"] for entry in results["log_history"] if "loss" in entry]
    assert len(losses) == 4 and losses[-1] < losses[0]
    # the final evaluation is the one logged at step 16, not a second pass over the held-out windows
    evaluations = [entry for entry in results["log_history"] if "eval_loss" in entry]
    assert len(evaluations) == 2 and evaluations[-1]["eval_loss"] == loss
    config = json.loads((tiny_lm / "config.json").read_text())
    assert (config["n_layer"], config["n_embd"], config["n_positions"]) == (2, 64, 64)
    assert config["original_embedding_table"] is True


def test_language_model_tokenizer_encodes_raw_text(tiny_lm):
    from hf_gpt1 import load_gpt1_tokenizer

    tokenizer = load_gpt1_tokenizer(tiny_lm)
    ids = tokenizer("the cat")["input_ids"]
    assert ids == tokenizer("the cat", add_special_tokens=False)["input_ids"]  # no `_start_ … _classify_`


def test_windows_are_contiguous_and_the_tail_is_dropped():
    import datasets

    class Characters:
        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[ord(c) for c in text] for text in texts]}

    documents = datasets.Dataset.from_dict({"text": ["abcde", "fghij", "kl"]})
    packed = pack_windows(documents, Characters(), window=4)
    assert [bytes(row).decode() for row in packed["input_ids"]] == ["abcd", "efgh", "ijkl"]
    assert packed["labels"] == packed["input_ids"]


def test_evaluation_never_builds_logits(tmp_path):
    from hf_gpt1 import GPT1LMHeadModel
    from tests.conftest import tiny_config

    args = PretrainTrainingArguments(output_dir=str(tmp_path), report_to=[], eval_strategy="no")
    assert args.prediction_loss_only and args.retain_cpu_memory  # the pre-training recipe's defaults
    seen = []
    model = GPT1LMHeadModel(tiny_config())
    original = model.forward

    def spy(*a, **kw):
        out = original(*a, **kw)
        seen.append(out.logits)
        return out

    model.forward = spy
    trainer = PretrainTrainer(model=model, args=args)
    import torch

    batch = {"input_ids": torch.randint(0, 60, (2, 8)), "labels": torch.randint(0, 60, (2, 8))}
    loss, logits, _ = trainer.prediction_step(model, batch, prediction_loss_only=True)
    assert loss is not None and logits is None and seen == [None]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--n_positions", "1"], "a window needs at least 2 tokens"),
        (["--n_embd", "30", "--n_head", "4"], "not divisible by --n_head 4"),
        (["--dropout", "1.0"], "--dropout 1.0 must be in [0, 1)"),
        (["--dropout", "nan"], "--dropout nan is not a finite number"),
        (["--max_train_windows", "0"], "--max_train_windows 0 must be >= 1"),
        (["--do_train", "false"], "--do_train false leaves it nothing to do"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(argv, fragment, capsys, wikitext_slice, tmp_path):
    out = tmp_path / "out"
    full = ["--train_files", str(wikitext_slice["train"]), "--output_dir", str(out), *COMMON, *argv]
    err = run_cli(capsys, lambda: pretrain_main(full))
    assert fragment in err
    assert not out.exists()
