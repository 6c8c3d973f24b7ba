# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Export: `torch.export` with dynamic batch and sequence dimensions, and the ONNX exports (dynamo and the legacy
TorchScript one) under onnxruntime, each run at shapes other than the example's and compared with the eager model."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

from hf_gpt1 import GPT1ForSequenceClassification, GPT1LMHeadModel
from tests.utils import EXTRACT, START, tiny_config


def task_batch(batch: int, length: int) -> torch.Tensor:
    ids = torch.randint(0, 60, (batch, length))
    ids[:, 0], ids[:, -1] = START, EXTRACT
    return ids


# An exported LM returns logits only: `use_cache=False` (a KV cache is generate()'s, not an exported graph's).
MODELS = {
    "lm": (lambda: GPT1LMHeadModel(tiny_config(use_cache=False)), lambda out: out.logits),
    "classifier": (lambda: GPT1ForSequenceClassification(tiny_config(num_labels=3)), lambda out: out.logits),
}
DYNAMIC = {"input_ids": {0: Dim("batch", max=64), 1: Dim("seq", max=32)}}


@pytest.mark.parametrize("name", list(MODELS))
def test_torch_export_with_dynamic_batch_and_length(name):
    build, logits = MODELS[name]
    model = build().eval()
    program = torch.export.export(model, (), {"input_ids": task_batch(2, 8)}, dynamic_shapes=DYNAMIC)
    for batch, length in ((1, 3), (5, 17), (3, 32)):
        ids = task_batch(batch, length)
        with torch.no_grad():
            torch.testing.assert_close(logits(program.module()(input_ids=ids)), logits(model(input_ids=ids)))


def onnx_session(model, tmp_path, kwargs: dict, dynamo: bool = True):
    """`model` exported to ONNX with `kwargs` as the example inputs (every dimension dynamic), in onnxruntime."""
    for package in ("onnx", "onnxscript", "onnxruntime"):
        pytest.importorskip(package, reason=f"{package} is not installed (pip install -e '.[dev]' installs it)")
    import onnxruntime

    path = tmp_path / "model.onnx"
    if dynamo:
        dims = DYNAMIC["input_ids"]
        torch.onnx.export(model, (), kwargs=kwargs, dynamic_shapes={k: dims for k in kwargs}, dynamo=True).save(
            str(path)
        )
    else:
        axes = {name: {0: "batch", 1: "seq"} for name in kwargs}
        torch.onnx.export(
            model, (), str(path), kwargs=kwargs, input_names=list(kwargs), dynamic_axes=axes, dynamo=False
        )
    return onnxruntime.InferenceSession(str(path))


@pytest.mark.parametrize("name", list(MODELS))
def test_onnx_export_runs_in_onnxruntime_at_other_shapes(name, tmp_path):
    build, logits = MODELS[name]
    model = build().eval()
    session = onnx_session(model, tmp_path, {"input_ids": task_batch(2, 8)})
    for batch, length in ((1, 3), (4, 19)):
        ids = task_batch(batch, length)
        (out, *_) = session.run(None, {"input_ids": ids.numpy()})
        with torch.no_grad():
            torch.testing.assert_close(torch.from_numpy(out), logits(model(input_ids=ids)), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "legacy"])
def test_onnx_classifier_takes_a_left_padded_attention_mask(dynamo, tmp_path):
    # The mask is an input of the exported graph (not pruned), and left padding gives the unpadded logits there too.
    model = MODELS["classifier"][0]().eval()
    ids = task_batch(2, 8)
    session = onnx_session(model, tmp_path, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, dynamo)
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask"]
    text = task_batch(3, 9)
    padded, mask = torch.cat([torch.zeros(3, 4, dtype=torch.long), text], 1), torch.ones(3, 13, dtype=torch.long)
    mask[:, :4] = 0
    (out, *_) = session.run(None, {"input_ids": padded.numpy(), "attention_mask": mask.numpy()})
    with torch.no_grad():
        torch.testing.assert_close(torch.from_numpy(out), model(input_ids=text).logits, atol=1e-4, rtol=1e-4)


def test_onnx_language_model_takes_an_attention_mask(tmp_path):
    model = MODELS["lm"][0]().eval()
    ids = task_batch(2, 8)
    session = onnx_session(model, tmp_path, {"input_ids": ids, "attention_mask": torch.ones_like(ids)})
    ids, mask = task_batch(3, 11), torch.ones(3, 11, dtype=torch.long)
    mask[0, :3] = 0
    (out, *_) = session.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})
    real = mask.bool()  # logits at padding positions are not meaningful
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=mask).logits
    torch.testing.assert_close(torch.from_numpy(out)[real], expected[real], atol=1e-4, rtol=1e-4)
