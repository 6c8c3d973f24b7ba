"""Core model tests: parity with transformers' openai-gpt, L3 by hand, masks, cache, tying, remote code, bad input."""

import json
import os
import subprocess
import sys

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
from hf_gpt1.modeling_gpt1 import swap_pair

V, START, DELIM, EXTRACT, PAD = 64, 60, 61, 62, 63


def tiny_config(**overrides) -> GPT1Config:
    fields = dict(
        vocab_size=V,
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=4,
        start_token_id=START,
        delimiter_token_id=DELIM,
        extract_token_id=EXTRACT,
        pad_token_id=PAD,
    )
    fields.update(overrides)
    return GPT1Config(**fields)


def reference_pair(attn_implementation: str = "sdpa"):
    """The same random weights in transformers' OpenAIGPTLMHeadModel and in ours."""
    ref = OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4)).eval()
    ours = GPT1LMHeadModel(GPT1Config.from_dict(ref.config.to_dict()))
    ours.load_state_dict(ref.state_dict())
    ours.set_attn_implementation(attn_implementation)
    return ref, ours.eval()


def padded_batch():
    """Two right-padded classification sequences: `<s> a b c <e> pad pad` and `<s> a b c d e <e>`."""
    ids = torch.tensor([[START, 5, 6, 7, EXTRACT, PAD, PAD], [START, 8, 9, 10, 11, 12, EXTRACT]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]])
    return ids, mask


# ----------------------------------------------------------------------------------------------- config


def test_config_defaults_are_the_papers():
    c = GPT1Config()
    assert (c.vocab_size, c.n_positions, c.n_embd, c.n_layer, c.n_head) == (40478, 512, 768, 12, 12)
    assert c.n_inner is None and c.activation_function == "gelu_new"
    assert (c.resid_pdrop, c.embd_pdrop, c.attn_pdrop, c.clf_pdrop) == (0.1, 0.1, 0.1, 0.1)
    assert (c.layer_norm_epsilon, c.initializer_range, c.lm_coef) == (1e-5, 0.02, 0.5)
    assert c.tie_word_embeddings and c.lm_loss_reduction == "sequence"
    assert GPT1Model(tiny_config(n_inner=None)).h[0].mlp.c_fc.weight.shape == (32, 128)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"n_embd": 30, "n_head": 4}, "divisible by n_head"),
        ({"lm_coef": -1.0}, "lm_coef"),
        ({"resid_pdrop": 1.5}, "resid_pdrop"),
        ({"lm_loss_reduction": "sum"}, "lm_loss_reduction"),
        ({"activation_function": "nope"}, "activation_function"),
        ({"n_layer": 0}, "n_layer"),
    ],
)
def test_config_rejects_bad_values(fields, message):
    with pytest.raises(Exception, match=message):
        tiny_config(**fields)


def test_openai_gpt_config_is_translated():
    cfg = GPT1Config.from_dict(OpenAIGPTConfig(n_layer=3, afn="gelu").to_dict())
    assert cfg.model_type == "gpt1" and cfg.n_layer == 3 and cfg.activation_function == "gelu_new"
    assert not hasattr(cfg, "summary_type")


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


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_lm_logits_match_openai_gpt(impl):
    ref, ours = reference_pair(impl)
    ids = torch.randint(0, V, (3, 24))
    with torch.no_grad():
        delta = (ref(ids).logits - ours(ids).logits).abs().max().item()
    assert delta <= 1e-5


def test_lm_loss_and_padding_mask_match_openai_gpt():
    ref, ours = reference_pair()
    ids, mask = padded_batch()
    with torch.no_grad():
        r, o = ref(ids, attention_mask=mask, labels=ids), ours(ids, attention_mask=mask, labels=ids)
    real = mask.bool()
    assert (r.logits[real] - o.logits[real]).abs().max() <= 1e-5
    assert torch.allclose(r.loss, o.loss, atol=1e-6)


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
    swapped = swap_pair(ids, DELIM, EXTRACT)
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


def test_trust_remote_code_without_hf_gpt1(tmp_path):
    for cls, auto in (
        (GPT1LMHeadModel, "AutoModelForCausalLM"),
        (GPT1ForSequenceClassification, "AutoModelForSequenceClassification"),
        (GPT1ForMultipleChoice, "AutoModelForMultipleChoice"),
    ):
        cls(tiny_config(num_labels=2)).save_pretrained(tmp_path / auto)
    auto_map = json.loads((tmp_path / "AutoModelForCausalLM" / "config.json").read_text())["auto_map"]
    assert set(auto_map) == {
        "AutoConfig",
        "AutoModel",
        "AutoModelForCausalLM",
        "AutoModelForSequenceClassification",
        "AutoModelForMultipleChoice",
    }
    script = f"""
import sys, torch, transformers
assert not any('hf_gpt1' in p for p in sys.path), sys.path
for auto in ("AutoModelForCausalLM", "AutoModelForSequenceClassification", "AutoModelForMultipleChoice"):
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

    site_dirs = [p for p in site.getsitepackages() if p.endswith("site-packages")]
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
    assert torch.equal(clf.transformer.h[0].attn.c_attn.weight, ref.transformer.h[0].attn.c_attn.weight)
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


@pytest.mark.parametrize("mode", ["fp32", "bf16", "autocast"])
def test_fused_linear_cross_entropy_matches_plain_loss_and_grads(mode):
    """The fused LM loss (one (M, V) buffer, grads computed in forward) ≡ cross_entropy of the projected logits."""
    dtype = torch.bfloat16 if mode == "bf16" else torch.float32
    hidden = torch.randn(300, 16, dtype=dtype, requires_grad=True)
    weight = (torch.randn(5000, 16) * 0.5).to(dtype).requires_grad_(True)
    targets, token_weights = torch.randint(0, 5000, (300,)), torch.rand(300)
    results = []
    for fn in (
        modeling_gpt1.linear_cross_entropy,
        lambda h, w, t, tw: (F.cross_entropy((h @ w.T).float(), t, reduction="none") * tw).sum(),
    ):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
            loss = fn(hidden, weight, targets, token_weights)
        hidden.grad = weight.grad = None
        (0.5 * loss).backward()
        results.append((loss.detach(), hidden.grad, weight.grad))
    (fused, *fused_grads), (plain, *plain_grads) = results
    assert torch.allclose(fused, plain, rtol=1e-6)
    tolerance = 1e-5 if mode == "fp32" else 1e-4  # bf16: the two sum the chunk products in different orders
    for a, b in zip(fused_grads, plain_grads):
        assert a.dtype == b.dtype
        assert (a.float() - b.float()).abs().max() <= tolerance * b.float().abs().max()


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


def test_cpu_dropout_keeps_each_element_with_probability_1_minus_p_and_rescales():
    x = torch.ones(1_000_000)
    out = modeling_gpt1.apply_dropout(x, 0.1, training=True)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.9) < 2e-3  # 6.7 standard deviations of a Binomial(1e6, 0.9) mean
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / 0.9))
    assert modeling_gpt1.apply_dropout(x, 0.1, training=False) is x
    torch.manual_seed(3)
    a = modeling_gpt1.apply_dropout(x, 0.5, training=True)
    torch.manual_seed(3)
    assert torch.equal(a, modeling_gpt1.apply_dropout(x, 0.5, training=True))  # seeded like every torch RNG op
    x = torch.randn(64, requires_grad=True)
    out = modeling_gpt1.apply_dropout(x, 0.3, training=True)
    out.sum().backward()
    assert torch.equal(x.grad, (out != 0) / 0.7)


@pytest.mark.parametrize("p, tolerance", [(0.1, 2e-3), (0.01, 1e-3)])  # two 15-bit halves per draw / one 31-bit draw
def test_cpu_dropout_mask_rate_and_independence(p, tolerance):
    torch.manual_seed(0)
    mask = modeling_gpt1._cpu_dropout_mask(torch.Size([1000, 1001]), p)  # an odd count: the last draw is half used
    assert mask.shape == (1000, 1001) and mask.dtype == torch.bool
    assert abs(mask.float().mean().item() - p) < tolerance  # > 6 standard deviations of a Binomial(1e6, p) mean
    pairs = mask.flatten()[:1_000_000].view(-1, 2).float()  # the two halves of each 31-bit draw
    assert abs(pairs.prod(1).mean().item() - p * p) < 6 * (p * p / 500_000) ** 0.5  # independent: P(both) = p²
    assert abs(pairs[:, 0].mean().item() - pairs[:, 1].mean().item()) < 2 * tolerance  # both halves drop at rate p


@pytest.mark.parametrize("padded", [False, True])
def test_cpu_dropout_attention_is_eager_attention_with_the_same_mask(padded):
    """The CPU training path equals the eager formula with the dropout mask it drew (re-drawn from the same seed)."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))
    attend = torch.ones(5, 5, dtype=torch.bool).tril()[None, None].repeat(2, 1, 1, 1)  # (B, 1, T, S)
    if padded:
        attend[0, ..., :2] = False  # left padding: keys 0-1 of sequence 0 are never attended (rows 0-1 fully masked)
    torch.manual_seed(1)
    out, _ = modeling_gpt1.cpu_dropout_attention_forward(
        None, q, k, v, attend if padded else None, scaling=0.5, dropout=0.3
    )
    torch.manual_seed(1)
    dropped = modeling_gpt1._cpu_dropout_mask(torch.Size([2, 3, 5, 5]), 0.3)
    scores = (q @ k.transpose(-1, -2) * 0.5).masked_fill(~attend, torch.finfo(torch.float32).min)
    probs = F.softmax(scores, dim=-1).masked_fill(dropped, 0) / 0.7
    torch.testing.assert_close(out, (probs @ v).transpose(1, 2))
