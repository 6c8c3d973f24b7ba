# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Decoding past the launch bound (issue 52, item 3), proven on the CPU: the split-KV decode attention
(`kernels.split_kv_decode_attention`) against SDPA, and the decode loop that runs K tokens per compiled call
(`modeling_gpt1.GPT1LMHeadModel._sample`) against transformers' own loop, token for token. The CPU stands in for CUDA
where the default path is CUDA's."""

import pytest
import torch
from torch.nn import functional as F

from hf_gpt1 import GPT1LMHeadModel, kernels
from tests.utils import tiny_config


def cache_inputs(batch: int, heads: int, slots: int, filled: int, left_pad: int, dtype=torch.float32):
    """One query over a static cache of `slots`: the first `filled` slots written, the first `left_pad` of them
    padding in the odd rows; SDPA's boolean mask (True = attend)."""
    g = torch.Generator().manual_seed(slots * 131 + filled * 7 + batch + heads)
    query, key, value = (torch.randn(batch, heads, n, 16, generator=g).to(dtype) for n in (1, slots, slots))
    attend = torch.zeros(batch, 1, 1, slots, dtype=torch.bool)
    attend[..., :filled] = True
    attend[1::2, ..., :left_pad] = False
    return query, key, value, attend


@pytest.mark.parametrize(
    ("batch", "heads", "slots", "filled", "left_pad", "chunk"),
    [
        (1, 1, 64, 64, 0, 16),  # full cache
        (1, 12, 512, 37, 0, 64),  # mostly unfilled: whole chunks masked
        (3, 4, 128, 100, 9, 32),  # left padding in rows 1 (and a chunk boundary inside the padding)
        (8, 2, 256, 129, 70, 64),  # padding over a whole chunk
        (2, 3, 100, 51, 3, 64),  # a length that is not a multiple of the chunk
        (2, 2, 96, 1, 0, 32),  # one slot filled
    ],
)
def test_split_kv_decode_attention_equals_sdpa(batch, heads, slots, filled, left_pad, chunk):
    query, key, value, attend = cache_inputs(batch, heads, slots, filled, left_pad)
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=attend).transpose(1, 2)
    got, _ = kernels.split_kv_decode_attention(query, key, value, attend, None, chunk=chunk)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)  # fp32: float rounding only
    additive = torch.zeros(attend.shape).masked_fill(~attend, torch.finfo(torch.float32).min)
    got, _ = kernels.split_kv_decode_attention(query, key, value, additive, None, chunk=chunk)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_split_kv_decode_attention_in_bf16_and_without_a_mask():
    query, key, value, attend = cache_inputs(2, 4, 256, 256, 0, torch.bfloat16)
    expected = F.scaled_dot_product_attention(query.float(), key.float(), value.float()).transpose(1, 2)
    got, _ = kernels.split_kv_decode_attention(query, key, value, None, 0.25)
    assert got.dtype == torch.bfloat16
    expected = F.scaled_dot_product_attention(query.float(), key.float(), value.float(), scale=0.25).transpose(1, 2)
    torch.testing.assert_close(got.float(), expected, rtol=2e-2, atol=2e-2)  # bf16 rounding of p·V


def test_split_kv_decode_attention_compiles_without_graph_breaks():
    query, key, value, attend = cache_inputs(2, 4, 256, 70, 5)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(kernels.split_kv_decode_attention)(query, key, value, attend, None)
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0, explanation.break_reasons


def test_the_decode_step_over_a_static_cache_takes_the_split_kv_kernel(monkeypatch):
    """Where the device is in SPLIT_KV_DECODE_DEVICES (the CPU stands in for CUDA), each layer's decode step over a
    static cache goes through the split-KV kernel (not the prefill, not a dynamic cache), the tokens are the
    dynamic cache's, and the model's decode step still traces as one graph."""
    from transformers import StaticCache

    model = GPT1LMHeadModel(tiny_config(n_positions=64)).eval()
    prompt = torch.randint(0, 60, (2, 5))
    mask = torch.ones_like(prompt)
    mask[1, :2] = 0  # left padding
    expected = model.generate(prompt, attention_mask=mask, max_new_tokens=20, do_sample=False)
    calls = []
    kernel = kernels.split_kv_decode_attention

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return kernel(*args, **kwargs)

    monkeypatch.setattr(kernels, "split_kv_decode_attention", counted)
    monkeypatch.setattr(kernels, "SPLIT_KV_DECODE_DEVICES", {"cpu"})
    model.generate(prompt, attention_mask=mask, max_new_tokens=20, do_sample=False, cache_implementation="dynamic")
    assert not calls  # a dynamic cache: SDPA
    got = model.generate(
        prompt, attention_mask=mask, max_new_tokens=20, do_sample=False, cache_implementation="static"
    )
    assert torch.equal(got, expected)
    assert len(calls) == 19 * model.config.n_layer and {shape[-2] for shape in calls} == {1}

    cache = StaticCache(config=model.config, max_cache_len=64)
    with torch.no_grad():
        model(prompt, cache=cache, use_cache=True)
        step = {"input_ids": prompt[:, -1:], "cache": cache, "use_cache": True, "position_ids": torch.full((2, 1), 5)}
        torch._dynamo.reset()
        monkeypatch.setattr(kernels, "split_kv_decode_attention", kernel)
        explanation = torch._dynamo.explain(model)(**step)
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0, explanation.break_reasons
