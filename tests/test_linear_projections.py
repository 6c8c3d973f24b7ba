# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The blocks' projections are `nn.Linear`: quantisers and adapters target them with their defaults, and checkpoints in
transformers' legacy `Conv1D` layout (`openai-gpt`, hf_gpt1 0.2) load converted, to the same outputs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from torch import nn
from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel
from transformers.pytorch_utils import Conv1D

from hf_gpt1 import GPT1Config, GPT1ForSequenceClassification, GPT1LMHeadModel, GPT1Model, load_gpt1_tokenizer
from tests.utils import shared_data, tiny_config

FIXTURE = Path(__file__).parent / "fixtures" / "gpt1_0.2_conv1d"
PROJECTIONS = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def _projection_count(model: nn.Module) -> int:
    return 4 * model.config.n_layer


def _logits(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.eval()(ids).logits


def test_every_block_projects_with_nn_linear():
    model = GPT1LMHeadModel(tiny_config())
    linear = [name for name, module in model.named_modules() if type(module) is nn.Linear and ".h." in name]
    assert len(linear) == _projection_count(model)
    assert not any(isinstance(module, Conv1D) for module in model.modules())


@pytest.fixture
def openai_gpt_dir(tmp_path) -> tuple[OpenAIGPTLMHeadModel, Path]:
    """A random transformers openai-gpt model (Conv1D blocks, n_inner square-free) saved in two shards."""
    reference = OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=50, n_positions=32, n_embd=32, n_layer=2, n_head=4))
    reference.save_pretrained(tmp_path / "openai", max_shard_size="40KB")
    assert len(list((tmp_path / "openai").glob("*.safetensors"))) > 1
    return reference.eval(), tmp_path / "openai"


def test_an_openai_gpt_checkpoint_loads_converted_and_saves_the_new_layout(openai_gpt_dir, tmp_path):
    reference, folder = openai_gpt_dir
    ids = torch.randint(0, 50, (2, 12))
    model = GPT1LMHeadModel.from_pretrained(folder)
    torch.testing.assert_close(_logits(model, ids), _logits(reference, ids), rtol=0, atol=1e-6)
    assert model.config.projection_layout == "linear"

    model.save_pretrained(tmp_path / "ours")
    saved = load_file(tmp_path / "ours" / "model.safetensors")
    assert saved["transformer.h.0.attn.c_attn.weight"].shape == (3 * 32, 32)  # (out, in)
    assert saved["transformer.h.1.mlp.c_fc.weight"].shape == (4 * 32, 32)
    assert json.loads((tmp_path / "ours" / "config.json").read_text())["projection_layout"] == "linear"
    again = GPT1LMHeadModel.from_pretrained(tmp_path / "ours")
    torch.testing.assert_close(_logits(again, ids), _logits(model, ids), rtol=0, atol=0)


def test_an_openai_gpt_state_dict_loads_with_load_state_dict(openai_gpt_dir):
    reference, _ = openai_gpt_dir
    model = GPT1LMHeadModel(GPT1Config(vocab_size=50, n_positions=32, n_embd=32, n_layer=2, n_head=4))
    model.load_state_dict(reference.state_dict(), strict=False)  # openai-gpt's causal-mask buffers are unexpected
    ids = torch.randint(0, 50, (2, 12))
    torch.testing.assert_close(_logits(model, ids), _logits(reference, ids), rtol=0, atol=1e-6)


def test_files_saved_by_version_0_3_load_to_their_outputs(tmp_path):
    """Square projections (n_inner = n_embd): only the config (no `projection_layout`) says they are Conv1D."""
    expected = json.loads((FIXTURE / "expected.json").read_text())
    ids = torch.tensor(expected["input_ids"])
    model = GPT1ForSequenceClassification.from_pretrained(FIXTURE)
    torch.testing.assert_close(_logits(model, ids), torch.tensor(expected["logits"]), rtol=0, atol=1e-6)

    model.save_pretrained(tmp_path / "new")
    again = GPT1ForSequenceClassification.from_pretrained(tmp_path / "new")
    torch.testing.assert_close(_logits(again, ids), torch.tensor(expected["logits"]), rtol=0, atol=1e-6)
    # the base model alone, from the head's files (the prefix `transformer.` is dropped on the way)
    base = GPT1Model.from_pretrained(FIXTURE).eval()
    with torch.no_grad():
        torch.testing.assert_close(base(ids).last_hidden_state, model.transformer(ids).last_hidden_state)


def test_a_config_says_which_layout_its_files_store():
    assert GPT1Config().projection_layout == "linear"
    assert GPT1Config.from_dict({"model_type": "gpt1"}).projection_layout == "conv1d"  # a file of hf_gpt1 0.2
    assert GPT1Config.from_dict(OpenAIGPTConfig().to_dict()).projection_layout == "conv1d"
    assert GPT1Config.from_dict(GPT1Config().to_dict()).projection_layout == "linear"
    with pytest.raises(Exception, match="projection_layout .rows. must be one of"):
        GPT1Config(projection_layout="rows")


@pytest.fixture
def trained_lm(tiny_lm) -> tuple[GPT1LMHeadModel, torch.Tensor]:
    model = GPT1LMHeadModel.from_pretrained(tiny_lm).eval()
    tokenizer = load_gpt1_tokenizer(tiny_lm)
    lines = shared_data("text", "wikitext-2", "test.txt").read_text(encoding="utf-8").splitlines()
    text = " ".join(line for line in lines[:200] if line.strip())
    ids = tokenizer(text, add_special_tokens=False)["input_ids"][: 4 * 64]
    return model, torch.tensor(ids).view(4, 64)


def _top1_agreement(model: nn.Module, quantized: nn.Module, ids: torch.Tensor) -> float:
    return (_logits(model, ids).argmax(-1) == _logits(quantized, ids).argmax(-1)).float().mean().item()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:torch.quantize_per_tensor:UserWarning")
def test_quantize_dynamic_converts_every_block_projection(trained_lm):
    if not hasattr(torch.ao.quantization, "quantize_dynamic"):
        pytest.skip(f"torch {torch.__version__} no longer ships torch.ao.quantization.quantize_dynamic")
    model, ids = trained_lm
    quantized = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8)
    converted = {name for name, module in quantized.named_modules() if "quantized" in type(module).__module__}
    blocks = {f"transformer.h.{i}.{p}" for i in range(model.config.n_layer) for p in PROJECTIONS}
    assert blocks <= converted
    assert _top1_agreement(model, quantized, ids) >= 0.95


def test_torchao_quantizes_every_block_projection(trained_lm, tmp_path):
    torchao = pytest.importorskip("torchao", reason="torchao is not installed (pip install -e '.[test]' installs it)")
    from transformers import TorchAoConfig

    model, ids = trained_lm
    quantized = copy.deepcopy(model)
    torchao.quantization.quantize_(quantized, torchao.quantization.Int8WeightOnlyConfig())
    blocks = [module for name, module in quantized.named_modules() if name.endswith(PROJECTIONS)]
    assert len(blocks) == _projection_count(model)
    assert all(type(module.weight) is not nn.Parameter for module in blocks)  # torchao's tensor subclass
    assert _top1_agreement(model, quantized, ids) >= 0.95

    # through from_pretrained, on files of the old layout too
    loaded = GPT1ForSequenceClassification.from_pretrained(
        FIXTURE, quantization_config=TorchAoConfig(torchao.quantization.Int8WeightOnlyConfig())
    )
    expected = json.loads((FIXTURE / "expected.json").read_text())
    logits = _logits(loaded, torch.tensor(expected["input_ids"]))
    torch.testing.assert_close(logits, torch.tensor(expected["logits"]), rtol=0, atol=0.05)


def test_the_recipes_load_files_of_both_layouts(openai_gpt_dir, tmp_path):
    """`load_checkpoint` (every recipe's loader) checks each stored shape against the layout the config names."""
    from hf_gpt1.training.checkpoints import load_checkpoint

    expected = json.loads((FIXTURE / "expected.json").read_text())
    model = load_checkpoint(GPT1ForSequenceClassification, FIXTURE)
    logits = _logits(model, torch.tensor(expected["input_ids"]))
    torch.testing.assert_close(logits, torch.tensor(expected["logits"]), rtol=0, atol=1e-6)
    model.save_pretrained(tmp_path / "linear")
    assert load_checkpoint(GPT1ForSequenceClassification, tmp_path / "linear").config.projection_layout == "linear"
    reference, folder = openai_gpt_dir
    ids = torch.randint(0, 50, (2, 12))
    lm = load_checkpoint(GPT1LMHeadModel, folder)
    torch.testing.assert_close(_logits(lm, ids), _logits(reference, ids), rtol=0, atol=1e-6)
