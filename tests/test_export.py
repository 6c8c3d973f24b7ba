"""Export: `torch.export` with dynamic batch and sequence dimensions, and the ONNX (dynamo) export under onnxruntime,
each run at shapes other than the example's and compared with the eager model."""

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


@pytest.mark.parametrize("name", list(MODELS))
def test_onnx_export_runs_in_onnxruntime_at_other_shapes(name, tmp_path):
    for package in ("onnx", "onnxscript", "onnxruntime"):
        pytest.importorskip(package, reason=f"{package} is not installed (pip install -e '.[dev]' installs it)")
    import onnxruntime

    build, logits = MODELS[name]
    model = build().eval()
    program = torch.onnx.export(model, (), kwargs={"input_ids": task_batch(2, 8)}, dynamic_shapes=DYNAMIC, dynamo=True)
    program.save(str(tmp_path / "model.onnx"))
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"))
    for batch, length in ((1, 3), (4, 19)):
        ids = task_batch(batch, length)
        (out, *_) = session.run(None, {"input_ids": ids.numpy()})
        with torch.no_grad():
            torch.testing.assert_close(torch.from_numpy(out), logits(model(input_ids=ids)), atol=1e-4, rtol=1e-4)
