# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Convert the original OpenAI GPT-1 release (`params_shapes.json` + `params_0.npy` … `params_9.npy`) to hf_gpt1.

The release (openai/finetune-transformer-lm, `model/`) stores 146 float32 arrays, concatenated flat and split into
10 shards: positions `(512, 768)`, tokens `(40478, 768)`, then per block, in this order: `c_attn` w `(1, 768, 2304)`
and b, attention `c_proj` w and b, `ln_1` g and b, `c_fc` w and b, MLP `c_proj` w and b, `ln_2` g and b. The
original code rebuilds the arrays with `np.split(np.concatenate(shards), np.cumsum(sizes))`; so does this module. The
projection weights are stored `(in, out)`; the model's blocks take them into `nn.Linear`'s layout as they load.

Checkpoints saved by transformers' `OpenAIGPT*` classes need no conversion: `GPT1LMHeadModel.from_pretrained`
reads them directly (and converts their projections the same way).

Usage:
    hf-gpt1 convert --checkpoint_dir finetune-transformer-lm/model --output_dir gpt1-original \
        [--encoder_path model/encoder_bpe_40000.json --bpe_path model/vocab_40000.bpe]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..configuration_gpt1 import GPT1Config
from ..data.strict_files import StrictJSONError, read_json
from ..formats import SPECIAL_TOKEN_FIELDS, SPECIAL_TOKENS
from ..modeling_gpt1 import GPT1LMHeadModel

NUM_SHARDS = 10
# Per-block arrays in release order, with the hf_gpt1 parameter each one becomes.
BLOCK_LAYOUT = (
    "attn.c_attn.weight",
    "attn.c_attn.bias",
    "attn.c_proj.weight",
    "attn.c_proj.bias",
    "ln_1.weight",
    "ln_1.bias",
    "mlp.c_fc.weight",
    "mlp.c_fc.bias",
    "mlp.c_proj.weight",
    "mlp.c_proj.bias",
    "ln_2.weight",
    "ln_2.bias",
)


class ConversionError(ValueError):
    """The original checkpoint is incomplete or does not have the GPT-1 layout."""


def parameter_names(n_layer: int) -> list[str]:
    """hf_gpt1 parameter names of the release's arrays, in release order."""
    names = ["transformer.positions_embed.weight", "transformer.tokens_embed.weight"]
    for i in range(n_layer):
        names += [f"transformer.h.{i}.{name}" for name in BLOCK_LAYOUT]
    return names


def read_layout(checkpoint_dir: str | Path) -> tuple[list[list[int]], GPT1Config]:
    """Reads `params_shapes.json` and infers the model config from it."""
    shapes_path = Path(checkpoint_dir) / "params_shapes.json"
    if not shapes_path.is_file():
        raise ConversionError(f"{shapes_path} not found: point --checkpoint_dir at the release's model/ folder.")
    try:
        shapes = read_json(shapes_path)  # the strict reader: a byte-order mark is read
    except StrictJSONError as err:
        raise ConversionError(
            f"{shapes_path} is not valid JSON ({err.reason}); copy it again from the release."
        ) from None
    if not isinstance(shapes, list) or not all(isinstance(s, list) for s in shapes):
        raise ConversionError(f"{shapes_path} holds no list of array shapes; copy it again from the release.")
    if len(shapes) < 2 + len(BLOCK_LAYOUT) or (len(shapes) - 2) % len(BLOCK_LAYOUT):
        raise ConversionError(
            f"{shapes_path} lists {len(shapes)} arrays; GPT-1 has 2 + {len(BLOCK_LAYOUT)} per block "
            "(146 for 12 blocks)."
        )
    bad = next((k for k, shape in enumerate(shapes) if not _is_shape(shape)), None)
    if bad is not None:
        raise ConversionError(
            f"{shapes_path}: array {bad} has shape {shapes[bad]}, not a list of positive sizes; copy the file again "
            "from the release."
        )
    if len(shapes[0]) != 2 or len(shapes[1]) != 2:
        raise ConversionError(
            f"{shapes_path}: arrays 0 and 1 (positions and tokens) must be 2-D, got {shapes[0]} and {shapes[1]}; copy "
            "the file again from the release."
        )
    n_positions, n_embd = shapes[0]
    vocab_size = shapes[1][0]
    n_layer = (len(shapes) - 2) // len(BLOCK_LAYOUT)
    n_inner = shapes[2 + 6][-1]
    _check_shapes(shapes, shapes_path, n_embd, n_inner)
    # The release does not record the head count; every GPT-1 checkpoint uses 64-wide heads.
    n_head = max(1, n_embd // 64)
    config = GPT1Config(
        vocab_size=vocab_size, n_positions=n_positions, n_embd=n_embd, n_layer=n_layer, n_head=n_head, n_inner=n_inner
    )
    return shapes, config


def _is_shape(shape: list) -> bool:
    return bool(shape) and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)


def _expected_shapes(n_embd: int, n_inner: int) -> list[list[int]]:
    """The release's shapes of one block's arrays (BLOCK_LAYOUT order), its matrices stored (1, in, out)."""
    e, i = n_embd, n_inner
    return [[1, e, 3 * e], [3 * e], [1, e, e], [e], [e], [e], [1, e, i], [i], [1, i, e], [e], [e], [e]]


def _check_shapes(shapes: list[list[int]], path: Path, n_embd: int, n_inner: int) -> None:
    """Every array must fit the widths that arrays 0 (positions × n_embd) and 8 (the first MLP, n_inner) set."""
    expected = [[shapes[0][0], n_embd], [shapes[1][0], n_embd]]
    expected += _expected_shapes(n_embd, n_inner) * ((len(shapes) - 2) // len(BLOCK_LAYOUT))
    names = parameter_names((len(shapes) - 2) // len(BLOCK_LAYOUT))
    for k, (shape, want) in enumerate(zip(shapes, expected)):
        if list(shape) != want:
            raise ConversionError(
                f"{path}: shape {shape} of array {k} ({names[k]}) does not fit {want}, what n_embd {n_embd} (array 0) "
                f"and n_inner {n_inner} (array 8) require; the file is inconsistent: copy it again from the release."
            )


def load_arrays(checkpoint_dir: str | Path, shapes: list[list[int]]) -> list[np.ndarray]:
    """Loads the shards without pickle and splits them into the arrays of `shapes`, as the original code does."""
    checkpoint_dir = Path(checkpoint_dir)
    shards = []
    for n in range(NUM_SHARDS):
        path = checkpoint_dir / f"params_{n}.npy"
        if not path.is_file():
            raise ConversionError(f"Shard {path} is missing: the release has params_0.npy … params_9.npy.")
        try:
            shard = np.load(path, allow_pickle=False)  # never execute code from a downloaded file
        except ValueError as err:
            raise ConversionError(f"{path} is not a plain numpy array file ({err}).") from err
        if shard.ndim != 1:
            raise ConversionError(f"{path} holds an array of shape {shard.shape}; release shards are flat (1-D).")
        shards.append(shard.astype(np.float32, copy=False))
    flat = np.concatenate(shards)
    sizes = [int(np.prod(shape)) for shape in shapes]
    if flat.size != sum(sizes):
        raise ConversionError(
            f"The shards hold {flat.size} values but params_shapes.json needs {sum(sizes)}: a shard is truncated or "
            "from another checkpoint; download the release again."
        )
    arrays = np.split(flat, np.cumsum(sizes))[:-1]
    return [array.reshape(shape) for array, shape in zip(arrays, shapes)]


def convert_openai_checkpoint(
    checkpoint_dir: str | Path, n_positions: int | None = None, add_special_tokens: bool = True
) -> GPT1LMHeadModel:
    """Builds a `GPT1LMHeadModel` from the original release.

    Args:
        checkpoint_dir: folder with `params_shapes.json` and `params_{0..9}.npy`.
        n_positions: keep only the first `n_positions` position embeddings (the original code's `n_ctx`).
        add_special_tokens: append `_start_`, `_delimiter_`, `_classify_` and `<pad>` rows after the BPE vocabulary,
            drawn from N(0, 0.02) as in the original code, and record their ids in the config.
    """
    shapes, config = read_layout(checkpoint_dir)
    arrays = load_arrays(checkpoint_dir, shapes)
    state_dict = {
        name: torch.from_numpy(array.reshape(array.shape[1:]) if array.ndim == 3 else array)
        for name, array in zip(parameter_names(config.n_layer), arrays)
    }
    if n_positions is not None:
        if not 0 < n_positions <= config.n_positions:
            raise ConversionError(f"n_positions must be in [1, {config.n_positions}], got {n_positions}.")
        positions = state_dict["transformer.positions_embed.weight"]
        state_dict["transformer.positions_embed.weight"] = positions[:n_positions]
        config.n_positions = n_positions
    if add_special_tokens:
        base = config.vocab_size
        new_rows = torch.randn(len(SPECIAL_TOKENS), config.n_embd) * config.initializer_range
        tokens = state_dict["transformer.tokens_embed.weight"]
        state_dict["transformer.tokens_embed.weight"] = torch.cat([tokens, new_rows])
        config.vocab_size = base + len(SPECIAL_TOKENS)
        for token_id, field in enumerate(SPECIAL_TOKEN_FIELDS, start=base):  # the original's order, then <pad>
            setattr(config, field, token_id)
    model = GPT1LMHeadModel(config)
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    # lm_head.weight is tied to the token embedding, so it is the only key the release does not provide.
    if set(missing) != {"lm_head.weight"} or unexpected:
        raise ConversionError(f"Layout mismatch: missing {sorted(missing)}, unexpected {sorted(unexpected)}.")
    model.tie_weights()
    return model.eval()


if __name__ == "__main__":  # `python -m hf_gpt1.tools.convert` ran the command until 0.6.0: a library runs nothing
    raise SystemExit(
        "error: python -m hf_gpt1.tools.convert was removed in hf_gpt1 0.6.0: run hf-gpt1 convert (or "
        "python -m hf_gpt1.commands.convert)."
    )
