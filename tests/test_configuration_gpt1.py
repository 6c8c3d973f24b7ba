# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT1Config (hf_gpt1.configuration_gpt1): the paper's defaults, validation, openai-gpt translation, the minimum
transformers version the remote code checks."""

import sys

import pytest
from transformers import OpenAIGPTConfig

from hf_gpt1 import GPT1Config, GPT1Model
from hf_gpt1.configuration_gpt1 import MIN_TRANSFORMERS_VERSION
from tests.utils import REPO_ROOT, tiny_config


def test_config_defaults_are_the_papers():
    c = GPT1Config()
    assert (c.vocab_size, c.n_positions, c.n_embd, c.n_layer, c.n_head) == (40478, 512, 768, 12, 12)
    assert c.n_inner is None and c.activation_function == "gelu_new"
    assert (c.resid_pdrop, c.embd_pdrop, c.attn_pdrop, c.clf_pdrop) == (0.1, 0.1, 0.1, 0.1)
    assert (c.layer_norm_epsilon, c.initializer_range, c.lm_coef) == (1e-5, 0.02, 0.5)
    assert c.tie_word_embeddings and c.lm_loss_reduction == "sequence"
    assert GPT1Model(tiny_config(n_inner=None)).h[0].mlp.c_fc.weight.shape == (128, 32)  # nn.Linear


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


def test_original_embedding_table_is_off_by_default():
    assert GPT1Config().original_embedding_table is False  # transformers' openai-gpt layout; the recipes turn it on


def test_an_older_transformers_is_refused_at_import_with_the_version_it_needs(monkeypatch):
    """Remote code runs under whatever transformers the user has: importing the config file says what it needs
    (loaded as transformers loads remote code: from its folder, as a package of its own)."""
    import importlib
    import types

    import transformers

    monkeypatch.setattr(transformers, "__version__", "5.17.0")
    remote = types.ModuleType("gpt1_remote")
    remote.__path__ = [str(REPO_ROOT / "hf_gpt1")]
    monkeypatch.setitem(sys.modules, "gpt1_remote", remote)
    with pytest.raises(ImportError, match=rf"needs transformers>={MIN_TRANSFORMERS_VERSION}, but 5.17.0 is installed"):
        importlib.import_module("gpt1_remote.configuration_gpt1")
    for name in [name for name in sys.modules if name.startswith("gpt1_remote.")]:
        monkeypatch.delitem(sys.modules, name)


def test_similarity_follows_the_input_format_and_a_contradiction_is_refused(tmp_path):
    """One fact, one field: `similarity` follows `input_format` when that is set (a contradicting pair is refused),
    and a config changing format through `from_pretrained` keywords stays consistent with `format_fields`."""
    assert GPT1Config(input_format="similarity").similarity is True
    assert GPT1Config(input_format="entailment").similarity is False
    assert GPT1Config(similarity=True).similarity is True  # no format given: the field alone (openai-gpt heads)
    with pytest.raises(ValueError, match="similarity=True contradicts input_format 'classification'"):
        GPT1Config(input_format="classification", similarity=True)
    GPT1Config(input_format="similarity", n_layer=1).save_pretrained(tmp_path)
    moved = GPT1Config.from_pretrained(tmp_path, **GPT1Config.format_fields("entailment"))
    assert (moved.input_format, moved.similarity) == ("entailment", False)
    moved.save_pretrained(tmp_path)
    assert GPT1Config.from_pretrained(tmp_path).similarity is False
