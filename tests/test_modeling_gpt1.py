# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The model (hf_gpt1.modeling_gpt1): parity with transformers' openai-gpt on every (device, dtype), L3 and the
original's embedding table by hand, masks, cache, one output shape, no host syncs, tying, remote code, bad input."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    OpenAIGPTConfig,
    OpenAIGPTDoubleHeadsModel,
    OpenAIGPTLMHeadModel,
)

from hf_gpt1 import (
    GPT1Config,
    GPT1ForMultipleChoice,
    GPT1ForSequenceClassification,
    GPT1LMHeadModel,
    GPT1Model,
    modeling_gpt1,
)
from hf_gpt1.modeling_gpt1 import CACHE_NAME, HEADS, _swap_pair
from tests.utils import DELIM, DEVICE_DTYPES, EXTRACT, PAD, START, V, tiny_config

# Parity tolerances by dtype: bf16 rounds every op, and the two models order some of them differently.
TOLERANCE = {torch.float32: {"rtol": 1e-5, "atol": 1e-5}, torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}}


def reference_pair(attn_implementation: str = "sdpa", device: str = "cpu", dtype: torch.dtype = torch.float32):
    """The same random weights in transformers' OpenAIGPTLMHeadModel and in ours."""
    ref = OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4)).eval()
    ours = GPT1LMHeadModel(GPT1Config.from_dict(ref.config.to_dict()))
    ours.load_state_dict(ref.state_dict())
    ours.set_attn_implementation(attn_implementation)
    return ref.to(device, dtype), ours.to(device, dtype).eval()


def padded_batch():
    """Two right-padded classification sequences: `<s> a b c <e> pad pad` and `<s> a b c d e <e>`."""
    ids = torch.tensor([[START, 5, 6, 7, EXTRACT, PAD, PAD], [START, 8, 9, 10, 11, 12, EXTRACT]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]])
    return ids, mask


def test_init_follows_gpt1():
    model = GPT1LMHeadModel(tiny_config(n_embd=64, n_layer=1, vocab_size=4000))
    block = model.transformer.h[0]
    for w in (block.attn.c_attn.weight, block.mlp.c_fc.weight, model.transformer.tokens_embed.weight):
        assert abs(w.std().item() - 0.02) < 0.002 and abs(w.mean().item()) < 0.002
    assert torch.all(block.attn.c_attn.bias == 0) and torch.all(block.ln_1.weight == 1)
    assert model.lm_head.weight.data_ptr() == model.transformer.tokens_embed.weight.data_ptr()
    # post-LN with no final LayerNorm: the base model has no ln_f
    assert not any("ln_f" in name for name, _ in model.named_parameters())


# ----------------------------------------------------------------------------------------------- parity


@pytest.mark.parametrize("device, dtype", DEVICE_DTYPES)
@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_lm_logits_match_openai_gpt(impl, device, dtype):
    ref, ours = reference_pair(impl, device, dtype)
    ids = torch.randint(0, V, (3, 24), device=device)
    with torch.no_grad():
        torch.testing.assert_close(ours(ids).logits, ref(ids).logits, **TOLERANCE[dtype])


@pytest.mark.parametrize("device, dtype", DEVICE_DTYPES)
def test_lm_loss_and_padding_mask_match_openai_gpt(device, dtype):
    ref, ours = reference_pair(device=device, dtype=dtype)
    ids, mask = (t.to(device) for t in padded_batch())
    with torch.no_grad():
        r, o = ref(ids, attention_mask=mask, labels=ids), ours(ids, attention_mask=mask, labels=ids)
    real = mask.bool()
    torch.testing.assert_close(o.logits[real], r.logits[real], **TOLERANCE[dtype])
    torch.testing.assert_close(o.loss, r.loss.float(), **TOLERANCE[dtype])


def test_greedy_generation_matches_openai_gpt():
    ref, ours = reference_pair()
    prompt = torch.randint(0, V, (1, 8))
    ref_tokens = ref.generate(prompt, max_new_tokens=24, do_sample=False, use_cache=False)
    our_tokens = ours.generate(prompt, max_new_tokens=24, do_sample=False)
    assert ref_tokens.shape[1] == 32 and torch.equal(ref_tokens, our_tokens)


def test_eager_equals_sdpa_on_right_padded_batch():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    ids, mask = padded_batch()
    with torch.no_grad():
        model.set_attn_implementation("eager")
        eager = model(ids, attention_mask=mask, output_hidden_states=True)
        model.set_attn_implementation("sdpa")
        sdpa = model(ids, attention_mask=mask, output_hidden_states=True)
    assert torch.allclose(eager.logits, sdpa.logits, atol=1e-5)
    real = mask.bool()
    assert torch.allclose(eager.hidden_states[-1][real], sdpa.hidden_states[-1][real], atol=1e-5)


def test_cached_generation_equals_uncached():
    model = GPT1LMHeadModel(tiny_config()).eval()
    prompt = torch.randint(0, 60, (2, 5))
    cached = model.generate(prompt, max_new_tokens=20, do_sample=False, use_cache=True)
    uncached = model.generate(prompt, max_new_tokens=20, do_sample=False, use_cache=False)
    assert torch.equal(cached, uncached)
    beams = model.generate(prompt, max_new_tokens=6, num_beams=3, do_sample=False)
    sampled = model.generate(prompt, max_new_tokens=6, do_sample=True, top_k=5)
    assert beams.shape == sampled.shape == (2, 11)


def test_left_padded_batch_generation_equals_one_by_one():
    model = GPT1LMHeadModel(tiny_config(pad_token_id=PAD)).eval()
    short, long = [5, 6, 7], [8, 9, 10, 11, 12, 13]
    ids = torch.tensor([[PAD] * 3 + short, long])
    mask = torch.tensor([[0] * 3 + [1] * 3, [1] * 6])
    batched = model.generate(ids, attention_mask=mask, max_new_tokens=10, do_sample=False, pad_token_id=PAD)
    for row, prompt in enumerate((short, long)):
        alone = model.generate(torch.tensor([prompt]), max_new_tokens=10, do_sample=False, pad_token_id=PAD)
        assert batched[row, -10:].tolist() == alone[0, -10:].tolist()


def test_hidden_states_and_attentions():
    model = GPT1Model(tiny_config()).eval()
    model.set_attn_implementation("eager")
    out = model(torch.randint(0, 60, (2, 6)), output_hidden_states=True, output_attentions=True)
    assert len(out.hidden_states) == 3 and len(out.attentions) == 2
    assert out.attentions[0].shape == (2, 4, 6, 6)
    assert torch.equal(out.hidden_states[-1], out.last_hidden_state)


# ----------------------------------------------------------------------------------------------- losses


def hand_l1(model, ids, mask):
    """The original code's L1: per sequence, mean over real tokens after the first; then mean over sequences."""
    with torch.no_grad():
        hidden = model.transformer(ids, attention_mask=mask).last_hidden_state
        logits = model.lm_head(hidden)
    losses = []
    for b in range(ids.shape[0]):
        n = int(mask[b].sum())
        losses.append(F.cross_entropy(logits[b, : n - 1], ids[b, 1:n]))
    return torch.stack(losses).mean()


def test_l3_equals_hand_computation():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=3)).eval()
    ids, mask = padded_batch()
    labels = torch.tensor([0, 2])
    with torch.no_grad():
        out = model(ids, attention_mask=mask, labels=labels)
        hidden = model.transformer(ids, attention_mask=mask).last_hidden_state
    pooled = hidden[torch.arange(2), torch.tensor([4, 6])]
    l2 = F.cross_entropy(model.score(pooled), labels)
    l1 = hand_l1(model, ids, mask)
    assert torch.allclose(out.clf_loss, l2, atol=1e-6)
    assert torch.allclose(out.lm_loss, l1, atol=1e-5)
    assert torch.allclose(out.loss, l2 + 0.5 * l1, atol=1e-5)


def test_lambda_zero_is_exactly_cross_entropy():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=3, lm_coef=0.0)).eval()
    ids, mask = padded_batch()
    labels = torch.tensor([1, 2])
    out = model(ids, attention_mask=mask, labels=labels)
    assert out.lm_loss is None
    assert torch.equal(out.loss, F.cross_entropy(out.logits, labels))


def test_lm_mask_rule_on_hand_built_example(monkeypatch):
    """Targets are every real token after the start token (delimiter and extract included), never padding."""
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    ids = torch.tensor([[START, 5, DELIM, 6, EXTRACT, PAD, PAD]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0]])
    seen = {}
    original = modeling_gpt1.linear_cross_entropy

    def spy(hidden, *args):
        seen["rows"] = hidden.shape[0]
        return original(hidden, *args)

    monkeypatch.setattr(modeling_gpt1, "linear_cross_entropy", spy)
    out = model(ids, attention_mask=mask, labels=torch.tensor([1]))
    # 4 targets: 5, DELIM, 6, EXTRACT; the LM head only ran on the 4 positions that predict them
    assert seen["rows"] == 4
    assert torch.allclose(out.lm_loss, hand_l1(model, ids, mask), atol=1e-5)
    # Garbage in the padding must not change anything.
    ids2 = ids.clone()
    ids2[0, 5:] = 7
    assert torch.allclose(model(ids2, attention_mask=mask, labels=torch.tensor([1])).loss, out.loss, atol=1e-6)


def test_token_mean_reduction():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2, lm_loss_reduction="token")).eval()
    ids, mask = padded_batch()
    with torch.no_grad():
        out = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]))
        logits = model.lm_head(model.transformer(ids, attention_mask=mask).last_hidden_state)
    targets = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
    expected = F.cross_entropy(logits[:, :-1].reshape(-1, V), targets.reshape(-1))
    assert torch.allclose(out.lm_loss, expected, atol=1e-5)


def test_explicit_lm_labels_are_used():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    ids, mask = padded_batch()
    lm_labels = ids.masked_fill(mask == 0, -100)
    a = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]))
    b = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]), lm_labels=lm_labels)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    lm_labels[:, :3] = -100
    c = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]), lm_labels=lm_labels)
    assert not torch.allclose(a.lm_loss, c.lm_loss)


def test_regression_uses_mse():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=1, lm_coef=0.0)).eval()
    ids, mask = padded_batch()
    target = torch.tensor([0.5, 4.0])
    out = model(ids, attention_mask=mask, labels=target)
    assert out.logits.shape == (2, 1)
    assert torch.allclose(out.loss, F.mse_loss(out.logits.squeeze(-1), target))


def test_similarity_adds_both_orderings():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=1, similarity=True, lm_coef=0.0)).eval()
    ids = torch.tensor([[START, 5, 6, DELIM, 7, 8, 9, EXTRACT, PAD]])
    mask = torch.tensor([[1] * 8 + [0]])
    swapped = _swap_pair(ids, DELIM, EXTRACT)
    assert swapped.tolist() == [[START, 7, 8, 9, DELIM, 5, 6, EXTRACT, PAD]]
    stacked = torch.stack([ids, swapped], 1)
    with torch.no_grad():
        from_pairs = model(stacked, attention_mask=torch.stack([mask, mask], 1)).logits
        from_one = model(ids, attention_mask=mask).logits
        reversed_order = model(torch.stack([swapped, ids], 1), attention_mask=torch.stack([mask, mask], 1)).logits
        hidden = model.transformer(stacked, attention_mask=torch.stack([mask, mask], 1)).last_hidden_state
    assert torch.allclose(from_pairs, from_one, atol=1e-6)
    assert torch.allclose(from_pairs, reversed_order, atol=1e-6)  # symmetric in the two orderings
    expected = model.score(hidden[0, 0, 7] + hidden[0, 1, 7])
    assert torch.allclose(from_pairs[0], expected, atol=1e-5)


def test_multiple_choice_loss_and_shared_dropout():
    model = GPT1ForMultipleChoice(tiny_config(clf_pdrop=0.5, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
    ids, mask = padded_batch()
    choices = torch.stack([ids, ids], 1)  # (2, 2, 7): both choices identical
    masks = torch.stack([mask, mask], 1)
    model.train()
    out = model(choices, attention_mask=masks, labels=torch.tensor([0, 1]))
    # one dropout mask per example: identical choices keep identical scores even in training mode
    assert torch.allclose(out.logits[:, 0], out.logits[:, 1])
    model.eval()
    with torch.no_grad():
        out = model(choices, attention_mask=masks, labels=torch.tensor([0, 1]))
        l1 = hand_l1(model, choices.reshape(4, -1), masks.reshape(4, -1))
    assert torch.allclose(out.clf_loss, F.cross_entropy(out.logits, torch.tensor([0, 1])))
    assert torch.allclose(out.loss, out.clf_loss + 0.5 * l1, atol=1e-5)


# ----------------------------------------------------------------------------------------------- training features


def test_gradient_checkpointing_gives_same_gradients():
    ids, mask = padded_batch()

    def grads(checkpointing):
        torch.manual_seed(0)
        no_dropout = dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT1ForSequenceClassification(tiny_config(num_labels=2, **no_dropout))
        if checkpointing:
            model.activation_checkpointing_enable()
        model.train()
        model(ids, attention_mask=mask, labels=torch.tensor([0, 1])).loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    plain, ckpt = grads(False), grads(True)
    assert plain.keys() == ckpt.keys()
    for name in plain:
        assert torch.allclose(plain[name], ckpt[name], atol=1e-6), name


def test_save_load_keeps_ties_and_outputs(tmp_path):
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    model.resize_token_embeddings(V + 3, mean_resizing=False)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    loaded = GPT1ForSequenceClassification.from_pretrained(tmp_path).eval()
    assert loaded.lm_head.weight.data_ptr() == loaded.transformer.tokens_embed.weight.data_ptr()
    assert loaded.lm_head.weight.shape[0] == V + 3
    ids, mask = padded_batch()
    with torch.no_grad():
        assert torch.allclose(model(ids, attention_mask=mask).logits, loaded(ids, attention_mask=mask).logits)
    auto = AutoModelForSequenceClassification.from_pretrained(tmp_path)
    assert type(auto) is GPT1ForSequenceClassification
    assert type(AutoConfig.from_pretrained(tmp_path)) is GPT1Config


def test_untied_head_is_saved_and_reloaded(tmp_path):
    # Only a tied head is left out of the saved weights (it is the token embedding); an untied one is a weight.
    model = GPT1LMHeadModel(tiny_config(tie_word_embeddings=False))
    model.save_pretrained(tmp_path)
    loaded, info = GPT1LMHeadModel.from_pretrained(tmp_path, output_loading_info=True)
    assert info["missing_keys"] == set()
    assert torch.equal(loaded.lm_head.weight, model.lm_head.weight)
    assert not torch.equal(loaded.lm_head.weight, loaded.transformer.tokens_embed.weight)


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a process without hf_gpt1
def test_trust_remote_code_without_hf_gpt1(tmp_path):
    # every head of the table, saved, loads through its Auto class in a process without hf_gpt1
    autos = [entry.auto_class for entry in HEADS]
    for entry in HEADS:
        entry.model(tiny_config(num_labels=2)).save_pretrained(tmp_path / entry.auto_class)
    auto_map = json.loads((tmp_path / "AutoModelForCausalLM" / "config.json").read_text())["auto_map"]
    assert set(auto_map) == {"AutoConfig", *autos} and len(autos) == 4
    script = f"""
import sys, torch, transformers
assert not any('hf_gpt1' in p for p in sys.path), sys.path
for auto in {autos!r}:
    model = getattr(transformers, auto).from_pretrained({str(tmp_path)!r} + "/" + auto, trust_remote_code=True)
    assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
base = transformers.AutoModel.from_pretrained({str(tmp_path)!r} + "/AutoModelForCausalLM", trust_remote_code=True)
print(type(base).__name__)
try:
    import hf_gpt1
    raise SystemExit("hf_gpt1 should not be importable here")
except ImportError:
    pass
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HF_MODULES_CACHE"] = str(tmp_path / "modules")
    # -I: isolated mode, so neither the cwd nor PYTHONPATH puts the repo on sys.path. An editable install
    # would still expose hf_gpt1, so run from a copy of the interpreter's site without it: -S skips site-packages
    # .pth files; add site-packages itself back explicitly.
    import site

    import transformers

    # the transformers this process runs first (a GPU machine's carried wheels shadow its image's older copy)
    site_dirs = [str(Path(transformers.__file__).parents[1])]
    site_dirs += [p for p in site.getsitepackages() if p.endswith("site-packages") and p not in site_dirs]
    code = f"import sys; sys.path[:0] = {site_dirs!r}; sys.modules.pop('hf_gpt1', None)\n" + script
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("GPT1Model")


def test_openai_gpt_checkpoint_loads_in_every_head(tmp_path):
    ref = OpenAIGPTDoubleHeadsModel(OpenAIGPTConfig(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4))
    ref.save_pretrained(tmp_path)
    lm = GPT1LMHeadModel.from_pretrained(tmp_path).eval()
    ids = torch.randint(0, V, (2, 9))
    with torch.no_grad():
        assert (lm(ids).logits - ref.eval()(ids).logits).abs().max() <= 1e-5
    clf, info = GPT1ForSequenceClassification.from_pretrained(tmp_path, num_labels=3, output_loading_info=True)
    assert set(info["missing_keys"]) == {"score.weight", "score.bias"}  # reported as newly initialised
    qkv = ref.transformer.h[0].attn.c_attn.weight  # Conv1D, (in, out)
    assert torch.equal(clf.transformer.h[0].attn.c_attn.weight, qkv.t())
    mc = GPT1ForMultipleChoice.from_pretrained(tmp_path)
    assert mc.config.model_type == "gpt1" and mc.score.weight.shape == (1, 32)


# ----------------------------------------------------------------------------------------------- bad input


def test_missing_extract_token_is_a_clear_error():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2))
    with pytest.raises(ValueError, match="no extract token"):
        model(torch.tensor([[START, 5, 6, 7]]), labels=torch.tensor([0]))


def test_too_long_sequence_is_a_clear_error():
    model = GPT1LMHeadModel(tiny_config())
    with pytest.raises(ValueError, match="exceeds n_positions=32"):
        model(torch.randint(0, 60, (1, 33)))


def test_labels_out_of_range_are_a_clear_error():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2))
    ids, mask = padded_batch()
    with pytest.raises(ValueError, match=r"class ids in \[0, 2\)"):
        model(ids, attention_mask=mask, labels=torch.tensor([0, 2]))
    mc = GPT1ForMultipleChoice(tiny_config())
    with pytest.raises(ValueError, match=r"choice indices in \[0, 2\)"):
        mc(torch.stack([ids, ids], 1), labels=torch.tensor([0, 5]))


def test_ids_outside_vocabulary_are_a_clear_error():
    model = GPT1LMHeadModel(tiny_config())
    with pytest.raises(ValueError, match="outside the embedding table"):
        model(torch.tensor([[1, 2, V + 5]]))


def test_missing_special_token_ids_are_a_clear_error():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2, extract_token_id=None))
    with pytest.raises(ValueError, match="add_gpt1_special_tokens"):
        model(torch.tensor([[1, 2, 3]]))


def test_input_format_mismatch_is_a_clear_error():
    single = GPT1ForSequenceClassification(tiny_config(num_labels=2, input_format="classification"))
    pair = torch.tensor([[START, 5, DELIM, 6, EXTRACT]])
    with pytest.raises(ValueError, match="single sentences"):
        single(pair)
    entail = GPT1ForSequenceClassification(tiny_config(num_labels=2, input_format="entailment"))
    with pytest.raises(ValueError, match="sentence pairs"):
        entail(torch.tensor([[START, 5, 6, EXTRACT]]))
    assert entail(pair).logits.shape == (1, 2)


def test_lm_training_loss_is_the_fused_mean_and_honours_num_items_in_batch():
    model = GPT1LMHeadModel(tiny_config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
    ids = torch.randint(0, V - 4, (2, 10))
    labels = ids.clone()
    labels[1, 6:] = -100  # 9 + 5 targets
    model.eval()
    reference = model(ids, labels=labels)
    model.train()
    out = model(ids, labels=labels)
    assert out.logits is None  # training needs only the loss: no (B, T, V) logits are built
    assert torch.allclose(out.loss, reference.loss, atol=1e-6)
    summed = model(ids, labels=labels, num_items_in_batch=torch.tensor(28))  # e.g. two accumulated micro-batches
    assert torch.allclose(summed.loss, reference.loss * 14 / 28, atol=1e-6)
    loss = model(ids, labels=labels).loss
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="back-propagated once"):
        loss.backward()


# ----------------------------------------------------------------------------------------------- the original's table


def test_original_table_dropout_gives_every_occurrence_of_a_token_one_mask():
    """With position embeddings zeroed and dropout on the embeddings only, the repeated token 5 gets one embedding
    vector everywhere under the original's table dropout, and different ones under per-position dropout."""
    ids = torch.tensor([[5, 5, 7, 5, 9, 5]])
    for original in (True, False):
        torch.manual_seed(0)
        model = GPT1Model(
            tiny_config(original_embedding_table=original, embd_pdrop=0.5, resid_pdrop=0.0, attn_pdrop=0.0)
        )
        with torch.no_grad():
            model.positions_embed.weight.zero_()
        model.train()
        embedded = model(ids, output_hidden_states=True).hidden_states[0][0]  # (T, C): the blocks' input
        rows = embedded[[0, 1, 3, 5]]
        same = all(torch.equal(rows[0], row) for row in rows[1:])
        assert same == original
        assert (embedded == 0).any()  # dropout did drop elements


def test_original_table_changes_nothing_in_eval_mode():
    ids = torch.randint(0, V, (2, 12))
    split, original = (GPT1LMHeadModel(tiny_config(original_embedding_table=flag)).eval() for flag in (False, True))
    original.load_state_dict(split.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(original(ids).logits, split(ids).logits)
        assert original(ids).logits.shape[-1] == V  # logits (and generation) cover the token rows only


def test_original_l1_normalises_over_tokens_special_tokens_and_positions():
    """The training objective's softmax covers the whole table (dropout off here, so the table is the parameters');
    the eval-mode loss is the language model's own distribution, over the tokens."""
    config = tiny_config(num_labels=2, original_embedding_table=True, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
    model = GPT1ForSequenceClassification(config)
    ids, mask = padded_batch()
    model.train()
    out = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]))
    with torch.no_grad():
        hidden = model.transformer(ids).last_hidden_state
        table = torch.cat([model.transformer.tokens_embed.weight, model.transformer.positions_embed.weight])
        logits = hidden @ table.T  # (B, T, V + n_positions), as the original's h · weᵀ
    assert table.shape[0] == V + 32
    losses = [F.cross_entropy(logits[b, : int(mask[b].sum()) - 1], ids[b, 1 : int(mask[b].sum())]) for b in range(2)]
    torch.testing.assert_close(out.lm_loss, torch.stack(losses).mean())
    model.eval()
    with torch.no_grad():
        evaluated = model(ids, attention_mask=mask, labels=torch.tensor([0, 1])).lm_loss
    torch.testing.assert_close(evaluated, hand_l1(model, ids, mask))  # over the token rows
    assert out.lm_loss > evaluated  # the position rows take probability mass from the tokens


def test_original_l1_uses_the_dropped_table_as_output_matrix(monkeypatch):
    """In training the L1 logits are h · (dropped table)ᵀ: the dropout mask drawn for the embedding is the output
    matrix's too. A fixed 'dropout' (every other row zeroed) makes the hand computation possible."""
    config = tiny_config(num_labels=2, original_embedding_table=True, resid_pdrop=0.0, attn_pdrop=0.0, clf_pdrop=0.0)
    config.embd_pdrop = 0.5
    model = GPT1ForSequenceClassification(config)
    odd_rows = lambda shape, p, device: (torch.arange(shape[0]) % 2 == 1)[:, None].expand(shape)  # noqa: E731
    monkeypatch.setattr(modeling_gpt1, "dropout_mask", odd_rows)
    ids, mask = padded_batch()
    model.train()
    out = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]))
    zero_odd_rows = lambda x: x * 2.0 * (torch.arange(x.shape[0]) % 2 == 0)[:, None]  # noqa: E731  (scale 1/(1-p))
    tokens = zero_odd_rows(model.transformer.tokens_embed.weight)
    positions = zero_odd_rows(model.transformer.positions_embed.weight)
    hidden = model.transformer(ids).last_hidden_state  # the same dropped tables: the patch is deterministic
    logits = hidden @ torch.cat([tokens, positions]).T
    losses = [F.cross_entropy(logits[b, : int(mask[b].sum()) - 1], ids[b, 1 : int(mask[b].sum())]) for b in range(2)]
    torch.testing.assert_close(out.lm_loss, torch.stack(losses).mean())


# ----------------------------------------------------------------------------------------------- one output shape


def test_lm_head_returns_the_same_fields_in_every_mode():
    model = GPT1LMHeadModel(tiny_config())
    ids = torch.randint(0, 60, (2, 8))
    model.train()
    assert model(ids, labels=ids).logits is None  # training with labels: the fused loss, no logits
    assert model(ids, labels=ids, skip_logits=False).logits.shape == (2, 8, V)
    model.eval()
    with torch.no_grad():
        assert model(ids, labels=ids).logits.shape == (2, 8, V)
        out = model(ids, labels=ids, skip_logits=True)
        assert out.logits is None and out.loss is not None
    with pytest.raises(ValueError, match="skip_logits=True returns only the loss: pass `labels`"):
        model(ids, skip_logits=True)


def test_float_labels_once_do_not_change_the_problem_type_for_good():
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    ids, mask = padded_batch()
    multi = model(ids, attention_mask=mask, labels=torch.tensor([[0.0, 1.0], [1.0, 1.0]]))
    assert multi.clf_loss is not None and model.config.problem_type is None
    single = model(ids, attention_mask=mask, labels=torch.tensor([0, 1]))  # transformers' heads would fail here
    torch.testing.assert_close(single.clf_loss, F.cross_entropy(single.logits, torch.tensor([0, 1])))
    model.config.problem_type = "single_label_classification"
    with pytest.raises(ValueError, match="labels must be integer class ids, got torch.float32"):
        model(ids, attention_mask=mask, labels=torch.tensor([0.0, 1.0]))


# ----------------------------------------------------------------------------------------------- no host syncs


def test_forward_code_reads_no_tensor_values_on_the_host():
    """`.item()`, `.tolist()`, `int(tensor)`... would stall an accelerator on every call: the model file has none."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(modeling_gpt1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            assert not (isinstance(func, ast.Attribute) and func.attr in {"item", "tolist", "numpy", "cpu"}), (
                ast.unparse(node)
            )
            assert not (isinstance(func, ast.Name) and func.id in {"int", "float", "bool"}), ast.unparse(node)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
@pytest.mark.parametrize("head", ["lm", "clf", "mc"])
def test_a_cuda_training_step_never_synchronises(head):
    config = tiny_config(num_labels=2, original_embedding_table=True)
    model = (
        {
            "lm": GPT1LMHeadModel,
            "clf": GPT1ForSequenceClassification,
            "mc": GPT1ForMultipleChoice,
        }[head](config)
        .cuda()
        .train()
    )
    ids, mask = (t.cuda() for t in padded_batch())
    if head == "mc":
        ids, mask = torch.stack([ids, ids], 1), torch.stack([mask, mask], 1)
    labels = ids if head == "lm" else torch.tensor([0, 1], device="cuda")
    model(ids, attention_mask=mask, labels=labels).loss.backward()  # warm-up: lazy initialisation may sync once
    torch.cuda.set_sync_debug_mode("error")
    try:
        model(ids, attention_mask=mask, labels=labels).loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")


# ----------------------------------------------------------------------------------------------- more bad input


def test_empty_batch_and_empty_sequence_are_clear_errors():
    model = GPT1LMHeadModel(tiny_config())
    for shape in ((0, 5), (2, 0)):
        with pytest.raises(ValueError, match="empty batch"):
            model(torch.zeros(shape, dtype=torch.long))


def test_generation_past_the_learned_positions_is_refused_before_it_starts():
    model = GPT1LMHeadModel(tiny_config()).eval()
    with pytest.raises(ValueError, match=r"prompt 10 \+ new\) exceeds n_positions=32.*at most 22 new tokens"):
        model.generate(torch.randint(0, 60, (1, 10)), max_new_tokens=30, do_sample=False)


def test_gpu_path_training_step_dispatches_fewer_ops_than_openai_gpt():
    """Host time per step on a GPU grows with the ops launched (a chunked CPU loss made v0.1's bf16 step
    launch 4,050 kernels, openai-gpt's 1,572). Meta tensors take the non-CPU code path without computing; every op
    that is not a view would be a kernel there. Ours must not launch more than the reference's LM training step."""
    from torch.utils._python_dispatch import TorchDispatchMode

    views = {"view", "_unsafe_view", "transpose", "t", "expand", "permute", "unsqueeze", "squeeze", "slice", "select"}

    class CountOps(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.count += func.__name__.split(".")[0] not in views and func.__name__ != "detach.default"
            return func(*args, **(kwargs or {}))

    counts = {}
    for name, model in zip(("ref", "ours"), reference_pair(device="meta")):
        model.train()
        ids = torch.randint(0, V, (4, 32), device="meta")
        with CountOps() as counter:
            model(input_ids=ids, labels=ids).loss.backward()
        counts[name] = counter.count
    assert counts["ours"] <= counts["ref"], counts


@pytest.mark.parametrize("use_cache", [False, True, None])
def test_every_head_accepts_the_keyword_arguments_transformers_heads_accept(use_cache):
    """TRL's RewardTrainer calls `model(**batch, use_cache=False)`; transformers' heads take these keywords."""
    from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification

    ids = torch.tensor([[START, 5, 6, DELIM, 7, EXTRACT], [START, 8, 9, DELIM, 10, EXTRACT]])
    keywords = {"use_cache": use_cache, "return_dict": True, "output_hidden_states": True}
    clf = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    assert clf(input_ids=ids, labels=torch.tensor([0, 1]), **keywords).logits.shape == (2, 2)
    choices = GPT1ForMultipleChoice(tiny_config()).eval()
    assert choices(input_ids=ids[None], labels=torch.tensor([1]), **keywords).logits.shape == (1, 2)


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_attention_maps_are_returned_whatever_the_attention_implementation(implementation):
    """`output_attentions=True`, an interpretability notebook's first step: the default SDPA model gives them too."""
    from hf_gpt1 import GPT1LMHeadModel

    model = GPT1LMHeadModel(tiny_config()).eval()
    model.set_attn_implementation(implementation)
    ids = torch.randint(0, 60, (2, 7))
    out = model(input_ids=ids, output_attentions=True)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (2, 4, 7, 7)
    torch.testing.assert_close(out.attentions[1].sum(-1), torch.ones(2, 4, 7))
    assert out.attentions[0].triu(1).abs().max() == 0  # causal
    model.set_attn_implementation("eager")
    reference = model(input_ids=ids, output_attentions=True)
    for got, expected in zip(out.attentions, reference.attentions):
        torch.testing.assert_close(got, expected)
    torch.testing.assert_close(out.logits, reference.logits, atol=1e-5, rtol=1e-5)


def test_pre_shifted_labels_are_the_targets_when_given():
    """Under sequence/context parallelism Accelerate passes `shift_labels` (shifted before sharding): they are the
    targets, position t predicting `shift_labels[t]`, the semantics of transformers' ForCausalLMLoss."""
    from hf_gpt1 import GPT1LMHeadModel

    model = GPT1LMHeadModel(tiny_config()).eval()
    ids = torch.randint(0, 60, (2, 9))
    shifted = torch.cat([ids[:, 1:], torch.full((2, 1), -100)], dim=1)
    with torch.no_grad():
        plain = model(input_ids=ids, labels=ids).loss
        given = model(input_ids=ids, labels=torch.zeros_like(ids), shift_labels=shifted).loss
        torch.testing.assert_close(given, plain)  # the same targets, whatever `labels` says
        logits = model(input_ids=ids).logits
        other = torch.randint(0, 60, (2, 9))  # every position has a target, the last one too
        expected = F.cross_entropy(logits.flatten(0, 1), other.flatten())
        torch.testing.assert_close(model(input_ids=ids, shift_labels=other).loss, expected)


@pytest.mark.parametrize("head", ["classification", "similarity", "multiple_choice"])
def test_any_padding_side_gives_the_logits_of_no_padding(head):
    """TRL and many decoder clients pad on the left: the logits must not depend on where the padding is."""
    from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification

    rows = [[START, 5, 6, DELIM, 7, EXTRACT], [START, 8, DELIM, 9, 10, 11, 12, EXTRACT]]
    if head == "multiple_choice":
        model = GPT1ForMultipleChoice(tiny_config()).eval()
    else:
        model = GPT1ForSequenceClassification(tiny_config(num_labels=2, similarity=head == "similarity")).eval()

    def batch(side: str):
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), PAD)
        mask = torch.zeros_like(ids)
        for i, row in enumerate(rows):
            span = slice(0, len(row)) if side == "right" else slice(width - len(row), width)
            ids[i, span], mask[i, span] = torch.tensor(row), 1
        if head == "multiple_choice":  # one example, the two rows as its choices
            return ids[None], mask[None]
        return ids, mask

    with torch.no_grad():
        if head == "multiple_choice":
            alone = torch.stack([model(input_ids=torch.tensor([[row]])).logits[0, 0] for row in rows])[None]
        else:
            alone = torch.cat([model(input_ids=torch.tensor([row])).logits for row in rows])
        for side in ("right", "left"):
            ids, mask = batch(side)
            torch.testing.assert_close(model(input_ids=ids, attention_mask=mask).logits, alone, atol=1e-5, rtol=1e-4)


def test_a_packed_row_gives_the_losses_of_its_sequences_run_apart():
    """TRL's padding-free packing: sequences joined in one row longer than n_positions, positions restarting at each
    one, the first token of each not a target. Attention stays within each sequence, and so do the losses."""
    from hf_gpt1 import GPT1LMHeadModel

    model = GPT1LMHeadModel(tiny_config()).eval()  # n_positions 32
    sequences = [torch.randint(0, 60, (length,)) for length in (20, 32, 9)]  # 61 tokens in one row
    ids = torch.cat(sequences)[None]
    positions = torch.cat([torch.arange(len(s)) for s in sequences])[None]
    labels = ids.clone()
    starts = torch.tensor([0, 20, 52])
    labels[0, starts] = -100  # nothing predicts a sequence's first token from the one before it
    with torch.no_grad():
        packed = model(input_ids=ids, position_ids=positions, labels=labels)
        apart = [model(input_ids=s[None], labels=s[None]) for s in sequences]
    token_losses = sum(out.loss * (len(s) - 1) for out, s in zip(apart, sequences))
    torch.testing.assert_close(packed.loss, token_losses / sum(len(s) - 1 for s in sequences), atol=1e-4, rtol=1e-4)
    for out, s, start in zip(apart, sequences, starts):
        torch.testing.assert_close(packed.logits[0, start : start + len(s)], out.logits[0], atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="position_ids must be in"):
        model(input_ids=ids[:, :33], position_ids=torch.arange(33)[None])


def test_the_cache_is_taken_under_either_name():
    # transformers 5.24 renamed `past_key_values` to `cache` and deprecated the old name: both versions are served.
    from transformers.cache_utils import DynamicCache

    model = GPT1LMHeadModel(tiny_config()).eval().requires_grad_(False)
    ids = torch.randint(0, 60, (2, 6))
    full = model(ids).logits[:, -1]
    prefix = model(ids[:, :5], use_cache=True)
    for name in ("cache", "past_key_values"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the old name, on transformers >= 5.24
            step = model(ids[:, 5:], use_cache=True, **{name: copy.deepcopy(getattr(prefix, CACHE_NAME))})
        torch.testing.assert_close(step.logits[:, -1], full, atol=1e-5, rtol=1e-5)
        assert getattr(step, CACHE_NAME).get_seq_length() == 6
    with pytest.raises(ValueError, match="Pass the key/value cache once"):
        model(ids, cache=DynamicCache(), past_key_values=DynamicCache())


def test_loading_an_openai_gpt_checkpoint_warns_of_nothing(tmp_path):
    """The reproduction's first step loads `openai-community/openai-gpt`: transformers' warning that a model of another
    type "is not supported and can yield errors" would be wrong here, and is not printed."""
    from transformers.testing_utils import CaptureLogger
    from transformers.utils import logging as hf_logging

    OpenAIGPTLMHeadModel(
        OpenAIGPTConfig(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4)
    ).save_pretrained(tmp_path)
    logger = hf_logging.get_logger("transformers.configuration_utils")
    with CaptureLogger(logger) as captured:
        for model_class in (GPT1LMHeadModel, GPT1ForSequenceClassification):
            model = model_class.from_pretrained(tmp_path)
            assert model.config.model_type == "gpt1"
    assert "to instantiate a model of type" not in captured.out


def test_label_smoothing_applies_to_l2_inside_l3():
    import torch
    import torch.nn.functional as F

    from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification
    from tests.utils import DELIM, EXTRACT, START, tiny_config

    ids = torch.tensor([[START, 5, 6, 7, DELIM, 8, 9, EXTRACT], [START, 9, 8, DELIM, 7, 6, 5, EXTRACT]])
    for head, inputs in (
        (GPT1ForSequenceClassification, ids),
        (GPT1ForMultipleChoice, torch.stack([ids, ids.flip(0)])),
    ):
        model = head(tiny_config(num_labels=2, clf_label_smoothing=0.2)).eval()
        with torch.no_grad():  # confident logits (a gap of 5 between the answers): smoothing changes the loss a lot
            logits = model(input_ids=inputs).logits
            model.score.weight.mul_(5 / (logits.max(-1).values - logits.min(-1).values).min())
            labels = model(input_ids=inputs).logits.argmax(-1)  # the confident answers
        out = model(input_ids=inputs, labels=labels)
        smoothed = F.cross_entropy(out.logits.float(), labels, label_smoothing=0.2)
        assert smoothed - F.cross_entropy(out.logits.float(), labels) > 0.05
        torch.testing.assert_close(out.clf_loss, smoothed)
        torch.testing.assert_close(out.loss, smoothed + 0.5 * out.lm_loss)
