# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The clients Hugging Face users already run, on tiny GPT-1 models saved to local folders (no Hub): lm-eval's `hf`
backend, TRL's SFT (packing on and off) and reward trainers, PEFT's LoRA, sentence-transformers and Accelerate's
big-model loading. Each runs the client's own code unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import torch
from transformers import AutoTokenizer

from hf_gpt1 import GPT1ForSequenceClassification, GPT1LMHeadModel, add_gpt1_special_tokens, train_gpt1_tokenizer
from tests.utils import SENTENCES, tiny_config_for

TEXTS = [sentence.lower() for sentence in SENTENCES[:5]] * 4


def _client(name: str):
    return pytest.importorskip(name, reason=f"{name} is not installed (pip install -e '.[dev]' installs it)")


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory) -> Path:
    """A tiny GPT-1 language model saved as the pre-training recipe saves one: raw-text tokenizer, bos/eos set."""
    folder = tmp_path_factory.mktemp("lm")
    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=120)
    torch.manual_seed(0)
    model = GPT1LMHeadModel(tiny_config_for(tokenizer, n_positions=64, n_embd=64))
    add_gpt1_special_tokens(tokenizer, model)
    tokenizer.backend_tokenizer.post_processor = None  # a language model's tokenizer encodes raw text
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def continuation_logprob(model, tokenizer, context: str, continuation: str) -> float:
    """log p(continuation | context) computed by hand: what lm-eval's loglikelihood must return."""
    ctx = tokenizer(context, add_special_tokens=False)["input_ids"]
    cont = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logprobs = model(input_ids=torch.tensor([ctx + cont])).logits.log_softmax(-1)[0]
    return sum(logprobs[len(ctx) - 1 + i, token].item() for i, token in enumerate(cont))


def test_lm_eval_hf_backend_loglikelihood_and_generate_until(lm_dir):
    _client("lm_eval")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(lm_dir), batch_size=2, device="cpu")
    context, continuation = "the dog chased", " the cat"
    (score, greedy), (empty_score, _) = lm.loglikelihood(
        [
            Instance(request_type="loglikelihood", doc={}, arguments=(context, continuation), idx=0),
            Instance(request_type="loglikelihood", doc={}, arguments=("", "a man is playing"), idx=1),
        ]
    )
    by_hand = continuation_logprob(GPT1LMHeadModel.from_pretrained(lm_dir).eval(), lm.tokenizer, context, continuation)
    assert score == pytest.approx(by_hand, abs=1e-4) and isinstance(greedy, bool)
    assert empty_score < 0  # an empty context is conditioned on the bos token, `_start_`
    (generated,) = lm.generate_until(
        [
            Instance(
                request_type="generate_until",
                doc={},
                arguments=("the dog", {"until": ["."], "max_gen_toks": 5}),
                idx=0,
            )
        ]
    )
    assert isinstance(generated, str)


@pytest.mark.parametrize("packing", [False, True])
def test_trl_sft_trainer_from_a_folder_with_and_without_packing(lm_dir, tmp_path, packing):
    _client("trl")
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(
        output_dir=str(tmp_path / "sft"), max_steps=3, per_device_train_batch_size=4, max_length=48, packing=packing,
        learning_rate=1e-3, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", disable_tqdm=True,
    )  # fmt: skip
    trainer = SFTTrainer(model=str(lm_dir), args=args, train_dataset=datasets.Dataset.from_dict({"text": TEXTS}))
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses)))


def test_trl_reward_trainer(lm_dir, tmp_path):
    _client("trl")
    from transformers import AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    folder = tmp_path / "reward"
    tokenizer = AutoTokenizer.from_pretrained(lm_dir)
    model = GPT1ForSequenceClassification.from_pretrained(lm_dir, num_labels=1)
    add_gpt1_special_tokens(tokenizer, model)  # the task template: `_start_ text _classify_`, read at `_classify_`
    pairs = datasets.Dataset.from_dict({"chosen": TEXTS[:8], "rejected": TEXTS[8:16]})
    args = RewardConfig(
        output_dir=str(folder), max_steps=2, per_device_train_batch_size=4, report_to=[], use_cpu=True,
        save_strategy="no", disable_tqdm=True, logging_steps=1,
    )  # fmt: skip
    trainer = RewardTrainer(model=model, args=args, train_dataset=pairs, processing_class=tokenizer)
    trainer.train()
    assert trainer.state.global_step == 2


def test_peft_lora_with_default_targets_trains_saves_loads_and_merges(lm_dir, tmp_path):
    _client("peft")
    from peft import LoraConfig, PeftModel, get_peft_model

    model = get_peft_model(GPT1LMHeadModel.from_pretrained(lm_dir), LoraConfig(r=4, lora_alpha=8))  # default targets
    assert any(name.endswith("attn.c_attn.lora_A") for name, _ in model.named_modules())
    assert type(model.base_model.model.transformer.h[0].attn.c_attn.base_layer) is torch.nn.Linear  # no fan_in_fan_out
    ids = torch.randint(0, 100, (2, 12))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(3):
        model(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(tmp_path / "adapter")
    loaded = PeftModel.from_pretrained(GPT1LMHeadModel.from_pretrained(lm_dir), tmp_path / "adapter").eval()
    with torch.no_grad():
        unmerged = loaded(input_ids=ids).logits
        merged = loaded.merge_and_unload()(input_ids=ids).logits
    torch.testing.assert_close(merged, unmerged, atol=1e-5, rtol=1e-4)
    with torch.no_grad():
        assert not torch.allclose(unmerged, GPT1LMHeadModel.from_pretrained(lm_dir).eval()(input_ids=ids).logits)


def test_evaluate_evaluator_scores_a_gpt1_classifier_folder(tmp_path):
    """evaluate's `evaluator("text-classification")` given the model's folder (a `Pipeline` object reaches its
    `transformers.TFPreTrainedModel` check, which transformers 5 no longer has: README, Works with)."""
    evaluate = _client("evaluate")
    from hf_gpt1.data.metrics import load_metric

    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=120)
    config = tiny_config_for(tokenizer, num_labels=2, input_format="classification")
    config.id2label, config.label2id = {0: "negative", 1: "positive"}, {"negative": 0, "positive": 1}
    model = GPT1ForSequenceClassification(config).eval()
    model.save_pretrained(tmp_path / "clf")
    tokenizer.save_pretrained(tmp_path / "clf")
    data = datasets.Dataset.from_dict({"text": SENTENCES[:8], "label": [0, 1] * 4})
    scores = evaluate.evaluator("text-classification").compute(
        model_or_pipeline=str(tmp_path / "clf"), data=data, metric=load_metric("sst2"), label_mapping=config.label2id
    )
    ids = tokenizer(SENTENCES[:8], padding=True, return_tensors="pt")
    with torch.no_grad():
        predicted = model(**ids).logits.argmax(-1)
    assert scores["accuracy"] == (predicted == torch.tensor([0, 1] * 4)).float().mean().item()


def test_sentence_transformers_encodes_with_a_gpt1_encoder(lm_dir):
    _client("sentence_transformers")
    from sentence_transformers import SentenceTransformer, models

    encoder = models.Transformer(str(lm_dir), max_seq_length=32)
    model = SentenceTransformer(modules=[encoder, models.Pooling(encoder.get_word_embedding_dimension(), "mean")])
    embeddings = model.encode(TEXTS[:3], convert_to_tensor=True)
    assert embeddings.shape == (3, 64) and torch.isfinite(embeddings).all()


def test_accelerate_empty_weights_and_checkpoint_dispatch(lm_dir):
    from accelerate import init_empty_weights, load_checkpoint_and_dispatch

    from hf_gpt1 import GPT1Config

    with init_empty_weights():
        empty = GPT1LMHeadModel(GPT1Config.from_pretrained(lm_dir))
    empty.tie_weights()  # the head is stored once, as the token embedding (Accelerate's documented order)
    dispatched = load_checkpoint_and_dispatch(empty, str(lm_dir / "model.safetensors"), device_map={"": "cpu"})
    reference = GPT1LMHeadModel.from_pretrained(lm_dir).eval()
    ids = torch.randint(0, 100, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(dispatched.eval()(input_ids=ids).logits, reference(input_ids=ids).logits)


MC_DOCS = [
    {"context": "the dog chased", "choices": [" the cat", " a book", " the rain"], "label": 0},
    {"context": "children are reading", "choices": [" the city", " books at the library", " cold"], "label": 1},
    {"context": "the weather today is", "choices": [" cold and rainy", " a man", " playing"], "label": 0},
    {"context": "a man is", "choices": [" books", " playing", " the weather"], "label": 1},
]
LOCAL_TASKS = """
task: gpt1_local_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{context}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{label}}}}"
metric_list:
  - metric: acc
---
task: gpt1_local_generate
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{context}}}}"
doc_to_target: "{{{{choices[label]}}}}"
generation_kwargs:
  until: ["."]
  max_gen_toks: 4
  do_sample: false
metric_list:
  - metric: exact_match
"""


@pytest.mark.slow  # the full tier (scripts/test.sh --all): lm-eval's command line
def test_lm_eval_cli_on_a_local_task(lm_dir, tmp_path):
    # The command a user types, in a fresh process that never imports hf_gpt1: the saved folder's own code loads.
    _client("lm_eval")
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps(doc) + "\n" for doc in MC_DOCS))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for text in LOCAL_TASKS.format(data=data).split("---"):
        name = next(line.split(": ")[1] for line in text.splitlines() if line.startswith("task:"))
        (tasks / f"{name}.yaml").write_text(text)
    command = [sys.executable, "-m", "lm_eval", "run", "--model", "hf"]
    command += [
        "--model_args",
        f"pretrained={lm_dir},trust_remote_code=True",
        "--tasks",
        "gpt1_local_mc,gpt1_local_generate",
    ]
    command += [
        "--include_path",
        str(tasks),
        "--device",
        "cpu",
        "--batch_size",
        "2",
        "--output_path",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = (tmp_path / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]

    # The accuracy the harness reports is that of the hand-computed choice: the highest summed log-probability.
    model, tokenizer = GPT1LMHeadModel.from_pretrained(lm_dir).eval(), AutoTokenizer.from_pretrained(lm_dir)
    right = 0
    for doc in MC_DOCS:
        scores = [continuation_logprob(model, tokenizer, doc["context"], choice) for choice in doc["choices"]]
        right += max(range(len(scores)), key=scores.__getitem__) == doc["label"]
    assert results["gpt1_local_mc"]["acc,none"] == pytest.approx(right / len(MC_DOCS))
    assert "exact_match,none" in results["gpt1_local_generate"]
