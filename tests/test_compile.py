# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""torch.compile of the LM and classification heads: one graph (no graph breaks) and the eager results.

Dynamo's tracing is checked with `torch._dynamo.explain` and `fullgraph=True` on the "eager" backend (fast, no code
generation); the inductor run, which compiles C++/Triton code, is marked slow.
"""

import pytest
import torch

from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification, GPT1LMHeadModel
from tests.utils import DELIM, EXTRACT, START, V, tiny_config


def clf_batch():
    ids = torch.randint(0, 60, (3, 12))
    ids[:, 0] = START
    ids[:, 5] = DELIM
    mask = torch.ones_like(ids)
    for row, length in enumerate((12, 9, 7)):  # right padding of different lengths
        ids[row, length - 1] = EXTRACT
        ids[row, length:] = 0
        mask[row, length:] = 0
    return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([0, 1, 1])}


def lm_batch():
    ids = torch.randint(0, 60, (2, 16))
    return {"input_ids": ids, "labels": ids}


CASES = {
    "lm": (lambda: GPT1LMHeadModel(tiny_config()), lm_batch),
    "clf": (lambda: GPT1ForSequenceClassification(tiny_config(num_labels=2)), clf_batch),
    "mc": (
        lambda: GPT1ForMultipleChoice(tiny_config()),
        lambda: {k: (v.view(1, 3, -1) if k != "labels" else v[:1]) for k, v in clf_batch().items()},
    ),
}


@pytest.mark.parametrize(("case", "attn"), [("lm", "sdpa"), ("clf", "sdpa"), ("mc", "sdpa"), ("clf", "eager")])
def test_heads_trace_without_graph_breaks(case, attn):
    make_model, make_batch = CASES[case]
    model = make_model().eval()
    model.set_attn_implementation(attn)
    batch = make_batch()
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(model)(**batch)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1


@pytest.mark.parametrize("original_table", [False, True])
@pytest.mark.parametrize("case", ["lm", "clf"])
def test_training_forward_traces_without_graph_breaks(case, original_table):
    """Training mode takes the CPU dropout-attention path (and dropout, of the table too): still one graph."""
    make_model, make_batch = CASES[case]
    model = make_model().train()
    model.config.original_embedding_table = original_table
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(model)(**make_batch())
    assert explanation.graph_break_count == 0, explanation.break_reasons


def test_lm_head_returns_the_same_fields_compiled_or_not():
    """One output shape in every mode: training with labels gives the loss and no logits, eager or compiled."""
    model = GPT1LMHeadModel(tiny_config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)).train()
    batch = lm_batch()
    eager = model(**batch)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="eager")(**batch)
    assert eager.logits is None and compiled.logits is None
    torch.testing.assert_close(compiled.loss, eager.loss)


def test_static_cache_compiled_generation_equals_eager():
    """A static cache and a compiled decode step (what transformers' `cache_implementation="static"` +
    `torch.compile` give on a GPU) generate exactly the eager tokens: the forward has no data-dependent branch."""
    model = GPT1LMHeadModel(tiny_config()).eval()
    prompt = torch.randint(0, 60, (2, 5))
    expected = model.generate(prompt, max_new_tokens=12, do_sample=False)
    torch._dynamo.reset()
    model.forward = torch.compile(model.forward, fullgraph=True, backend="eager")
    got = model.generate(prompt, max_new_tokens=12, do_sample=False, cache_implementation="static")
    assert torch.equal(got, expected)


def assert_compiled_matches_eager(case: str, tolerance: float, **compile_kwargs) -> None:
    make_model, make_batch = CASES[case]
    model = make_model().eval()
    batch = make_batch()
    with torch.no_grad():
        expected = model(**batch)
        torch._dynamo.reset()
        got = torch.compile(model, fullgraph=True, **compile_kwargs)(**batch)
    torch.testing.assert_close(got.loss, expected.loss, rtol=tolerance, atol=tolerance)
    torch.testing.assert_close(got.logits, expected.logits, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", list(CASES))
def test_fullgraph_compile_matches_eager(case):
    assert_compiled_matches_eager(case, 1e-5, backend="eager")


def test_fullgraph_compile_trains():
    """Backward through the compiled graph gives the eager gradients."""
    model = GPT1ForSequenceClassification(tiny_config(num_labels=2)).eval()
    batch = clf_batch()
    model(**batch).loss.backward()
    expected = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    torch._dynamo.reset()
    torch.compile(model, backend="aot_eager", fullgraph=True)(**batch).loss.backward()
    for name, grad in expected.items():
        torch.testing.assert_close(dict(model.named_parameters())[name].grad, grad, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["lm", "clf"])
def test_inductor_compile_matches_eager(case):
    assert_compiled_matches_eager(case, 1e-4)  # inductor's generated kernels round differently


def test_generate_with_a_static_cache_takes_transformers_compiled_decoding_path():
    """transformers' `generate` compiles the decode step itself when the cache is static on a GPU; forced onto the
    CPU here (`_compile_all_devices`), the compiled decoding gives the eager tokens."""
    from transformers import CompileConfig

    model = GPT1LMHeadModel(tiny_config()).eval()
    prompt = torch.randint(0, 60, (2, 5))
    expected = model.generate(prompt, max_new_tokens=12, do_sample=False)
    compile_config = CompileConfig(backend="eager", mode=None, fullgraph=True)
    compile_config._compile_all_devices = True
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    got = model.generate(
        prompt, max_new_tokens=12, do_sample=False, cache_implementation="static", compile_config=compile_config
    )
    assert torch.equal(got, expected)
    # one graph for all 11 decode steps: the static cache's shapes never change, so nothing recompiles per token
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1


def dynamo_graph_calls(model, batch, target) -> list:
    """The calls of `target` in the graph Dynamo captures of a training step (`fullgraph=True`: one graph)."""
    graphs = []

    def capture(graph, example_inputs):
        graphs.append(graph)
        return graph.forward

    torch._dynamo.reset()
    torch.compile(model, backend=capture, fullgraph=True)(**batch).loss.backward()
    return [node for graph in graphs for node in graph.graph.nodes if node.target is target]


@pytest.mark.parametrize("case", ["lm", "clf", "mc"])
def test_compiled_training_attention_is_plain_causal_with_dropout(case):
    """Compiled, every head's attention reaches SDPA as `is_causal=True` with the paper's dropout and no mask: the
    call flash attention serves. A materialised mask (what transformers' `create_causal_mask` builds under compile)
    sends it to the slower memory-efficient kernel on a GPU."""
    make_model, make_batch = CASES[case]
    model = make_model().train()
    calls = dynamo_graph_calls(model, make_batch(), torch._C._nn.scaled_dot_product_attention)
    assert len(calls) == model.config.n_layer
    for call in calls:
        assert call.kwargs.get("attn_mask") is None and call.kwargs.get("is_causal") is True, call.kwargs
        assert call.kwargs.get("dropout_p") == model.config.attn_pdrop == 0.1


def test_compiled_cuda_training_runs_attention_with_dropout_between_compiled_regions(monkeypatch):
    """On CUDA a compiled graph gives SDPA with dropout the memory-efficient kernel; eager SDPA gives it flash
    attention. So compiled CUDA training leaves that one call to eager mode (a graph break at each attention; the
    blocks' regions are one compiled graph each kind, whatever the depth), with the same loss and gradients.
    The CPU stands in for CUDA here."""
    from hf_gpt1 import kernels

    ids = torch.randint(0, 60, (2, 16))

    def compiled_step(n_layer: int, eager_attention: bool):
        monkeypatch.setattr(kernels, "EAGER_DROPOUT_ATTENTION_DEVICES", {"cpu"} if eager_attention else set())
        torch.manual_seed(0)
        model = GPT1LMHeadModel(tiny_config(n_layer=n_layer)).train()
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        loss = torch.compile(model, backend="aot_eager")(input_ids=ids, labels=ids).loss
        loss.backward()
        graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        return graphs, loss, {name: p.grad for name, p in model.named_parameters()}

    graphs, loss, grads = compiled_step(3, eager_attention=True)
    deeper_graphs, *_ = compiled_step(8, eager_attention=True)
    assert 1 < graphs == deeper_graphs  # broken at attention; the regions reused by every block, not per layer
    in_graph, expected_loss, expected = compiled_step(3, eager_attention=False)
    assert in_graph == 1
    torch.testing.assert_close(loss, expected_loss, rtol=0, atol=0)  # the same dropout masks, the same arithmetic
    for name, grad in expected.items():
        torch.testing.assert_close(grads[name], grad, rtol=0, atol=0)


def test_the_static_cache_decode_step_is_one_graph_without_host_reads():
    """One decode step with a static cache (what `generate` replays per token, as a CUDA graph on a GPU): Dynamo
    captures it whole, and neither its graph nor its eager run on meta tensors reads a value on the host."""
    from transformers import StaticCache

    from tests.test_host_reads import HOST_READS, NoHostReads

    model = GPT1LMHeadModel(tiny_config()).eval()
    prompt = torch.randint(0, 60, (2, 5))
    cache = StaticCache(config=model.config, max_cache_len=16)
    with torch.no_grad():
        model(prompt, cache=cache, use_cache=True)  # prefill
        step = {"input_ids": prompt[:, -1:], "cache": cache, "use_cache": True, "position_ids": torch.full((2, 1), 5)}
        torch._dynamo.reset()
        explanation = torch._dynamo.explain(model)(**step)
        assert explanation.graph_count == 1 and explanation.graph_break_count == 0, explanation.break_reasons
        calls = [node.target for graph in explanation.graphs for node in graph.graph.nodes]
        names = {getattr(target, "__name__", target) for target in calls if not isinstance(target, str) or target}
        assert not names & (HOST_READS | {"tolist"}), names

    meta = GPT1LMHeadModel(tiny_config()).to("meta").eval()
    meta_cache = StaticCache(config=meta.config, max_cache_len=16)
    with torch.no_grad():
        meta(prompt.to("meta"), cache=meta_cache, use_cache=True)
        with NoHostReads():
            positions = torch.full((2, 1), 5, device="meta")
            meta(prompt[:, -1:].to("meta"), cache=meta_cache, use_cache=True, position_ids=positions)


def aot_graphs(model, batch) -> list:
    """The forward and backward ATen graphs AOTAutograd gives the compiler for one training step."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    graphs = []

    def capture(graph, example_inputs):
        graphs.append(graph)
        return make_boxed_func(graph.forward)

    torch._dynamo.reset()
    torch.compile(model, backend=aot_autograd(fw_compiler=capture, bw_compiler=capture))(**batch).loss.backward()
    return graphs


@pytest.mark.parametrize("original_table", [False, True])
@pytest.mark.parametrize("aligned_rows", [1, 8])
def test_the_compiled_lm_loss_builds_no_copy_of_the_tables(monkeypatch, original_table, aligned_rows):
    """The compiled training step (forward and backward) concatenates and pads no embedding table for L1: the
    softmax over the original table's token and position rows is two blocks (three when the token rows are cut at an
    aligned count, as on a GPU), each its own matmul."""
    from hf_gpt1 import kernels

    monkeypatch.setitem(kernels.ALIGNED_ROWS, "cpu", aligned_rows)  # the CPU stands in for CUDA's 64
    # 67 token rows (not a multiple of 8) and 24 positions: the head's matmuls are told apart by their widths
    config = tiny_config(vocab_size=V + 3, n_positions=24, original_embedding_table=original_table)
    model = GPT1LMHeadModel(config).train()
    ids = torch.randint(0, 60, (2, 16))
    graphs = aot_graphs(model, {"input_ids": ids, "labels": ids})
    copies = [
        node
        for graph in graphs
        for node in graph.graph.nodes
        if node.target in (torch.ops.aten.cat.default, torch.ops.aten.constant_pad_nd.default)
        and node.meta["val"].shape[0] >= config.vocab_size
    ]
    assert len(graphs) == 2 and not copies, [(n.target, n.meta["val"].shape) for n in copies]
    widths = [n.meta["val"].shape[-1] for n in graphs[0].graph.nodes if n.target is torch.ops.aten.mm.default]
    blocks = ([67] if aligned_rows == 1 else [64, 3]) + ([24] if original_table else [])
    assert sorted(w for w in widths if w in (67, 64, 3, 24)) == sorted(blocks)


def test_generate_decodes_from_a_compiled_static_cache_by_default_on_cuda(monkeypatch, caplog):
    """On CUDA (the CPU stands in), `generate()` with no cache asked for decodes from a static cache rounded up to a
    bucket, through the compiled device loop (tests/test_decoding.py): the eager tokens, one graph per bucket and batch
    size, each said once; `cache_implementation="dynamic"` turns it off, and other devices keep transformers'
    default."""
    from transformers import CompileConfig

    from hf_gpt1 import modeling_gpt1

    model = GPT1LMHeadModel(tiny_config(n_positions=32)).eval()
    prompt = torch.randint(0, 60, (2, 5))
    expected = model.generate(prompt, max_new_tokens=12, do_sample=False)
    assert not hasattr(model, "_previous_max_cache_length")  # the CPU: transformers' dynamic cache

    monkeypatch.setattr(modeling_gpt1, "STATIC_DECODING_DEVICES", {"cpu"})
    monkeypatch.setattr(modeling_gpt1, "STATIC_CACHE_BUCKET", 8)
    model.generation_config.compile_config = CompileConfig(backend="eager", mode=None, fullgraph=True)
    model.generation_config.compile_config._compile_all_devices = True  # compile on the CPU, as on CUDA
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    with caplog.at_level("WARNING", logger=modeling_gpt1.__name__):
        first = model.generate(prompt, max_new_tokens=12, do_sample=False)  # 17 positions: the bucket of 24
        again = model.generate(prompt, max_new_tokens=10, do_sample=False)  # the same bucket (and graph)
    assert torch.equal(first, expected) and torch.equal(again, expected[:, :15])
    assert model._previous_max_cache_length == 24
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    said = [r.getMessage() for r in caplog.records if "static cache" in r.getMessage()]
    assert len(said) == 1 and "24 positions for a batch of 2" in said[0], said

    caplog.clear()
    with caplog.at_level("WARNING", logger=modeling_gpt1.__name__):
        model.generate(prompt[:1], max_new_tokens=12, do_sample=False)  # a new batch size: compiled, said once
        dynamic = model.generate(prompt, max_new_tokens=12, do_sample=False, cache_implementation="dynamic")
    assert torch.equal(dynamic, expected)
    said = [r.getMessage() for r in caplog.records if "static cache" in r.getMessage()]
    assert len(said) == 1 and "a batch of 1" in said[0], said


def bucket_batch(head: str, length: int) -> dict[str, torch.Tensor]:
    """A fine-tuning batch padded to `length` (a compiled run's bucket): right padding of different lengths."""
    rows = (length, length - 3, length // 2)
    ids = torch.randint(0, 60, (3, length))
    mask = torch.zeros_like(ids)
    for row, size in enumerate(rows):
        ids[row, 0], ids[row, size // 2], ids[row, size - 1] = START, DELIM, EXTRACT
        ids[row, size:], mask[row, :size] = 0, 1
    batch = {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([0, 1, 1])}
    if head == "sim":  # one ordering given, the model adds the other
        batch["labels"] = torch.tensor([0.5, 2.0, 4.0])
    if head == "mc":  # one question, its three answers
        batch = {k: v.view(1, 3, -1) if k != "labels" else v[:1] for k, v in batch.items()}
    return batch


FINE_TUNING_HEADS = {
    "clf": lambda config: GPT1ForSequenceClassification(config),
    "sim": lambda config: GPT1ForSequenceClassification(
        config.__class__(**{**config.to_dict(), "similarity": True, "num_labels": 1})
    ),
    "mc": lambda config: GPT1ForMultipleChoice(config),
}


@pytest.mark.parametrize("head", sorted(FINE_TUNING_HEADS))
def test_a_compiled_fine_tuning_step_is_one_graph_at_every_bucket_under_cudas_attention_policy(monkeypatch, head):
    """Compiled fine-tuning keeps attention with dropout in its graph, even where pre-training leaves it to eager
    flash attention (CUDA: the CPU stands in): forward and backward are one graph each at every length bucket, so
    the step can be replayed as one CUDA graph, and no op of either reads a value on the host."""
    from hf_gpt1 import kernels
    from hf_gpt1.training.finetune import compiled_padding
    from tests.test_host_reads import HOST_READS, compiled_step_ops

    monkeypatch.setattr(kernels, "EAGER_DROPOUT_ATTENTION_DEVICES", {"cpu"})
    config = tiny_config(num_labels=2, n_positions=128)
    model = FINE_TUNING_HEADS[head](config).train()
    assert model.config.attn_pdrop > 0
    step = compiled_padding(config.n_positions)
    buckets = range(step, config.n_positions + 1, step)
    assert len(buckets) > 1
    for length in buckets:
        ops = compiled_step_ops(model, bucket_batch(head, length))  # fullgraph=True: a graph break raises
        assert "mm.default" in ops and not {op for op in ops if op.split(".")[0] in HOST_READS}, (length, ops)
