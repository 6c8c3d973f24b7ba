# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Decoding past the launch bound (issue 52, item 3), proven on the CPU: the split-KV decode attention
(`kernels.split_kv_decode_attention`) against SDPA, and the decode loop that runs K tokens per compiled call
(`hf_gpt1/decoding.py`) against transformers' own loop, token for token. The CPU stands in for CUDA
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


# ---- the device loop ----

GREEDY = {"do_sample": False}
SAMPLING = {"do_sample": True, "temperature": 0.7, "top_k": 20, "top_p": 0.9}  # GenerationConfig's sampling knobs


def on_cuda_defaults(monkeypatch, model, compiled: bool = True):
    """The CPU standing in for CUDA: the default static decoding, its step compiled as on CUDA (the "eager" backend:
    Dynamo's graph, without code generation)."""
    from transformers import CompileConfig

    from hf_gpt1 import modeling_gpt1

    monkeypatch.setattr(modeling_gpt1, "STATIC_DECODING_DEVICES", {"cpu"})
    if compiled:
        model.generation_config.compile_config = CompileConfig(backend="eager", mode=None, fullgraph=True)
        model.generation_config.compile_config._compile_all_devices = True


def steps_taken(monkeypatch, compiled: bool) -> list:
    """Records each call of the device loop's step (compiled: of the compiled step, from outside its graph)."""
    from hf_gpt1 import decoding

    calls = []
    if compiled:
        compile_step = decoding.compiled_decode_step

        def counted_compiled(model, config):
            step = compile_step(model, config)

            def counted(*args, **kwargs):
                calls.append(args[1].shape)
                return step(*args, **kwargs)

            return counted

        monkeypatch.setattr(decoding, "compiled_decode_step", counted_compiled)
        return calls
    step = decoding._decode_step

    def counted(*args, **kwargs):
        calls.append(args[1].shape)
        return step(*args, **kwargs)

    monkeypatch.setattr(decoding, "_decode_step", counted)
    return calls


def left_padded(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    prompt = torch.randint(0, 60, (batch, 6))
    mask = torch.ones_like(prompt)
    mask[1::2, :3] = 0  # odd rows left-padded
    prompt[mask == 0] = 63
    return prompt, mask


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("mode", ["greedy", "sampling"])
@pytest.mark.parametrize("eos", [False, True])
def test_the_device_loop_gives_transformers_tokens(monkeypatch, batch, mode, eos):
    """The default path's device loop (compiled step, K tokens per host read) against transformers' own loop on the
    same static cache, token for token: greedy and seeded sampling (the same draws in the same order), b1 and b8,
    with an EOS that ends rows mid-way (padding after it, and the output cut where the last row ends) or none, and a
    number of new tokens that is no multiple of K."""
    from hf_gpt1 import decoding

    monkeypatch.setattr(decoding, "DECODE_TOKENS_PER_READ", 4)
    model = GPT1LMHeadModel(tiny_config(n_positions=64)).eval()
    prompt, mask = left_padded(batch)
    options = {
        "attention_mask": mask,
        "max_new_tokens": 19,
        "pad_token_id": 63,
        **(GREEDY if mode == "greedy" else SAMPLING),
    }
    if eos:
        torch.manual_seed(0)
        free = model.generate(prompt, **options, cache_implementation="static")[:, 6:]
        options["eos_token_id"] = int(free[0, 5])  # row 0 ends at its 6th new token (at the latest)

    torch.manual_seed(0)
    expected = model.generate(prompt, **options, cache_implementation="static")  # chosen by the call: transformers'
    on_cuda_defaults(monkeypatch, model)
    steps = steps_taken(monkeypatch, compiled=True)
    torch.manual_seed(0)
    got = model.generate(prompt, **options)
    after = torch.rand(3)
    assert steps, "the device loop was not taken"
    assert torch.equal(got, expected), (got, expected)
    if not eos:
        assert got.shape[1] == 6 + 19
        torch.manual_seed(0)
        model.generate(prompt, **options, cache_implementation="static")
        assert torch.equal(torch.rand(3), after)  # the same random numbers drawn
    else:
        assert (got[0, 6:] == options["eos_token_id"]).any()
    if eos and batch == 1:
        assert got.shape[1] < 6 + 19  # stopped early, at the step where the row ended
    if mode == "greedy":  # and the CPU's default, the dynamic cache
        assert torch.equal(got, model.generate(prompt, **options, cache_implementation="dynamic"))


@pytest.mark.parametrize(
    ("options", "device_loop"),
    [
        ({}, True),
        (SAMPLING, True),
        ({"eos_token_id": 5}, True),
        ({"disable_compile": True}, True),  # the same loop, its step uncompiled
        ({"cache_implementation": "static"}, False),  # a cache the call chose: transformers' loop
        ({"cache_implementation": "dynamic"}, False),
        ({"streamer": "streamer"}, False),
        ({"return_dict_in_generate": True, "output_scores": True}, False),
        ({"repetition_penalty": 1.3}, False),
        ({"no_repeat_ngram_size": 2}, False),
        ({"min_new_tokens": 3, "eos_token_id": 5}, False),
        ({"logits_processor": "custom"}, False),
        ({"max_time": 60.0}, False),
        ({"num_beams": 2}, False),
    ],
)
def test_which_options_take_the_device_loop(monkeypatch, options, device_loop):
    """The options the device loop covers, and those that send `generate` to transformers' own loop (documented in
    GPT1LMHeadModel.generate): every path gives the same tokens as transformers' loop."""
    from transformers import LogitsProcessorList
    from transformers.generation.streamers import BaseStreamer

    class Collect(BaseStreamer):
        def put(self, value):
            pass

        def end(self):
            pass

    model = GPT1LMHeadModel(tiny_config(n_positions=64)).eval()
    prompt, mask = left_padded(2)
    options = dict(options)
    if options.get("streamer"):
        prompt, mask = prompt[:1], mask[:1]  # streamers take one row
        options["streamer"] = Collect()
    if options.get("logits_processor"):
        options["logits_processor"] = LogitsProcessorList([lambda ids, scores: scores - 1.0])
    call = {"attention_mask": mask, "max_new_tokens": 9, "pad_token_id": 63, **options}
    torch.manual_seed(0)
    expected = model.generate(prompt, **{**call, "cache_implementation": call.get("cache_implementation", "static")})
    on_cuda_defaults(monkeypatch, model, compiled=False)
    steps = steps_taken(monkeypatch, compiled=False)
    torch.manual_seed(0)
    got = model.generate(prompt, **call)
    assert bool(steps) is device_loop
    tokens = got.sequences if not isinstance(got, torch.Tensor) else got
    expected = expected.sequences if not isinstance(expected, torch.Tensor) else expected
    assert torch.equal(tokens, expected)


def test_the_device_loop_reads_the_host_once_per_block_not_per_token(monkeypatch):
    """Outside its step the loop reads the device once per K tokens (the EOS check) and once at the end (where the
    last row ended); the step itself is one graph without host-read ops (the compiled graph's ops, recorded). So the
    reads of a whole `generate` grow with the blocks, by none per token."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    from hf_gpt1 import decoding
    from tests.test_host_reads import HOST_READS, CountedHostReads

    model = GPT1LMHeadModel(tiny_config(n_positions=64)).eval()
    prompt, mask = left_padded(2)
    on_cuda_defaults(monkeypatch, model, compiled=False)
    mode, step = CountedHostReads(), decoding._decode_step

    def uncounted(*args, **kwargs):  # the step's own ops are checked in its compiled graph below
        counting, mode.counting = mode.counting, False
        try:
            return step(*args, **kwargs)
        finally:
            mode.counting = counting

    monkeypatch.setattr(decoding, "_decode_step", uncounted)
    eos = 62  # a token the greedy tiny model never gives here (checked: the full length comes back)
    reads = {}
    for new in (2, 9, 10, 17, 30):
        mode.reads, mode.counting = [], True
        with mode:
            got = model.generate(prompt, attention_mask=mask, max_new_tokens=new, do_sample=False, eos_token_id=eos)
        mode.counting = False
        assert got.shape[1] == 6 + new
        blocks = -(-(new - 1) // decoding.DECODE_TOKENS_PER_READ)
        reads[new] = len(mode.reads) - blocks
    assert len(set(reads.values())) == 1, reads  # what is left is the same for 2 tokens or 30: none per token

    ops = set()

    def record(graph, example_inputs):
        ops.update(n.target.__name__ for n in graph.graph.nodes if isinstance(n.target, torch._ops.OpOverload))
        return make_boxed_func(graph.forward)

    monkeypatch.setattr(decoding, "_decode_step", step)
    from transformers import CompileConfig

    config = CompileConfig(backend=aot_autograd(fw_compiler=record), mode=None, fullgraph=True)
    config._compile_all_devices = True
    torch._dynamo.reset()
    for options in (GREEDY, SAMPLING):
        model.generate(
            prompt, attention_mask=mask, max_new_tokens=12, eos_token_id=eos, compile_config=config, **options
        )
    assert {"mm.default", "multinomial.default", "argmax.default"} <= ops, ops
    assert not {op for op in ops if op.split(".")[0] in HOST_READS}, ops


def test_the_compiled_step_is_one_graph_per_bucket_and_batch(monkeypatch):
    """Compiled (fullgraph: a graph break raises), the step compiles once per (cache bucket, batch size): calls of
    other lengths in the same bucket reuse it; a new batch size or bucket compiles one more."""
    from hf_gpt1 import modeling_gpt1

    monkeypatch.setattr(modeling_gpt1, "STATIC_CACHE_BUCKET", 16)
    model = GPT1LMHeadModel(tiny_config(n_positions=64)).eval()
    prompt, mask = left_padded(2)
    on_cuda_defaults(monkeypatch, model)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()

    def generate(rows: int, new: int, **options):
        model.generate(prompt[:rows], attention_mask=mask[:rows], max_new_tokens=new, pad_token_id=63, **options)
        return torch._dynamo.utils.counters["stats"]["unique_graphs"]

    assert generate(2, 9) == 1  # the bucket of 16
    assert generate(2, 5) == 1  # the same bucket and batch
    assert generate(2, 7, eos_token_id=62) == 1  # with EOS: the same graph shapes, EOS a tensor input
    assert generate(1, 9) == 2  # a new batch size
