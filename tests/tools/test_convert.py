# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The original-release converter: synthetic shards in the real params_shapes.json layout, safety, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from hf_gpt1 import GPT1LMHeadModel
from hf_gpt1.modeling_gpt1 import PROJECTION_WEIGHTS
from hf_gpt1.tools.convert import ConversionError, convert_openai_checkpoint, parameter_names, read_layout
from tests.utils import run_command, shared_data


def tiny_shapes(n_layer=2, n_embd=64, vocab=50, n_ctx=16, inner=256):
    block = [
        [1, n_embd, 3 * n_embd], [3 * n_embd], [1, n_embd, n_embd], [n_embd], [n_embd], [n_embd],
        [1, n_embd, inner], [inner], [1, inner, n_embd], [n_embd], [n_embd], [n_embd],
    ]  # fmt: skip
    return [[n_ctx, n_embd], [vocab, n_embd]] + block * n_layer


def write_release(folder, shapes, seed=0):
    """Writes a fake release exactly as OpenAI laid it out: all arrays flattened, concatenated, cut in 10 shards."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    for n, shard in enumerate(np.array_split(np.concatenate([a.ravel() for a in arrays]), 10)):
        np.save(folder / f"params_{n}.npy", shard)
    return arrays


def test_round_trip_of_tiny_release(tmp_path):
    arrays = write_release(tmp_path, tiny_shapes())
    model = convert_openai_checkpoint(tmp_path)
    state = model.state_dict()
    for name, array in zip(parameter_names(2), arrays):
        expected = torch.from_numpy(array.reshape(array.shape[1:]) if array.ndim == 3 else array)
        if name.endswith(PROJECTION_WEIGHTS):  # the release's (in, out) is nn.Linear's (out, in) transposed
            expected = expected.t()
        got = state[name][: expected.shape[0]] if name.endswith("tokens_embed.weight") else state[name]
        assert torch.equal(got, expected), name
    cfg = model.config
    assert (cfg.vocab_size, cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.n_inner) == (54, 2, 64, 1, 256)
    assert (cfg.start_token_id, cfg.delimiter_token_id, cfg.extract_token_id, cfg.pad_token_id) == (50, 51, 52, 53)
    new_rows = state["transformer.tokens_embed.weight"][50:]
    assert new_rows.abs().max() < 0.2 and new_rows.std() > 0  # N(0, 0.02), not the mean of the old rows
    assert model.lm_head.weight.data_ptr() == model.transformer.tokens_embed.weight.data_ptr()


def test_cli_saves_a_loadable_checkpoint(tmp_path, capsys):
    (tmp_path / "release").mkdir()
    write_release(tmp_path / "release", tiny_shapes(n_layer=1))
    release, out = tmp_path / "release", tmp_path / "out"
    converted = run_command(capsys, "convert", "--checkpoint_dir", release, "--output_dir", out, "--n_positions", "8")
    assert converted.code == 0, converted.stderr
    model = GPT1LMHeadModel.from_pretrained(out)  # what it wrote, as a user loads it
    assert model.config.n_positions == 8 and model.transformer.positions_embed.weight.shape == (8, 64)
    assert model(torch.tensor([[1, 2, 3]])).logits.shape == (1, 3, 54)


def test_full_release_layout_matches_the_model():
    shapes, config = read_layout(shared_data("gpt1_bpe"))
    assert len(shapes) == 146
    assert (config.vocab_size, config.n_positions, config.n_embd, config.n_layer, config.n_head) == (
        40478, 512, 768, 12, 12
    )  # fmt: skip
    with torch.device("meta"):
        model = GPT1LMHeadModel(config)
    state = model.state_dict()
    names = parameter_names(config.n_layer)
    assert set(names) | {"lm_head.weight"} == set(state)
    for name, shape in zip(names, shapes):
        stored = tuple(shape[1:] if len(shape) == 3 else shape)
        assert tuple(state[name].shape) == (stored[::-1] if name.endswith(PROJECTION_WEIGHTS) else stored), name


def test_missing_shard_is_named(tmp_path):
    write_release(tmp_path, tiny_shapes(n_layer=1))
    (tmp_path / "params_7.npy").unlink()
    with pytest.raises(ConversionError, match="params_7.npy is missing"):
        convert_openai_checkpoint(tmp_path)


def test_truncated_shard_is_detected(tmp_path):
    write_release(tmp_path, tiny_shapes(n_layer=1))
    np.save(tmp_path / "params_3.npy", np.zeros(5, dtype=np.float32))
    with pytest.raises(ConversionError, match="truncated"):
        convert_openai_checkpoint(tmp_path)


def test_wrong_shape_shard_is_detected(tmp_path):
    write_release(tmp_path, tiny_shapes(n_layer=1))
    np.save(tmp_path / "params_0.npy", np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(ConversionError, match="flat"):
        convert_openai_checkpoint(tmp_path)


def test_pickled_shard_is_refused(tmp_path):
    write_release(tmp_path, tiny_shapes(n_layer=1))
    np.save(tmp_path / "params_2.npy", np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ConversionError, match="not a plain numpy array"):
        convert_openai_checkpoint(tmp_path)


def test_bad_layout_is_rejected(tmp_path):
    (tmp_path / "params_shapes.json").write_text(json.dumps([[16, 64], [50, 64], [64]]))
    with pytest.raises(ConversionError, match="146 for 12 blocks"):
        convert_openai_checkpoint(tmp_path)
    with pytest.raises(ConversionError, match="not found"):
        convert_openai_checkpoint(tmp_path / "nowhere")


def test_an_inconsistent_params_shapes_json_names_the_array_and_the_shape(tmp_path):
    from hf_gpt1.tools.convert import ConversionError, convert_openai_checkpoint
    from tests.test_bad_input import _release

    folder = _release(tmp_path)
    shapes = json.loads((folder / "params_shapes.json").read_text())
    shapes[4] = [1, 8, 9]  # attn.c_proj of block 0
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    with pytest.raises(ConversionError, match=r"shape \[1, 8, 9\] of array 4 \(transformer.h.0.attn.c_proj.weight\) "
                       r"does not fit \[1, 8, 8\]"):  # fmt: skip
        convert_openai_checkpoint(folder)
    shapes[4], shapes[0] = [1, 8, 8], [4]
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    with pytest.raises(ConversionError, match=r"arrays 0 and 1 .* must be 2-D, got \[4\]"):
        convert_openai_checkpoint(folder)
