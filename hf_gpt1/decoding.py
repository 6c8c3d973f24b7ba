# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The device loop of `GPT1LMHeadModel.generate`'s default path: greedy decoding and sampling from a static cache
without host work per token (issue 52).

transformers' `_sample` runs, per token, Python that prepares the inputs, builds the 4D mask, calls the (compiled)
forward, runs the logits processors, appends the token to the sequence and reads the device to decide whether to go
on (~0.65 ms a token on an H100, as much as the decode step's kernels). Here one step, [`_decode_step`], holds all of
it on the device — the forward pass on the static cache, the processors, the choice of the token, padding after EOS
and the EOS check — so that, compiled, it is one graph replayed as a CUDA graph; the loop only replays it and reads
the device once per [`DECODE_TOKENS_PER_READ`] tokens. [`device_loop_refusal`] is the one place that decides which
calls it serves; the others keep transformers' loop. The model file imports this module relatively, so
`save_pretrained` ships it with the remote code.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from torch.nn import functional as F
from transformers.cache_utils import Cache
from transformers.generation import (
    EosTokenCriteria,
    GenerationConfig,
    LogitsProcessorList,
    MaxLengthCriteria,
    MinPLogitsWarper,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

if TYPE_CHECKING:
    from .modeling_gpt1 import GPT1LMHeadModel

# The loop reads the device once per this many tokens (whether every row has reached EOS).
DECODE_TOKENS_PER_READ = 8
# Logits processors the step runs on the device: none reads the generated ids, so a step needs only the new logits.
# Any other processor (repetition penalty, n-gram bans, minimum lengths, a custom one) takes transformers' loop.
DEVICE_LOOP_PROCESSORS = (TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper)


def device_loop_refusal(
    model: GPT1LMHeadModel,
    logits_processor: LogitsProcessorList,
    stopping_criteria: StoppingCriteriaList,
    generation_config: GenerationConfig,
    synced_gpus: bool = False,
    streamer=None,
    **model_kwargs,
) -> str | None:
    """Why this `_sample` call takes transformers' loop instead of the device loop (None: it takes the device loop).
    The one place that decides which options each loop serves (`GPT1LMHeadModel.generate` lists them)."""
    cache = model_kwargs.get("cache", model_kwargs.get("past_key_values"))
    if not getattr(model, "_device_loop_call", False):
        return "not the default static decoding (another device, or a cache chosen by the call or the config)"
    if not getattr(cache, "is_compileable", False):
        return "no static cache"
    if streamer is not None:
        return "a streamer (it takes each token as it comes)"
    if synced_gpus:
        return "synced_gpus"
    if generation_config.return_dict_in_generate:
        return "return_dict_in_generate (per-step scores, logits, attentions or hidden states, or the cache)"
    if generation_config.prefill_chunk_size is not None or generation_config.is_assistant:
        return "chunked prefill or assisted decoding"
    others = [type(p).__name__ for p in logits_processor if not isinstance(p, DEVICE_LOOP_PROCESSORS)]
    if others:
        return f"logits processors that read the generated ids: {', '.join(others)}"
    others = [type(c).__name__ for c in stopping_criteria if not isinstance(c, (MaxLengthCriteria, EosTokenCriteria))]
    if others or stopping_criteria.max_length is None:
        return f"stopping criteria other than the length and EOS: {', '.join(others) or 'no max_length'}"
    if any(k in model_kwargs for k in ("token_type_ids", "mm_token_type_ids")):
        return "token type ids"
    return None


def sample_on_device(
    model: GPT1LMHeadModel,
    input_ids: torch.LongTensor,
    logits_processor: LogitsProcessorList,
    stopping_criteria: StoppingCriteriaList,
    generation_config: GenerationConfig,
    **model_kwargs,
) -> torch.LongTensor:
    """transformers' `_sample` for the calls [`device_loop_refusal`] lets through: the same tokens, token for token
    (and, sampling, the same random draws in the same order).

    transformers' prefill, then per token one call of [`_decode_step`] — compiled with the generation config's
    `compile_config`, where transformers would compile its decoding ([`compiled_decode_step`]). The host reads
    whether every row has finished once per [`DECODE_TOKENS_PER_READ`] tokens (only when stopping at EOS), and at the
    end cuts the tokens past the step where the last row finished (padding: transformers stops there).
    """
    pad = generation_config._pad_token_tensor
    eos = next((c.eos_token_id for c in stopping_criteria if isinstance(c, EosTokenCriteria)), None)
    if eos is not None:
        eos = eos.to(input_ids.device)
        if pad is None:  # as transformers: padding after EOS needs a pad token
            raise ValueError("`pad_token_id` must be defined when stopping at `eos_token_id`.")
        pad = pad.to(input_ids.device)
    step = _decode_step
    if model._valid_auto_compile_criteria(model_kwargs, generation_config):
        step = compiled_decode_step(model, generation_config.compile_config)

    outputs = model._prefill(input_ids, generation_config, model_kwargs, is_first_iteration=True)
    model_kwargs = model._update_model_kwargs_for_generation(outputs, model_kwargs)
    cache = model_kwargs["cache" if "cache" in model_kwargs else "past_key_values"]
    logits = outputs.logits[:, -1].to(copy=True, dtype=torch.float32)
    del outputs
    batch, length = input_ids.shape
    unfinished = torch.ones(batch, dtype=torch.bool, device=input_ids.device)
    token, unfinished = _choose_tokens(
        input_ids, logits, logits_processor, generation_config.do_sample, unfinished, pad, eos
    )
    # The 2D mask over the whole cache: slots not written yet are hidden by causality (the query's position).
    mask = model_kwargs.get("attention_mask")
    slots = cache.get_max_length()
    mask = torch.ones(batch, length + 1, dtype=torch.long, device=input_ids.device) if mask is None else mask
    mask = F.pad(mask, (0, slots - mask.shape[1]), value=1)
    # the new token's position (left padding counted out), with the strides of the step's own outputs
    position = model_kwargs["position_ids"][:, -1:].clone(memory_format=torch.contiguous_format)
    # Without EOS the step gets an id no token equals: one graph serves calls with and without EOS.
    device = token.device
    stop = (pad, eos) if eos is not None else (torch.tensor(0, device=device), torch.tensor([-1], device=device))

    tokens, running = [token], [unfinished.any()]
    wanted = stopping_criteria.max_length - length
    while len(tokens) < wanted:
        if eos is not None and not bool(unfinished.any()):  # the one host read per block
            break
        for _ in range(min(DECODE_TOKENS_PER_READ, wanted - len(tokens))):
            token, position, unfinished = step(
                model, token, position, mask, unfinished, cache, logits_processor, generation_config.do_sample, *stop
            )
            # copied out of the step's (CUDA-graph-owned) outputs, which its next replay overwrites
            token, position, unfinished = token.clone(), position.clone(), unfinished.clone()
            tokens.append(token)
            running.append(unfinished.any())
    new = torch.stack(tokens, 1)  # (B, n)
    if eos is not None:  # transformers stops at the step where the last row finished
        done = (~torch.stack(running)).nonzero()
        if len(done):
            new = new[:, : int(done[0, 0]) + 1]
    return torch.cat([input_ids, new], -1)


def compiled_decode_step(model: GPT1LMHeadModel, compile_config) -> Callable:
    """[`_decode_step`] compiled with `compile_config` (transformers' default one where None), kept on the model
    across calls so that each (cache bucket, batch size) compiles once, as transformers keeps its compiled forward."""
    compile_config = compile_config or model._default_compile_config()
    if getattr(model, "_decode_step_config", None) != compile_config:
        model._decode_step_config = compile_config
        # Dynamo keeps its graphs (and its recompilation limit) per code object: each model gets a copy of the
        # step's, so that models, buckets and batch sizes do not share one limit of 8 graphs.
        step = _decode_step
        own = types.FunctionType(step.__code__.replace(), step.__globals__, step.__name__, step.__defaults__)
        # Static shapes unless the config asks otherwise: one graph per (bucket, batch size), which CUDA graphs
        # record per shape anyway (Dynamo's automatic dynamic shapes would add a symbolic graph at the 2nd size).
        options = compile_config.to_dict()
        options["dynamic"] = False if options.get("dynamic") is None else options["dynamic"]
        model._decode_step_compiled = torch.compile(own, **options)
    return model._decode_step_compiled


def _choose_tokens(
    input_ids: torch.Tensor,
    logits: torch.Tensor,
    processors: LogitsProcessorList,
    do_sample: bool,
    unfinished: torch.Tensor,
    pad: torch.Tensor | None,
    eos: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers' `_sample` token choice for one step, on the device: the processed fp32 logits' argmax or a
    `multinomial` draw from their softmax; padding for rows that finished; rows that now end with EOS finish."""
    scores = processors(input_ids, logits)
    if do_sample:
        token = torch.multinomial(F.softmax(scores, dim=-1), num_samples=1).squeeze(1)
    else:
        token = torch.argmax(scores, dim=-1)
    if eos is None:
        return token, unfinished
    token = torch.where(unfinished, token, pad)
    return token, unfinished & ~torch.isin(token, eos)


def _decode_step(
    model: GPT1LMHeadModel,
    token: torch.Tensor,
    position: torch.Tensor,
    mask: torch.Tensor,
    unfinished: torch.Tensor,
    cache: Cache,
    processors: LogitsProcessorList,
    do_sample: bool,
    pad: torch.Tensor,
    eos: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One token of the device loop: `token` `(B,)` at `position` `(B, 1)` through the model on the static `cache`
    (`mask` `(B, slots)`: the prompt's padding, then ones), then [`_choose_tokens`]. Only tensors in and out, no value
    read on the host: compiled, it is one graph, replayed as a CUDA graph."""
    outputs = model(input_ids=token[:, None], attention_mask=mask, position_ids=position, cache=cache, use_cache=True)
    logits = outputs.logits[:, -1].float()
    token, unfinished = _choose_tokens(token[:, None], logits, processors, do_sample, unfinished, pad, eos)
    return token, position + 1, unfinished


__all__ = ["DECODE_TOKENS_PER_READ", "DEVICE_LOOP_PROCESSORS", "compiled_decode_step", "device_loop_refusal"]
