"""The clients Hugging Face users already run, on tiny GPT-1 models saved to local folders (no Hub): lm-eval's `hf`
backend, TRL's SFT (packing on and off) and reward trainers, PEFT's LoRA, sentence-transformers and Accelerate's
big-model loading. Each runs the client's own code unchanged."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import torch

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
    model, tokenizer = GPT1LMHeadModel.from_pretrained(lm_dir).eval(), lm.tokenizer
    ctx = tokenizer(context, add_special_tokens=False)["input_ids"]
    cont = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logprobs = model(input_ids=torch.tensor([ctx + cont])).logits.log_softmax(-1)[0]
    by_hand = sum(logprobs[len(ctx) - 1 + i, token].item() for i, token in enumerate(cont))
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
