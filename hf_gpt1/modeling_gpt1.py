# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT-1 (Radford et al. 2018) as a transformers model: a post-LayerNorm decoder and its three heads.

Top-down: attention → MLP → block → pre-trained base → decoder → LM head → fine-tuning heads. Parameter names and
(`transformer.tokens_embed`, `transformer.h.{i}.attn.c_attn`) are the ones of transformers' `openai-gpt`. The blocks'
projections are `nn.Linear`, as in every current transformers model (quantisers and adapters target them); checkpoints
that store them as transformers' legacy `Conv1D` (`openai-community/openai-gpt`, hf_gpt1 0.2) are converted as
they load (`linear_layout`).
Faster kernels for the CPU live in `kernels.py`, GPT-1's input formats and special tokens in `formats.py`.

`forward` never synchronises the host with an accelerator: input checks are queued on the device with
`torch._assert_async` (on the CPU they raise at once, as a `ValueError` naming the fix).
"""

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers.activations import ACT2FN
from transformers.cache_utils import Cache, DynamicCache
from transformers.conversion_mapping import register_checkpoint_conversion_mapping
from transformers.core_model_loading import ConversionOps, WeightConverter
from transformers.generation import GenerationMixin, LogitsProcessorList, StoppingCriteriaList
from transformers.masking_utils import create_causal_mask
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from transformers.modeling_utils import AttentionInterface, PreTrainedModel, slice_logits_to_keep
from transformers.processing_utils import Unpack
from transformers.utils import ModelOutput, TransformersKwargs, can_return_tuple, logging
from transformers.utils.generic import merge_with_config_defaults
from transformers.utils.output_capturing import OutputRecorder, capture_outputs

from .configuration_gpt1 import GPT1Config  # importing it checks the transformers version (remote code)
from .decoding import device_loop_refusal, sample_on_device
from .formats import IGNORE_INDEX, INPUT_FORMATS
from .kernels import GPT1Dropout, drop_where, dropout_mask, linear_cross_entropy, sdpa_attention_forward

logger = logging.get_logger(__name__)

# GPT-1's own attention dispatch: transformers' implementations, with "sdpa" replaced by the one that stays in the
# inputs' dtype for CPU training with attention dropout (kernels.sdpa_attention_forward).
ALL_ATTENTION_FUNCTIONS = AttentionInterface()
ALL_ATTENTION_FUNCTIONS["sdpa"] = sdpa_attention_forward


# Devices where `generate()` decodes from a static cache with the compiled decode step by default (CUDA graphs), and
# the cache's length granularity: a new bucket compiles once.
STATIC_DECODING_DEVICES = {"cuda"}
STATIC_CACHE_BUCKET = 128

# transformers 5.24 renamed the KV cache `past_key_values` → `cache` (forward argument, output field, masking
# functions) and deprecated the old name. The model speaks the installed version's name and accepts both.
CACHE_NAME = "cache" if "cache" in BaseModelOutputWithPast.__dataclass_fields__ else "past_key_values"


def _one_cache(cache: Cache | None, past_key_values: Cache | None) -> Cache | None:
    if cache is not None and past_key_values is not None:
        raise ValueError(
            "Pass the key/value cache once: as `cache` (or, before transformers 5.24, `past_key_values`)."
        )
    if past_key_values is not None and CACHE_NAME == "cache":
        warnings.warn("`past_key_values` is deprecated since transformers 5.24: pass `cache`.", FutureWarning, 2)
    return cache if cache is not None else past_key_values


def _tracing() -> bool:
    """Under `torch.compile` or `torch.export` (strict or not): input checks that branch on sizes or values would
    specialise the graph to the example's shapes, so they are left to eager calls."""
    return torch.compiler.is_compiling() or torch.compiler.is_exporting()


def _require(condition: torch.Tensor, message: str) -> None:
    """Raises `ValueError(message)` where `condition` (a bool tensor) is False, without a device→host sync.

    On an accelerator the check is queued with the computation (a failure is a device-side assert); on the CPU it
    raises at once. Skipped while tracing (`_tracing`).
    """
    if _tracing():
        return
    try:
        torch._assert_async(condition.all(), message)
    except RuntimeError:
        raise ValueError(message) from None


# The outputs `capture_outputs` records from inside the blocks.
_RECORDED = ("hidden_states", "attentions")


def leading_padding(attention_mask: torch.Tensor) -> torch.Tensor:
    """How many padding positions precede each row's first real token, `(..., 1)`, computed on the device (no sync):
    the shift by which [`rotate`] moves that padding after the real tokens. An all-padding row gives 0."""
    # argmax returns the first maximum; argmax, not a cumulative product, so that both ONNX exporters can take it
    return (attention_mask != 0).int().argmax(-1, keepdim=True)


def rotate(tensor: torch.Tensor, leading: torch.Tensor, inverse: bool = False) -> torch.Tensor:
    """`tensor` (`(..., T)` or `(..., T, C)`) with each row rotated left by its `leading` positions
    ([`leading_padding`]: left padding goes last), or back (`inverse`); a rotation by 0 leaves a right-padded or
    unpadded row unchanged."""
    channels = tensor.ndim > leading.ndim
    length = tensor.shape[-2] if channels else tensor.shape[-1]
    index = torch.arange(length, device=tensor.device) + (-leading if inverse else leading)  # (..., T)
    # wrapped around without a modulo, which the ONNX exporters take
    index = torch.where(index >= length, index - length, torch.where(index < 0, index + length, index))
    if channels:
        index = index[..., None].expand(*index.shape, tensor.shape[-1])
    return tensor.gather(leading.ndim - 1, index)


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    **kwargs,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference attention. `attention_mask` is the 4D causal+padding mask of `create_causal_mask`: additive (an eager
    model's), boolean (an SDPA model's, when this call computes attention maps for it), or None where SDPA would rely
    on causality alone."""
    attn_weights = torch.matmul(query, key.transpose(-1, -2)) * scaling  # (B, nh, T, S)
    if attention_mask is None:
        length, total = query.shape[-2], key.shape[-2]  # the queries are the last `length` of `total` positions
        causal = torch.ones(length, total, dtype=torch.bool, device=query.device).tril(total - length)
        attn_weights = attn_weights.masked_fill(~causal, torch.finfo(attn_weights.dtype).min)
    elif attention_mask.dtype == torch.bool:
        attn_weights = attn_weights.masked_fill(~attention_mask, torch.finfo(attn_weights.dtype).min)
    else:
        attn_weights = attn_weights + attention_mask
    # softmax in fp32 so bf16/fp16 runs normalise the same way as fp32 ones
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = F.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value).transpose(1, 2).contiguous()  # (B, T, nh, hs)
    return attn_output, attn_weights


class GPT1Attention(nn.Module):
    """Causal multi-head self-attention with one fused QKV projection."""

    def __init__(self, config: GPT1Config, layer_idx: int):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.n_embd = config.n_embd
        self.head_dim = config.n_embd // config.n_head
        self.scaling = self.head_dim**-0.5
        self.is_causal = True
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.attn_dropout = config.attn_pdrop
        self.resid_dropout = GPT1Dropout(config.resid_pdrop)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        **kwargs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        shape = (*hidden_states.shape[:-1], -1, self.head_dim)  # (B, T, nh, hs)
        query, key, value = self.c_attn(hidden_states).split(self.n_embd, dim=-1)
        query = query.view(shape).transpose(1, 2)  # (B, nh, T, hs)
        key = key.view(shape).transpose(1, 2)
        value = value.view(shape).transpose(1, 2)
        if past_key_values is not None:
            key, value = past_key_values.update(key, value, self.layer_idx)  # (B, nh, S, hs), S = past + T

        # Attention maps asked for: this call computes them (the fused kernels never materialise them).
        implementation = "eager" if kwargs.get("output_attentions") else self.config._attn_implementation
        attention_interface: Callable = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        if implementation == "sdpa" and getattr(past_key_values, "is_compileable", False):
            # a static cache: the decode step may take the split-KV kernel (kernels.SPLIT_KV_DECODE_DEVICES)
            kwargs = {**kwargs, "static_cache": True}
        attn_output, attn_weights = attention_interface(
            self,
            query,
            key,
            value,
            attention_mask,
            dropout=self.attn_dropout if self.training else 0.0,
            scaling=self.scaling,
            **kwargs,
        )
        attn_output = attn_output.reshape(*attn_output.shape[:-2], -1)  # (B, T, C)
        return self.resid_dropout(self.c_proj(attn_output)), attn_weights


# "gelu_new" (the tanh GELU) as one fused kernel: the Python formula is ~8 elementwise passes over the (tokens × 3072)
# activation forward and more backward; the result is the same to float rounding.
_FUSED_ACTIVATIONS = {"gelu_new": "gelu_pytorch_tanh"}


class GPT1MLP(nn.Module):
    def __init__(self, config: GPT1Config):
        super().__init__()
        inner = config.n_inner if config.n_inner is not None else 4 * config.n_embd
        self.c_fc = nn.Linear(config.n_embd, inner)
        self.c_proj = nn.Linear(inner, config.n_embd)
        self.act = ACT2FN[_FUSED_ACTIVATIONS.get(config.activation_function, config.activation_function)]
        self.dropout = GPT1Dropout(config.resid_pdrop)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


# The blocks' projection weights, by their names inside a block. transformers' openai-gpt and hf_gpt1 0.2 store them as
# `Conv1D` weights, `(in, out)`; `nn.Linear` stores `(out, in)`. Checkpoint files say which in their config
# (`projection_layout`); a bare state dict says it in a block's QKV weight, `(C, 3C)` against `(3C, C)` (the other
# three may be square).
PROJECTION_WEIGHTS = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def stored_shape(name: str, shape: tuple[int, ...], config: GPT1Config) -> tuple[int, ...]:
    """The shape the model's tensor `name` (of shape `shape`) has in checkpoint files described by `config`."""
    transposed = config.projection_layout == "conv1d" and name.endswith(PROJECTION_WEIGHTS)
    return tuple(shape[::-1]) if transposed else tuple(shape)


def _load_linear_layout(module, state_dict, prefix, *args) -> None:
    """`load_state_dict` pre-hook of a block: a block whose QKV weight is `(C, 3C)` (e.g. an OpenAIGPT model's state
    dict) has its four projection weights transposed to `nn.Linear`'s layout."""
    qkv = state_dict.get(prefix + "attn.c_attn.weight")
    if qkv is None or qkv.ndim != 2 or qkv.shape[1] != 3 * qkv.shape[0]:
        return
    for name in PROJECTION_WEIGHTS:
        if prefix + name in state_dict:
            state_dict[prefix + name] = state_dict[prefix + name].t().contiguous()


class ConvertProjection(ConversionOps):
    """`from_pretrained`'s conversion of one projection weight: transposed when the checkpoint's config says
    `projection_layout="conv1d"`. Saving writes the model's own layout (the reverse is the identity), and the saved
    config says `"linear"`."""

    def __init__(self, transpose: bool = True):
        self.transpose = transpose

    def convert(self, input_dict, source_patterns, target_patterns, config=None, **kwargs):
        (tensor,) = next(iter(input_dict.values()))
        if self.transpose and config.projection_layout == "conv1d":
            tensor = tensor.t().contiguous()
        return {target_patterns[0]: tensor}

    @property
    def reverse_op(self) -> ConversionOps:
        return ConvertProjection(transpose=not self.transpose)


register_checkpoint_conversion_mapping(
    "gpt1",
    [WeightConverter(name, name, operations=[ConvertProjection()]) for name in PROJECTION_WEIGHTS],
    overwrite=True,  # the saved copy of this file (remote code) registers again in the same process
)


class GPT1Block(GradientCheckpointingLayer):
    """Post-LayerNorm block of the original code: `n = LN(x + attn(x)); h = LN(n + mlp(n))`."""

    def __init__(self, config: GPT1Config, layer_idx: int):
        super().__init__()
        self.register_load_state_dict_pre_hook(_load_linear_layout)
        self.attn = GPT1Attention(config, layer_idx)
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = GPT1MLP(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        **kwargs,
    ) -> torch.Tensor:
        attn_output, _ = self.attn(hidden_states, attention_mask, past_key_values, **kwargs)
        hidden_states = self.ln_1(hidden_states + attn_output)
        return self.ln_2(hidden_states + self.mlp(hidden_states))


class GPT1PreTrainedModel(PreTrainedModel):
    config: GPT1Config
    config_class = GPT1Config
    base_model_prefix = "transformer"
    supports_gradient_checkpointing = True
    _no_split_modules = ["GPT1Block"]
    _skip_keys_device_placement = ["cache", "past_key_values"]
    _supports_flash_attn = True
    _supports_sdpa = True
    _supports_flex_attn = True
    _supports_attention_backend = True
    _can_compile_fullgraph = True
    _can_record_outputs = {
        "hidden_states": GPT1Block,
        "attentions": OutputRecorder(GPT1Attention, index=1),
    }
    # openai-gpt checkpoints store each block's causal mask as a buffer; we build masks on the fly.
    _keys_to_ignore_on_load_unexpected = [r"attn\.bias$", r"multiple_choice_head\..*"]

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """`PreTrainedModel.from_pretrained`; the loaded weights are in `nn.Linear` layout whatever the files' layout,
        and the model's config says so."""
        loaded = super().from_pretrained(*args, **kwargs)
        model = loaded[0] if isinstance(loaded, tuple) else loaded  # (model, loading_info) on output_loading_info
        model.config.projection_layout = "linear"
        return loaded

    def save_pretrained(self, save_directory, *args, **kwargs) -> None:
        """`PreTrainedModel.save_pretrained`, with the complete `auto_map` and the weights' layout in the config."""
        self.config.auto_map = dict(AUTO_MAP)
        self.config.projection_layout = "linear"
        super().save_pretrained(save_directory, *args, **kwargs)

    # GPT-1's init (N(0, initializer_range) for every matrix and embedding, zero biases, LayerNorm gain 1) is
    # PreTrainedModel._init_weights' own.


@dataclass
class GPT1ModelOutput(BaseModelOutputWithPast):
    r"""
    Output of [`GPT1Model`]: `BaseModelOutputWithPast` plus the embedding tables the forward pass used.

    Args:
        embedding_tables (`tuple[torch.FloatTensor, torch.FloatTensor]`, *optional*):
            With `config.original_embedding_table`: the token and position tables as this forward pass used them
            (after the table dropout, in training). The language-model loss reads them as its output matrix, as the
            original's `lm_logits = h · weᵀ` does.
    """

    embedding_tables: tuple[torch.FloatTensor, torch.FloatTensor] | None = None


class GPT1Model(GPT1PreTrainedModel):
    """The bare GPT-1 decoder: token + learned position embeddings, then post-LN blocks, no final LayerNorm."""

    def __init__(self, config: GPT1Config):
        super().__init__(config)
        self.tokens_embed = nn.Embedding(config.vocab_size, config.n_embd)
        self.positions_embed = nn.Embedding(config.n_positions, config.n_embd)
        self.drop = GPT1Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT1Block(config, layer_idx=i) for i in range(config.n_layer)])
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.tokens_embed

    def set_input_embeddings(self, new_embeddings: nn.Embedding) -> None:
        self.tokens_embed = new_embeddings

    @merge_with_config_defaults
    @capture_outputs
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        use_cache: bool | None = None,
        cache: Cache | None = None,
        **kwargs: Unpack[TransformersKwargs],
    ) -> GPT1ModelOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, seq_len)` or `(batch_size, n, seq_len)`):
                Token ids. Extra leading dimensions (pair orderings, answer choices) are folded into the batch and
                restored on `last_hidden_state`.
            attention_mask (`torch.Tensor` of the same shape as `input_ids`, *optional*):
                1 for real tokens, 0 for padding.
            cache (`Cache`, *optional*):
                Keys and values of earlier positions; only the new tokens are then passed as `input_ids`.
                `past_key_values` is its name before transformers 5.24 (accepted, and deprecated since).
            position_ids (`torch.LongTensor`, *optional*):
                Positions of the tokens; defaults to `past_length + arange(seq_len)`. `generate()` derives them from
                the attention mask so left-padded prompts start at position 0.
        """
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("Pass exactly one of `input_ids` or `inputs_embeds`.")
        input_shape = input_ids.shape if input_ids is not None else inputs_embeds.shape[:-1]
        seq_len = input_shape[-1]
        if not _tracing() and input_shape.numel() == 0:
            raise ValueError(
                f"Got an empty batch of shape {tuple(input_shape)}: give at least one token per sequence."
            )
        if attention_mask is not None and attention_mask.ndim != 4:
            attention_mask = attention_mask.reshape(-1, attention_mask.shape[-1])

        past_key_values = _one_cache(cache, past_key_values)
        # Training never reuses keys and values: a cache there would only copy every layer's K/V and keep them alive.
        use_cache = use_cache and not self.training
        given_cache = past_key_values  # a cache created here is empty: the mask needs no past (and packing is seen)
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        # A static cache counts its length on the device: no check here (generate() checked the length it asked for).
        # Positions given by the caller may restart inside a row (packed, padding-free batches): those are checked,
        # not the row's length.
        if position_ids is not None:
            _require(
                (position_ids >= 0) & (position_ids < self.config.n_positions),
                f"position_ids must be in [0, {self.config.n_positions}), the learned positions: pack sequences of at "
                f"most {self.config.n_positions} tokens, each with positions restarting at 0.",
            )
        elif isinstance(past_length, int) and past_length + seq_len > self.config.n_positions:
            advice = (
                f"ask for at most {self.config.n_positions - past_length} new tokens or shorten the prompt"
                if past_length
                else "truncate the input (the collators' and pipelines' max_length do)"
            )
            raise ValueError(
                f"Sequence length {past_length + seq_len} exceeds n_positions={self.config.n_positions}, the number "
                f"of learned position embeddings: {advice}."
            )
        mask_position_ids = position_ids  # only positions given by the caller can describe packed sequences
        if position_ids is None:  # (arange + offset: the offset may be a device tensor, read without a sync)
            position_ids = (torch.arange(seq_len, device=self.positions_embed.weight.device) + past_length)[None]
        # Without a cache, padding is moved after the real tokens, which keep their positions: causal attention then
        # keeps every real token from seeing padding, with no mask to build or read (the fast kernels, no host sync).
        rotation = None
        recording = any(kwargs.get(f"output_{k}", getattr(self.config, f"output_{k}", False)) for k in _RECORDED)
        if attention_mask is not None and attention_mask.ndim == 2 and mask_position_ids is None and not use_cache:
            if given_cache is None and not recording:  # (recorded states would be in the moved order)
                rotation = leading_padding(attention_mask)
                position_ids = rotate(position_ids.expand(attention_mask.shape), rotation)
                input_ids = None if input_ids is None else rotate(input_ids.reshape(-1, seq_len), rotation)
                if inputs_embeds is not None:
                    inputs_embeds = rotate(inputs_embeds.reshape(-1, *inputs_embeds.shape[-2:]), rotation)
                attention_mask = None

        # Rows come from the embedding modules themselves, so hooks on them (NEFTune, activation patching) see them.
        if input_ids is not None:
            input_ids = input_ids.reshape(-1, seq_len)  # (B, T)
            _require(
                (input_ids >= 0) & (input_ids < self.config.vocab_size),
                f"input_ids hold ids outside the embedding table [0, {self.config.vocab_size}): use the tokenizer "
                "this model was saved with, or add its special tokens with hf_gpt1.add_gpt1_special_tokens(tokenizer, "
                "model).",
            )
            inputs_embeds = self.tokens_embed(input_ids)
        else:
            inputs_embeds = inputs_embeds.reshape(-1, seq_len, inputs_embeds.shape[-1])
        positions_embeds = self.positions_embed(position_ids)  # (1 or B, T, C)
        tokens_table, positions_table = self.tokens_embed.weight, self.positions_embed.weight
        p = self.config.embd_pdrop
        if self.config.original_embedding_table and self.training and p > 0:
            # The original's one table `we`: dropout drops elements of the whole table once per forward pass, so every
            # occurrence of a token in the batch shares one mask, and token and position rows drop independently. The
            # rows the modules gave drop with the table's mask, so they are the dropped table's rows (L1 reads it).
            tokens_dropped = dropout_mask(tokens_table.shape, p, tokens_table.device)
            positions_dropped = dropout_mask(positions_table.shape, p, positions_table.device)
            tokens_table = drop_where(tokens_table, tokens_dropped, p)
            positions_table = drop_where(positions_table, positions_dropped, p)
            if input_ids is not None:
                inputs_embeds = drop_where(inputs_embeds, tokens_dropped[input_ids], p)
            positions_embeds = drop_where(positions_embeds, positions_dropped[position_ids], p)
        hidden_states = inputs_embeds + positions_embeds  # (B, T, C)
        if not self.config.original_embedding_table:
            hidden_states = self.drop(hidden_states)

        causal_mask = None  # plain causal attention: SDPA's `is_causal`, which every fused kernel serves
        plain_causal = attention_mask is None and mask_position_ids is None and given_cache is None
        if not (plain_causal and self.config._attn_implementation in ("sdpa", "eager")):
            causal_mask = create_causal_mask(
                config=self.config,
                inputs_embeds=inputs_embeds,
                attention_mask=attention_mask,
                position_ids=mask_position_ids,
                **{CACHE_NAME: given_cache},
            )
        for block in self.h:
            hidden_states = block(hidden_states, causal_mask, past_key_values, position_ids=position_ids, **kwargs)
        if rotation is not None:
            hidden_states = rotate(hidden_states, rotation, inverse=True)  # back to the input's order

        return GPT1ModelOutput(
            last_hidden_state=hidden_states.view(*input_shape, -1),
            **{CACHE_NAME: past_key_values if use_cache else None},
            embedding_tables=(tokens_table, positions_table) if self.config.original_embedding_table else None,
        )


class _GPT1WithLMHeadBase(GPT1PreTrainedModel):
    """Not a head: the base of every class that owns the decoder and the tied LM head, and so computes L1."""

    _tied_weights_keys = {"lm_head.weight": "transformer.tokens_embed.weight"}

    def __init__(self, config: GPT1Config):
        super().__init__(config)
        # A tied head is stored once, as the token embedding: Trainer, resuming or loading the best checkpoint, then
        # re-ties it instead of reporting it missing. An untied head is a weight of its own and is saved.
        self._keys_to_ignore_on_save = ["lm_head.weight"] if config.tie_word_embeddings else None
        self.transformer = GPT1Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head

    def set_output_embeddings(self, new_embeddings: nn.Linear) -> None:
        self.lm_head = new_embeddings

    def language_model_loss(
        self,
        outputs: GPT1ModelOutput,
        labels: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        reduction: str = "token",
        num_items_in_batch: torch.Tensor | int | None = None,
        shift_labels: torch.LongTensor | None = None,
    ) -> torch.Tensor:
        """L1: every position predicts the next token's label.

        The softmax runs over the token rows of the tied head; in training with `config.original_embedding_table`,
        over every row of the original's single (dropped) table (tokens, special tokens, positions), the objective the
        original optimises. In eval mode it is the language model's own distribution over the tokens, so held-out
        perplexities compare across the two layouts.

        Args:
            outputs (`GPT1ModelOutput`): The decoder's output.
            labels (`torch.LongTensor`): Unshifted labels (`-100` ignored); targets are `labels[..., 1:]`.
            attention_mask (`torch.Tensor`, *optional*): A target also needs a real token before it, so the first
                token after left padding is never predicted from padding.
            reduction (`str`): `"token"` averages over all targets (or divides by `num_items_in_batch`); `"sequence"`
                averages each sequence's targets, then the sequences (the original's auxiliary L1).
            num_items_in_batch (`torch.Tensor` or `int`, *optional*): Trainer's target count over accumulated
                micro-batches.
            shift_labels (`torch.LongTensor`, *optional*): Targets already aligned with the positions
                (transformers' `ForCausalLMLoss` convention: under sequence or context parallelism the labels are
                shifted before the sequence is sharded); `labels` are then not used.

        Returns:
            `torch.Tensor`: The scalar loss.
        """
        hidden = outputs.last_hidden_state
        seq_len = hidden.shape[-2]
        hidden = hidden.reshape(-1, seq_len, hidden.shape[-1])  # (N, T, C)
        if shift_labels is None:
            hidden, targets = hidden[:, :-1], labels.reshape(-1, seq_len)[:, 1:]  # position t predicts t+1: (N, T-1)
        else:
            targets = shift_labels.reshape(-1, seq_len)  # (N, T), aligned with the positions
        valid = targets != IGNORE_INDEX
        if attention_mask is not None:
            mask = attention_mask.reshape(-1, seq_len) != 0
            valid = valid & (mask[:, :-1] & mask[:, 1:] if shift_labels is None else mask)
        counts = valid.sum(-1, keepdim=True)  # (N, 1)
        if reduction == "token":
            total = counts.sum().clamp(min=1) if num_items_in_batch is None else num_items_in_batch
            token_weights = valid / total
        else:  # each target's weight: 1 / (its sequence's targets × the number of sequences with targets)
            token_weights = valid / (counts.clamp(min=1) * (counts > 0).sum().clamp(min=1))  # (N, T-1)
        tables = outputs.embedding_tables if self.training and outputs.embedding_tables else (self.lm_head.weight,)
        if hidden.device.type == "cpu" and not torch.compiler.is_compiling():
            # Only positions with a target reach the 40k-wide head (a boolean selection, free of syncs on the CPU).
            return linear_cross_entropy(hidden[valid], tables, targets[valid], token_weights[valid])
        # Static shapes elsewhere: every position is projected, ignored ones carry weight 0.
        return linear_cross_entropy(
            hidden.flatten(0, 1), tables, targets.clamp(min=0).flatten(), token_weights.flatten()
        )


class GPT1LMHeadModel(_GPT1WithLMHeadBase, GenerationMixin):
    """GPT-1 with its tied language-modelling head: the L1 pre-training objective and `generate()` with a KV cache."""

    def __init__(self, config: GPT1Config):
        super().__init__(config)
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        logits_to_keep: int | torch.Tensor = 0,
        skip_logits: bool | None = None,
        cache: Cache | None = None,
        **kwargs: Unpack[TransformersKwargs],
    ) -> CausalLMOutputWithPast:
        r"""
        Args:
            labels (`torch.LongTensor` of shape `(batch_size, seq_len)`, *optional*):
                Targets for L1, unshifted (`labels = input_ids` works; the model shifts them); `-100` is ignored.
                The loss is the mean over all target tokens, the pre-training objective.
            shift_labels (`torch.LongTensor` of shape `(batch_size, seq_len)`, *optional*, a keyword argument):
                Targets already aligned with the positions (position t predicts `shift_labels[t]`), as Accelerate and
                Trainer pass them under sequence or context parallelism; they then replace `labels`. (Not a named
                parameter, as in transformers' own heads: Trainer takes every forward parameter named like a label for
                a label column it must find in each batch.)
            logits_to_keep (`int` or `torch.Tensor`, defaults to 0):
                Compute logits for the last `logits_to_keep` positions only (0 = all), as `generate()` does.
            skip_logits (`bool`, *optional*):
                Return the loss without the `(batch, seq, vocab)` logits, which are then never built (the loss is fused
                with the LM head). Default: skip them in training mode when `labels` are given (eager or compiled
                alike), as transformers' Liger integration does; pass `False` to get them anyway.
        """
        shift_labels = kwargs.pop("shift_labels", None)
        outputs: GPT1ModelOutput = self.transformer(
            input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            cache=_one_cache(cache, past_key_values),
            **kwargs,
        )
        has_targets = labels is not None or shift_labels is not None
        if skip_logits is None:
            skip_logits = self.training and has_targets
        if skip_logits and not has_targets:
            raise ValueError("skip_logits=True returns only the loss: pass `labels`.")
        loss = logits = None
        if has_targets:  # transformers' convention: `-100` labels, not the attention mask, exclude targets
            loss = self.language_model_loss(
                outputs, labels, num_items_in_batch=kwargs.get("num_items_in_batch"), shift_labels=shift_labels
            )
        if not skip_logits:
            logits = self.lm_head(slice_logits_to_keep(outputs.last_hidden_state, logits_to_keep))
        return CausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            **{CACHE_NAME: getattr(outputs, CACHE_NAME)},
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )

    def generate(self, *args, **kwargs):
        """`GenerationMixin.generate`. On a CUDA GPU, when neither the call nor the generation config chooses a cache,
        decoding reads a static cache and replays the compiled decode step as CUDA graphs (with the generation
        config's `compile_config`). The cache's length is rounded up to a multiple of [`STATIC_CACHE_BUCKET`]
        positions, so each bucket (and batch size) compiles once; the first call of each says so. Pass
        `cache_implementation="dynamic"` to decode without it (or `disable_compile=True` to keep the static cache
        uncompiled).

        On that default path, greedy decoding and sampling run the device loop of `hf_gpt1/decoding.py`: one
        compiled step does the forward pass, the logits processing and the token choice, and the host reads the
        device once per `decoding.DECODE_TOKENS_PER_READ` tokens. Options it does not cover take transformers' own
        loop, with the same tokens: a streamer, `return_dict_in_generate` (scores, logits, attentions, hidden
        states), logits processors other than temperature / top-k / top-p / min-p (repetition penalty,
        `no_repeat_ngram_size`, `min_new_tokens`, `bad_words_ids`, a `logits_processor` argument...), stopping
        criteria other than the length and EOS ones (`stop_strings`, `max_time`, a `stopping_criteria` argument),
        `synced_gpus`, `prefill_chunk_size`, beam search and assisted decoding (not `_sample` at all), and a cache
        the call chooses (`cache_implementation="static"` included)."""
        static = self._static_decoding(args, kwargs)
        self._device_loop_call = static != {}  # the default static decoding: `_sample` may take the device loop
        try:
            return super().generate(*args, **{**kwargs, **static})
        finally:
            self._device_loop_call = False

    def _sample(
        self,
        input_ids: torch.LongTensor,
        logits_processor: LogitsProcessorList,
        stopping_criteria: StoppingCriteriaList,
        generation_config,
        synced_gpus: bool = False,
        streamer=None,
        **model_kwargs,
    ):
        """Greedy decoding and sampling: the device loop (`decoding.sample_on_device`) where
        `decoding.device_loop_refusal` finds no option it does not cover, else transformers' `_sample`."""
        options = (logits_processor, stopping_criteria, generation_config)
        if device_loop_refusal(self, *options, synced_gpus, streamer, **model_kwargs) is None:
            return sample_on_device(self, input_ids, *options, **model_kwargs)
        return super()._sample(input_ids, *options, synced_gpus, streamer, **model_kwargs)

    def _static_decoding(self, args: tuple, kwargs: dict) -> dict:
        """The arguments that turn on the static, compiled decoding of [`generate`] for this call (none where the
        call, the generation config or the device decides otherwise)."""
        config = kwargs.get("generation_config") or self.generation_config
        chosen = any(kwargs.get(k) is not None for k in ("cache_implementation", "cache", "past_key_values"))
        if self.device.type not in STATIC_DECODING_DEVICES or chosen or config.cache_implementation is not None:
            return {}
        prompt = args[0] if args else kwargs.get("inputs", kwargs.get("input_ids", kwargs.get("inputs_embeds")))
        length = self.config.n_positions
        new_tokens = kwargs.get("max_new_tokens", config.max_new_tokens)
        if prompt is not None and prompt.ndim >= 2 and new_tokens is not None:
            length = prompt.shape[1] + new_tokens  # (inputs_embeds: (B, T, C), ids: (B, T))
        bucket = min(-(-length // STATIC_CACHE_BUCKET) * STATIC_CACHE_BUCKET, self.config.n_positions)
        # transformers keeps the largest static cache a model has used: later, shorter calls reuse it
        bucket = max(bucket, getattr(self, "_previous_max_cache_length", 0))
        batch = prompt.shape[0] if prompt is not None and prompt.ndim >= 2 else None
        compiled = getattr(self, "_static_decoding_shapes", set())
        if (batch, bucket) not in compiled and not kwargs.get("disable_compile", config.disable_compile):
            self._static_decoding_shapes = compiled | {(batch, bucket)}
            logger.warning(
                f"generate(): decoding from a static cache of {bucket} positions for a batch of {batch} as a compiled "
                "CUDA graph; this compiles once for each cache bucket and batch size (cache_implementation="
                "'dynamic' decodes without it)."
            )
        return {"cache_implementation": "static", "max_cache_len": bucket}

    def _validate_generated_length(self, generation_config, input_ids_length, has_default_max_length):
        """Refuses, before the first step, a generation that would run past the learned positions."""
        super()._validate_generated_length(generation_config, input_ids_length, has_default_max_length)
        if generation_config.max_length > self.config.n_positions:
            raise ValueError(
                f"Generating up to {generation_config.max_length} tokens (prompt {input_ids_length} + new) exceeds "
                f"n_positions={self.config.n_positions}, the learned positions: ask for at most "
                f"{max(self.config.n_positions - input_ids_length, 0)} new tokens (max_new_tokens), or shorten the "
                "prompt."
            )


@dataclass
class GPT1ClassifierOutput(ModelOutput):
    r"""
    Output of the fine-tuning heads.

    Args:
        loss (`torch.FloatTensor` of shape `()`, *optional*, returned when `labels` is given):
            The fine-tuning objective L3 = L2 + λ·L1 (exactly L2 when λ = `config.lm_coef` = 0).
        clf_loss (`torch.FloatTensor` of shape `()`, *optional*):
            L2, the task loss (cross-entropy, or MSE for regression).
        lm_loss (`torch.FloatTensor` of shape `()`, *optional*):
            L1, the auxiliary language-model loss on the task inputs (absent when λ = 0).
        logits (`torch.FloatTensor` of shape `(batch_size, num_labels)` or `(batch_size, num_choices)`):
            Classification scores (before softmax), regression outputs, or one score per answer.
        hidden_states / attentions: as in every transformers model, when requested.
    """

    loss: torch.FloatTensor | None = None
    clf_loss: torch.FloatTensor | None = None
    lm_loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None


class _GPT1FineTuningBase(_GPT1WithLMHeadBase):
    """Not a head: what the classification and multiple-choice heads share — the decoder run on right-padded task
    inputs, the hidden state at the extract token, the classifier and L3."""

    # L3 is a mean of per-sequence means: Trainer must not pass `num_items_in_batch` (a token count) to rescale it.
    accepts_loss_kwargs = False

    def __init__(self, config: GPT1Config, num_outputs: int):
        super().__init__(config)
        self.clf_dropout = config.clf_pdrop
        self.score = nn.Linear(config.n_embd, num_outputs)

    @staticmethod
    def _right_aligned(attention_mask: torch.Tensor | None, *tensors: torch.Tensor | None) -> tuple:
        """Left-padded sequences (TRL and many decoder clients pad on the left) rotated so that their padding comes
        last: each then starts at position 0 and attends to no padding, exactly as unpadded, while the decoder keeps
        its unmasked causal path. Returns the mask and `tensors` (ids, positions, labels: `(..., T)` or None),
        rotated alike; right-padded sequences are unchanged (a rotation by 0, without a sync)."""
        if attention_mask is None:
            return (attention_mask, *tensors)
        leading = leading_padding(attention_mask)
        return tuple(None if t is None else rotate(t, leading) for t in (attention_mask, *tensors))

    def _decode_and_pool(
        self, input_ids: torch.LongTensor, position_ids: torch.LongTensor | None, **kwargs
    ) -> tuple[GPT1ModelOutput, torch.Tensor]:
        """Runs the decoder on `(..., T)` ids; returns its outputs and the hidden state at each sequence's first
        extract token, `(..., C)`.

        No attention mask reaches the decoder: task inputs are right-padded, so causal attention already keeps every
        real token from seeing the padding after it (as in the original, which had no mask), and an unmasked batch
        runs the fastest kernels. Hidden states at padding positions are therefore not meaningful.
        """
        extract_id = self.config.extract_token_id
        if extract_id is None:
            raise ValueError(
                "config.extract_token_id is not set: add the GPT-1 special tokens with "
                "hf_gpt1.add_gpt1_special_tokens(tokenizer, model) before fine-tuning."
            )
        is_extract = input_ids == extract_id  # (..., T)
        _require(
            is_extract.any(-1),
            f"A sequence has no extract token (id {extract_id}, `_classify_`): the classifier reads the hidden state "
            "there. Build inputs with the tokenizer from add_gpt1_special_tokens or the hf_gpt1.data.transforms "
            "collators, and keep truncation from cutting it off.",
        )
        kwargs.pop("use_cache", None)  # a classifier reads one pass: nothing is cached, whatever the caller asks
        # compiled, the whole step is one graph (kernels.EAGER_DROPOUT_ATTENTION_DEVICES says why)
        kwargs.setdefault("attention_in_graph", True)
        outputs = self.transformer(input_ids, position_ids=position_ids, use_cache=False, **kwargs)
        hidden = outputs.last_hidden_state  # (..., T, C)
        # argmax returns the first maximum: the first `_classify_` position, as in the original code.
        extract_index = is_extract.int().argmax(-1)  # (...)
        pooled = hidden.gather(-2, extract_index[..., None, None].expand(*extract_index.shape, 1, hidden.shape[-1]))
        return outputs, pooled.squeeze(-2)

    def _objective(
        self,
        outputs: GPT1ModelOutput,
        logits: torch.Tensor,
        clf_loss: torch.Tensor | None,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None,
        lm_labels: torch.LongTensor | None,
    ) -> GPT1ClassifierOutput:
        """L3 = L2 + λ·L1, with L1 on the task inputs (computed when there is a task loss or explicit `lm_labels`)."""
        lm_loss = None
        if self.config.lm_coef > 0 and (clf_loss is not None or lm_labels is not None):
            lm_loss = self.language_model_loss(
                outputs,
                lm_labels if lm_labels is not None else input_ids,
                attention_mask,
                reduction=self.config.lm_loss_reduction,
            )
        loss = None
        if clf_loss is not None:
            loss = clf_loss if lm_loss is None else clf_loss + self.config.lm_coef * lm_loss
        return GPT1ClassifierOutput(
            loss=loss,
            clf_loss=clf_loss,
            lm_loss=lm_loss,
            logits=logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )


def _check_class_ids(labels: torch.Tensor, n: int, what: str, hint: str = "") -> None:
    # An out-of-range class id otherwise fails inside cross_entropy with an opaque index error.
    if labels.is_floating_point():
        raise ValueError(f"labels must be integer {what}, got {labels.dtype}{hint}.")
    _require((labels >= 0) & (labels < n), f"labels must be {what} in [0, {n}){hint}.")


def _swap_pair(input_ids: torch.LongTensor, delimiter_token_id: int, extract_token_id: int) -> torch.LongTensor:
    """Turns `<s> a <$> b <e> pad…` into `<s> b <$> a <e> pad…` (the second ordering of the similarity transform).

    Works row by row on right-padded `(B, T)` ids with one delimiter before the extract token; positions from the
    extract token on (the extract token and padding) are kept.
    """
    positions = torch.arange(input_ids.shape[-1], device=input_ids.device)  # (T,)
    delim = (input_ids == delimiter_token_id).int().argmax(-1, keepdim=True)  # (B, 1)
    extract = (input_ids == extract_token_id).int().argmax(-1, keepdim=True)  # (B, 1)
    len_b = extract - delim - 1
    source = torch.where(positions <= len_b, delim + positions, positions)  # b moves to the front
    source = torch.where(positions == len_b + 1, delim, source)  # then the delimiter
    source = torch.where((positions > len_b + 1) & (positions < extract), positions - len_b - 1, source)  # then a
    source = torch.where(positions == 0, 0, source)  # the start token stays
    return input_ids.gather(-1, source)


class GPT1ForSequenceClassification(_GPT1FineTuningBase):
    """GPT-1 fine-tuned for classification, entailment, similarity or regression with L3 = L2 + λ·L1.

    The classifier reads the final hidden state at the extract token (`_classify_`), applies dropout
    (`config.clf_pdrop`) and a linear layer with bias. `num_labels == 1` is regression (MSE), as for STS-B. With
    `config.similarity`, the input holds both orderings of a pair as `(batch, 2, seq)` — or one ordering
    `<s> a <$> b <e>` as `(batch, seq)`, the other being built here — and the two extract-token states are added
    before the classifier.
    """

    def __init__(self, config: GPT1Config):
        super().__init__(config, num_outputs=config.num_labels)
        self.num_labels = config.num_labels
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        labels: torch.Tensor | None = None,
        **kwargs: Unpack[TransformersKwargs],
    ) -> GPT1ClassifierOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, seq_len)`, or `(batch_size, 2, seq_len)` for
                similarity models): right-padded sequences built by `hf_gpt1.data.transforms`, each with an extract
                token.
            labels (`torch.Tensor` of shape `(batch_size,)`, *optional*):
                Class ids in `[0, num_labels)`, or float targets when `num_labels == 1`.
            lm_labels (`torch.LongTensor`, same shape as `input_ids`, *optional*, a keyword argument):
                Targets of the auxiliary L1 (unshifted, `-100` ignored). Default: every real token of `input_ids`
                after the start token (padding excluded), the original code's rule. (Not a named parameter: Trainer
                takes every forward parameter named like a label for a label, and a plain Trainer's
                `EvalPrediction.label_ids` would then be `(labels, lm_labels)` instead of the task labels.)
        """
        lm_labels = kwargs.pop("lm_labels", None)
        if input_ids is None:
            raise ValueError("GPT1ForSequenceClassification needs `input_ids`: the pooling position is found in them.")
        attention_mask, input_ids, position_ids, lm_labels = self._right_aligned(
            attention_mask, input_ids, position_ids, lm_labels
        )
        self._check_input_format(input_ids)
        if self.config.similarity and input_ids.ndim == 2:
            input_ids, attention_mask, lm_labels = self._both_orderings(input_ids, attention_mask, lm_labels)
        if self.config.similarity and (input_ids.ndim != 3 or input_ids.shape[1] != 2):
            raise ValueError(
                f"A similarity model expects input_ids of shape (batch, 2, seq), got {tuple(input_ids.shape)}."
            )
        if not self.config.similarity and input_ids.ndim != 2:
            raise ValueError(
                f"input_ids must be (batch, seq), got {tuple(input_ids.shape)}; (batch, 2, seq) needs "
                "config.similarity=True."
            )
        outputs, pooled = self._decode_and_pool(input_ids, position_ids, **kwargs)
        if self.config.similarity:
            pooled = pooled.sum(1)  # (B, C): the paper adds the two orderings' extract-token states
        logits = self.score(F.dropout(pooled, self.clf_dropout, self.training))  # (B, num_labels)
        clf_loss = None if labels is None else self._classification_loss(logits, labels)
        return self._objective(outputs, logits, clf_loss, input_ids, attention_mask, lm_labels)

    def _check_input_format(self, input_ids: torch.LongTensor) -> None:
        # A pair fed to a single-sentence model (or the reverse) would be classified silently and wrongly.
        fmt, delimiter = self.config.input_format, self.config.delimiter_token_id
        if fmt is None or delimiter is None:
            return
        has_pair = (input_ids == delimiter).any(-1)
        if INPUT_FORMATS[fmt].pair:
            _require(
                has_pair,
                f"This model was fine-tuned on sentence pairs (input_format={fmt!r}) but got a single sentence; give "
                "{'text': a, 'text_pair': b} to the pipeline, or tokenizer(a, b).",
            )
        else:
            _require(
                ~has_pair,
                f"This model was fine-tuned on single sentences (input_format={fmt!r}) but got a sentence pair (a "
                "delimiter token); give one text per example.",
            )

    def _both_orderings(
        self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None, lm_labels: torch.LongTensor | None
    ) -> tuple[torch.LongTensor, torch.Tensor | None, torch.LongTensor | None]:
        if self.config.delimiter_token_id is None or self.config.extract_token_id is None:
            raise ValueError("A similarity model needs config.delimiter_token_id and config.extract_token_id.")
        swapped = _swap_pair(input_ids, self.config.delimiter_token_id, self.config.extract_token_id)
        input_ids = torch.stack([input_ids, swapped], dim=1)  # (B, 2, T)
        if attention_mask is not None:
            attention_mask = torch.stack([attention_mask, attention_mask], dim=1)  # same length, same padding
        if lm_labels is not None:
            swapped_labels = swapped.masked_fill(lm_labels == IGNORE_INDEX, IGNORE_INDEX)
            lm_labels = torch.stack([lm_labels, swapped_labels], dim=1)
        return input_ids, attention_mask, lm_labels

    def _classification_loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        # The problem type comes from the config, or from these labels for this call only: transformers' heads store
        # the guess in the config, so one batch of float labels would turn every later call into multi-label.
        problem_type = self.config.problem_type
        if problem_type is None:
            if self.num_labels == 1:
                problem_type = "regression"
            elif labels.is_floating_point() and labels.shape == logits.shape:
                problem_type = "multi_label_classification"
            else:
                problem_type = "single_label_classification"
        if problem_type == "regression":
            _require(torch.isfinite(labels), "Regression labels contain NaN or inf; clean or drop those rows.")
            return F.mse_loss(logits.squeeze(-1).float(), labels.float())
        if problem_type == "single_label_classification":
            _check_class_ids(labels, self.num_labels, "class ids", "; check the label column or config.num_labels")
            return _cross_entropy_l2(logits, labels, self.config)
        if labels.shape != logits.shape:
            raise ValueError(
                f"Multi-label classification needs labels of shape {tuple(logits.shape)} (one 0/1 per class), got "
                f"{tuple(labels.shape)}."
            )
        return F.binary_cross_entropy_with_logits(logits.float(), labels.float())


class GPT1ForMultipleChoice(_GPT1FineTuningBase):
    """GPT-1 for multiple choice: `<s> context <$> answer_k <e>` per answer, one score each, softmax over answers.

    The loss is L3 = cross-entropy over the choices + λ·L1 over every choice's tokens. As in the original code, the
    classifier dropout mask is shared by the choices of an example.
    """

    def __init__(self, config: GPT1Config):
        super().__init__(config, num_outputs=1)
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        **kwargs: Unpack[TransformersKwargs],
    ) -> GPT1ClassifierOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, num_choices, seq_len)`):
                One right-padded sequence per answer, each ending in the extract token.
            labels (`torch.LongTensor` of shape `(batch_size,)`, *optional*): index of the right answer.
            lm_labels (`torch.LongTensor`, same shape as `input_ids`, *optional*, a keyword argument): targets of
                the auxiliary L1; default: every real token after the start token (see
                [`GPT1ForSequenceClassification.forward`] for why it is not a named parameter).
        """
        lm_labels = kwargs.pop("lm_labels", None)
        if input_ids is None or input_ids.ndim != 3:
            shape = None if input_ids is None else tuple(input_ids.shape)
            raise ValueError(
                f"GPT1ForMultipleChoice expects input_ids of shape (batch, num_choices, seq), got {shape}."
            )
        attention_mask, input_ids, position_ids, lm_labels = self._right_aligned(
            attention_mask, input_ids, position_ids, lm_labels
        )
        outputs, pooled = self._decode_and_pool(input_ids, position_ids, **kwargs)  # pooled: (B, K, C)
        if self.training and self.clf_dropout > 0:
            # One dropout mask per example, broadcast over its choices (noise shape (B, 1, C) in the original).
            keep = torch.ones_like(pooled[:, :1])
            pooled = pooled * F.dropout(keep, self.clf_dropout, training=True)
        logits = self.score(pooled).squeeze(-1)  # (B, K)
        clf_loss = None
        if labels is not None:
            _check_class_ids(labels, logits.shape[-1], "choice indices")
            clf_loss = _cross_entropy_l2(logits, labels, self.config)
        return self._objective(outputs, logits, clf_loss, input_ids, attention_mask, lm_labels)


def _cross_entropy_l2(logits: torch.Tensor, labels: torch.Tensor, config: GPT1Config) -> torch.Tensor:
    """L2 of class ids or choice indices: cross-entropy in fp32, with `config.clf_label_smoothing`."""
    return F.cross_entropy(logits.float(), labels.long(), label_smoothing=config.clf_label_smoothing)


@dataclass(frozen=True)
class Head:
    """One of the model classes, with what transformers and the Hub know it by.

    Args:
        model (`type[GPT1PreTrainedModel]`): The class.
        auto_class (`str`): The transformers Auto class that loads it (registered on import, and written in every
            saved config's `auto_map`).
        pipeline_tag (`str`, *optional*): The pipeline task it serves (a pushed model's card declares it).
        new_weights (`tuple[str, ...]`): Weights fine-tuning adds to a language model (initialised, not loaded).
    """

    model: type[GPT1PreTrainedModel]
    auto_class: str
    pipeline_tag: str | None = None
    new_weights: tuple[str, ...] = ()


HEADS: tuple[Head, ...] = (
    Head(GPT1Model, "AutoModel"),
    Head(GPT1LMHeadModel, "AutoModelForCausalLM", "text-generation"),
    Head(GPT1ForSequenceClassification, "AutoModelForSequenceClassification", "text-classification",
         ("score.weight", "score.bias")),
    Head(GPT1ForMultipleChoice, "AutoModelForMultipleChoice", "multiple-choice", ("score.weight", "score.bias")),
)  # fmt: skip
"""GPT-1's model classes: the base decoder, the LM head (pre-training, L1) and the fine-tuning heads (L3)."""

# Written into every saved config so that any Auto class loads a saved model with `trust_remote_code=True` in a
# process that never imported hf_gpt1 (save_pretrained copies this file and its relative imports beside it).
AUTO_MAP = {"AutoConfig": "configuration_gpt1.GPT1Config"} | {
    entry.auto_class: f"modeling_gpt1.{entry.model.__name__}" for entry in HEADS
}


def head(name: str) -> Head:
    """The [`Head`] whose class is named `name` (an input format's `head`, a config's `architectures` entry).

    Raises:
        `KeyError`: No such head; the message lists them.
    """
    for entry in HEADS:
        if entry.model.__name__ == name:
            return entry
    raise KeyError(f"{name!r} is no GPT-1 model class; the classes are {[h.model.__name__ for h in HEADS]}.")


__all__ = [
    "HEADS",
    "GPT1ClassifierOutput",
    "GPT1ForMultipleChoice",
    "GPT1ForSequenceClassification",
    "GPT1LMHeadModel",
    "GPT1Model",
    "GPT1ModelOutput",
    "GPT1PreTrainedModel",
    "Head",
    "head",
]
