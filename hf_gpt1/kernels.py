# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Faster implementations of three pieces of GPT-1's training step, kept out of the model file.

* `apply_dropout` / `GPT1Dropout`: dropout with a cheaper random mask on the CPU.
* `sdpa_attention_forward`: transformers' SDPA attention, except for CPU training with attention dropout, where
  PyTorch's SDPA falls back to an fp32 "math" path; there `cpu_dropout_attention_forward` computes the same thing in
  the inputs' dtype; and on a GPU it never picks cuDNN attention, which builds a new graph for every new shape. The
  model registers it as its `"sdpa"` implementation on a local `AttentionInterface`.
* `linear_cross_entropy`: the language-model loss L1 fused with the tied LM head (one logits buffer on the CPU).
* `split_kv_decode_attention`: attention of one query position over a static KV cache, the cache's length split into
  chunks computed side by side and combined by their log-sum-exps ("flash-decoding"), which `sdpa_attention_forward`
  takes for the decode step on the devices of `SPLIT_KV_DECODE_DEVICES`.

Each falls back to the plain PyTorch composition under `torch.compile` (the compiler fuses that itself) and off the
CPU. Measurements behind each choice are in benchmarks/README.md. The model code imports this file relatively, so
`save_pretrained` ships it with the remote code.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers.integrations.sdpa_attention import sdpa_attention_forward as _transformers_sdpa

# GPU matmuls run on aligned tensor-core kernels when their dimensions are multiples of 8, best of 64: the LM head's
# logits blocks are cut at such a multiple of rows, by device type (1: one block per matrix).
ALIGNED_ROWS = {"cuda": 64}
# Rows of logits per chunk of the fused CPU loss: ~16 MiB of fp32 logits, below glibc's mmap threshold, so the chunk
# temporaries are reused from the heap instead of being page-faulted in again for every chunk.
_CPU_CHUNK_ELEMENTS = 1 << 22
# SDPA's GPU backends other than cuDNN attention, in PyTorch's own order of preference.
_SDPA_BACKENDS_WITHOUT_CUDNN = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def cpu_dropout_mask(shape: torch.Size, p: float) -> torch.Tensor:
    """A boolean mask, True where an element is dropped (probability `p`), from the CPU generator's 31-bit integers.

    `bernoulli_` draws a double per element. When `p ≥ 2⁻⁶` each 31-bit draw serves two elements through its two
    15-bit halves (`p` resolved to 2⁻¹⁵, under 0.1% of `p`): half the draws; below that, one draw per element (`p` to
    2⁻³¹). Under `torch.compile` it is `rand < p`, which the compiler fuses into the kernel that uses the mask.
    """
    if torch.compiler.is_compiling():
        return torch.rand(shape, device="cpu") < p
    n = shape.numel()
    if p * 2**15 >= 2**9:
        halves = torch.empty((n + 1) // 2, dtype=torch.int32, device="cpu").random_().view(torch.int16)[:n]
        return (halves.bitwise_and_(0x7FFF) < round(p * 2**15)).view(shape)
    return torch.empty(shape, dtype=torch.int32, device="cpu").random_() < round(p * 2**31)


def dropout_mask(shape: torch.Size, p: float, device: torch.device) -> torch.Tensor:
    """A boolean mask, True where an element is dropped (probability `p`): [`cpu_dropout_mask`] on the CPU."""
    if torch.device(device).type == "cpu":
        return cpu_dropout_mask(shape, p)
    return torch.rand(shape, device=device) < p


def drop_where(x: torch.Tensor, dropped: torch.Tensor, p: float) -> torch.Tensor:
    """`x` with the elements where `dropped` is True zeroed and the others scaled by 1 / (1 - p): dropout with a given
    mask, so that two tensors (a table and rows of it) drop alike, bit for bit."""
    return torch.where(dropped, 0.0, x).mul_(1.0 / (1.0 - p))


def apply_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """`F.dropout`, with the cheaper mask of [`cpu_dropout_mask`] on the CPU (and plain `F.dropout` elsewhere or
    under `torch.compile`)."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or torch.compiler.is_compiling():
        return F.dropout(x, p, training=True)
    # `where` is one pass forward and backward; `masked_fill` out of place is a copy and a fill each way.
    return drop_where(x, cpu_dropout_mask(x.shape, p), p)


class GPT1Dropout(nn.Dropout):
    """`nn.Dropout` through [`apply_dropout`]; the same module in every other respect."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return apply_dropout(x, self.p, self.training)


def cpu_dropout_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """SDPA's computation for CPU training with attention dropout, in the inputs' dtype.

    PyTorch's fused CPU attention kernels have no dropout, so `scaled_dot_product_attention` falls back to its math
    path there, which upcasts bf16/fp16 inputs to fp32 and adds fully-masked-row checks. This computes the same
    probabilities (the softmax accumulates in fp32 inside the kernel) with as few passes over the (B, nh, T, S)
    scores as possible: the scaling and the dropout's 1/(1-p) go on the 12× smaller queries and values, the mask is
    added (its backward is free), and dropped probabilities are zeroed by one `where`. `attention_mask` is the
    boolean SDPA mask of `create_causal_mask` (True = attend), an additive one, or None for plain causal attention.
    """
    q_len, k_len = query.shape[-2], key.shape[-2]
    # finfo.min rather than -inf: a fully masked row (a left-padded query) gets finite, ignored values, as in eager.
    masked = torch.finfo(query.dtype).min
    if attention_mask is None:
        bias = torch.full((q_len, k_len), masked, dtype=query.dtype, device=query.device).triu_(k_len - q_len + 1)
    else:
        attend = attention_mask if attention_mask.dtype == torch.bool else attention_mask == 0  # additive: 0 = attend
        bias = torch.zeros(attend.shape, dtype=query.dtype, device=query.device).masked_fill_(~attend, masked)
    scores = torch.matmul(query * scaling, key.transpose(-1, -2)).add_(bias)  # (B, nh, T, S)
    probs = F.softmax(scores, dim=-1)
    probs = torch.where(cpu_dropout_mask(probs.shape, dropout), 0.0, probs)
    return torch.matmul(probs, value * (1.0 / (1.0 - dropout))).transpose(1, 2), None  # (B, T, nh, hs)


def sdpa_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    attention_in_graph: bool = False,
    static_cache: bool = False,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """transformers' SDPA attention, with [`cpu_dropout_attention_forward`] for CPU training with attention dropout,
    [`split_kv_decode_attention`] for one query over a static cache (`static_cache=True`, the decode step) on the
    devices of [`SPLIT_KV_DECODE_DEVICES`], and without cuDNN attention off the CPU.

    On Hopper GPUs SDPA prefers cuDNN attention, which builds (and caches) a graph for every new (batch, length)
    shape, so batches of varying length stall on graph building (README, "GPU"); flash or memory-efficient attention
    serve every shape with one kernel. Compiled training with dropout on CUDA runs attention eagerly, between the
    compiled regions ([`EAGER_DROPOUT_ATTENTION_DEVICES`]), unless the caller passes `attention_in_graph=True`.
    """
    on_cpu = query.device.type == "cpu"
    if static_cache and query.shape[-2] == 1 and dropout == 0 and query.device.type in SPLIT_KV_DECODE_DEVICES:
        return split_kv_decode_attention(query, key, value, attention_mask, scaling)
    if on_cpu and dropout > 0 and not torch.compiler.is_compiling():
        return cpu_dropout_attention_forward(module, query, key, value, attention_mask, scaling, dropout, **kwargs)
    between_graphs = query.device.type in EAGER_DROPOUT_ATTENTION_DEVICES and not attention_in_graph
    if dropout > 0 and between_graphs and torch.compiler.is_compiling():
        return _eager_sdpa(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    with nullcontext() if on_cpu else _without_cudnn_attention():
        return _transformers_sdpa(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )


# Devices where compiled training runs attention with dropout eagerly, between the compiled regions: a compiled graph
# sends SDPA with dropout to the memory-efficient kernel on CUDA (39% of an H200 step), eager SDPA to flash attention.
# That pays in pre-training's long, GPU-bound steps. The fine-tuning heads pass `attention_in_graph=True`: their
# short, host-bound steps gain more from one graph, replayed as a CUDA graph, than flash gains over the other kernel.
EAGER_DROPOUT_ATTENTION_DEVICES = {"cuda"}


@torch.compiler.disable(recursive=True)
def _eager_sdpa(module, query, key, value, attention_mask, **kwargs) -> tuple[torch.Tensor, None]:
    """[`sdpa_attention_forward`] outside the compiled graph (Dynamo breaks the graph at this call)."""
    with nullcontext() if query.device.type == "cpu" else _without_cudnn_attention():
        return _transformers_sdpa(module, query, key, value, attention_mask, **kwargs)


class _CudnnAttentionOff:
    """SDPA's cuDNN backend off for one call, by its flag alone: much cheaper on the host than `sdpa_kernel`, which
    matters when decoding one token attends 12 times (benchmarks/README.md)."""

    def __enter__(self) -> None:
        self.enabled = torch.backends.cuda.cudnn_sdp_enabled()
        torch.backends.cuda.enable_cudnn_sdp(False)

    def __exit__(self, *exc_info) -> None:
        torch.backends.cuda.enable_cudnn_sdp(self.enabled)


def _without_cudnn_attention():
    # Under torch.compile, `sdpa_kernel` is the form the compiler records in its graph.
    return sdpa_kernel(_SDPA_BACKENDS_WITHOUT_CUDNN) if torch.compiler.is_compiling() else _CudnnAttentionOff()


# Devices where the decode step (one query over a static cache) takes [`split_kv_decode_attention`]. On an H100 the
# memory-efficient kernel gave one query per head over 512 slots 12 of 132 multiprocessors at batch 1 (0.37 ms of a
# 0.87 ms step): split in chunks, the cache is read by (batch × heads × chunks) blocks side by side.
SPLIT_KV_DECODE_DEVICES = {"cuda"}
# Cache slots per chunk: 512 slots (GPT-1's n_positions) give 8 chunks, ×12 heads = 96 blocks at batch 1.
SPLIT_KV_CHUNK = 64


def split_kv_decode_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    chunk: int = SPLIT_KV_CHUNK,
) -> tuple[torch.Tensor, None]:
    """Attention of one query position over a KV cache, split along the cache ("flash-decoding"), in torch ops only
    (so it compiles into the decode step's graph).

    The cache's `S` slots are cut into chunks of `chunk`; each chunk gives its partial softmax-weighted sum of values,
    relative to its own maximum score, and that maximum and sum of weights; the chunks are then combined by rescaling
    each to the overall maximum. The result is SDPA's to float rounding; the softmax runs in fp32.

    Args:
        query (`torch.Tensor` of shape `(B, nh, 1, hs)`): the new position's queries.
        key, value (`torch.Tensor` of shape `(B, nh, S, hs)`): the cache, unfilled slots included.
        attention_mask (`torch.Tensor`, *optional*): `(B or 1, 1, 1, S)`, boolean (True = attend, SDPA's) or additive;
            None attends to every slot. A slot masked out contributes nothing; a chunk wholly masked (unfilled slots,
            left padding) contributes nothing either.
        scaling (`float`, *optional*): the scores' scale, `hs ** -0.5` by default.

    Returns:
        `(output, None)`: output `(B, 1, nh, hs)` in the query's dtype, transformers' attention layout.
    """
    batch, heads, _, head_dim = query.shape
    slots = key.shape[-2]
    scaling = head_dim**-0.5 if scaling is None else scaling
    if attention_mask is not None and attention_mask.dtype != torch.bool:
        attention_mask = attention_mask == 0  # additive: 0 = attend
    pad = -slots % chunk
    if pad:  # only for lengths that are not a multiple of `chunk` (static caches come in multiples of 128)
        key, value = F.pad(key, (0, 0, 0, pad)), F.pad(value, (0, 0, 0, pad))
        attend = torch.ones(1, 1, 1, slots, dtype=torch.bool, device=query.device)
        attention_mask = attend if attention_mask is None else attention_mask.expand(-1, -1, -1, slots)
        attention_mask = F.pad(attention_mask, (0, pad), value=False)
    n = key.shape[-2] // chunk
    keys = key.view(batch, heads, n, chunk, head_dim)
    values = value.view(batch, heads, n, chunk, head_dim)
    # (B, nh, n, 1, chunk): each chunk's scores for the one query
    scores = torch.matmul((query * scaling)[:, :, None], keys.transpose(-1, -2)).float()
    if attention_mask is not None:
        mask = attention_mask.reshape(*attention_mask.shape[:-2], 1, n, 1, chunk)[:, 0]  # (B or 1, 1, n, 1, chunk)
        scores = scores.masked_fill(~mask, float("-inf"))
    chunk_max = scores.amax(-1, keepdim=True)  # (B, nh, n, 1, 1); -inf for a chunk wholly masked
    chunk_max = torch.where(torch.isfinite(chunk_max), chunk_max, 0.0)  # its weights are exp(-inf) = 0 anyway
    weights = torch.exp(scores - chunk_max)  # (B, nh, n, 1, chunk)
    chunk_sum = weights.sum(-1, keepdim=True)  # (B, nh, n, 1, 1)
    partial = torch.matmul(weights.to(value.dtype), values).float()  # (B, nh, n, 1, hs): unnormalised
    # combine: each chunk rescaled from its own maximum to the overall one (over chunks that attend to something)
    top = torch.where(chunk_sum > 0, chunk_max, float("-inf")).amax(2, keepdim=True)  # (B, nh, 1, 1, 1)
    scale = torch.where(chunk_sum > 0, torch.exp(chunk_max - top), 0.0)  # (B, nh, n, 1, 1)
    total = (scale * chunk_sum).sum(2)  # (B, nh, 1, 1)
    output = (scale * partial).sum(2) / total  # (B, nh, 1, hs)
    return output.to(query.dtype).transpose(1, 2), None  # (B, 1, nh, hs)


class _LinearCrossEntropy(torch.autograd.Function):
    """`Σ_i w_i · CE(hidden_i @ [W_1; W_2; …].T, target_i)`, with both gradients computed in the forward pass.

    A 40k-wide LM head's logits, their fp32 copy, log-softmax, its gradient and nll's zero-filled one-hot gradient are
    five (M, V) buffers; on the CPU each is a fresh `mmap` that page-faults on first touch, which costs as much as the
    head's matmuls. Here one (M, V_k) buffer per output matrix holds the logits and is overwritten, a chunk of rows at
    a time, with their gradient `w_i · (softmax_i - onehot_i)`; the same matmuls then give every gradient. The softmax
    runs in fp32 whatever the weights' dtype; targets index the rows of the first matrix.
    """

    @staticmethod
    def forward(ctx, hidden, targets, token_weights, chunk_rows: int, *weights):
        buffers = [hidden @ weight.T for weight in weights]  # (M, V_k) each: logits, then their gradient in place
        losses = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], chunk_rows):
            rows = slice(start, start + chunk_rows)
            logits = [buffer[rows].float() for buffer in buffers]  # (n, V_k)
            lse = torch.logsumexp(torch.cat([torch.logsumexp(part, -1, keepdim=True) for part in logits], -1), -1)
            lse = lse[:, None]  # (n, 1): over the rows of every matrix
            target_logits = logits[0].gather(1, targets[rows, None])  # (n, 1)
            losses[rows] = (lse - target_logits).squeeze(1)
            for k, (buffer, part) in enumerate(zip(buffers, logits)):
                grad = part.sub_(lse).exp_()  # softmax
                if k == 0:
                    grad.scatter_add_(1, targets[rows, None], torch.full_like(target_logits, -1.0))
                buffer[rows] = grad.mul_(token_weights[rows, None])
        # Kept on ctx rather than saved for backward: backward scales them in place, so it runs once.
        # Under autocast the matmuls return the autocast dtype: the grads keep their inputs' dtypes.
        grad_hidden = sum(buffer @ weight for buffer, weight in zip(buffers, weights)).to(hidden.dtype)  # (M, C)
        ctx.grads = (grad_hidden, *((b.T @ hidden).to(w.dtype) for b, w in zip(buffers, weights)))  # (V_k, C)
        return (losses * token_weights).sum()

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("The fused LM loss can be back-propagated once; recompute the forward pass.")
        grad_hidden, *grad_weights = ctx.grads
        ctx.grads = None
        return grad_hidden.mul_(grad_output), None, None, None, *(g.mul_(grad_output) for g in grad_weights)


def linear_cross_entropy(
    hidden: torch.Tensor,
    weights: Sequence[torch.Tensor],
    targets: torch.Tensor,
    token_weights: torch.Tensor,
) -> torch.Tensor:
    """Weighted LM cross-entropy `Σ_i w_i · CE(hidden_i @ W.T, target_i)`, `W` the rows of `weights` stacked.

    The softmax normalises over the rows of every matrix in `weights` (the token table, and under the original
    single-table layout the position table too); targets index the first. CPU training runs the fused
    [`_LinearCrossEntropy`], which never materialises more than one buffer per matrix; under `torch.compile`,
    without gradients, or off the CPU it is the plain composition.

    Args:
        hidden (`torch.Tensor` of shape `(M, C)`): the hidden states that predict a target.
        weights (`Sequence[torch.Tensor]`): output matrices of shape `(V_k, C)`.
        targets (`torch.LongTensor` of shape `(M,)`): row indices of the first matrix.
        token_weights (`torch.Tensor` of shape `(M,)`): each row's weight in the sum (0 drops a row).
    """
    weights = tuple(weights)
    fused = hidden.device.type == "cpu" and torch.is_grad_enabled() and not torch.compiler.is_compiling()
    if not fused:
        row_multiple = ALIGNED_ROWS.get(hidden.device.type, 1)
        return plain_linear_cross_entropy(hidden, weights, targets, token_weights, row_multiple)
    chunk_rows = max(1, _CPU_CHUNK_ELEMENTS // sum(weight.shape[0] for weight in weights))
    return _LinearCrossEntropy.apply(hidden, targets, token_weights.float(), chunk_rows, *weights)


def plain_linear_cross_entropy(
    hidden: torch.Tensor,
    weights: Sequence[torch.Tensor],
    targets: torch.Tensor,
    token_weights: torch.Tensor,
    row_multiple: int = 1,
) -> torch.Tensor:
    """[`linear_cross_entropy`] as a composition the compiler fuses (on a GPU it is faster than a chunked loop),
    block by block: each matrix's logits are their own matmul and the softmax's normaliser combines the blocks'
    logsumexps, so no concatenated or padded table is built (a copy of the 40k × 768 table every step).

    A matrix whose row count is not a multiple of `row_multiple` is split there (views, no copy): the aligned rows
    in one matmul and the few left in a small one. GPT-1's 40,478 + 4 tokens are not a multiple of 8, and a logits
    row stride that is not sends the head's three matmuls to slow unaligned GPU kernels.
    """
    blocks = []  # (matrix rows, first row's index in the first matrix or None)
    for k, weight in enumerate(weights):
        rows = weight.shape[0]
        aligned = rows - rows % row_multiple
        splits = [0, aligned, rows] if 0 < aligned < rows else [0, rows]
        blocks += [(weight[a:b], a if k == 0 else None) for a, b in zip(splits, splits[1:])]
    lse = target_logits = None
    for block, first in blocks:
        logits = (hidden @ block.T).float()  # (M, V_k)
        block_lse = torch.logsumexp(logits, -1)  # (M,)
        lse = block_lse if lse is None else torch.logaddexp(lse, block_lse)
        if first is not None:  # targets index the first matrix: each picks its logit from the block that holds it
            local = targets - first
            inside = (local >= 0) & (local < block.shape[0])
            picked = logits.gather(1, local.clamp(0, block.shape[0] - 1)[:, None]).squeeze(1)
            picked = torch.where(inside, picked, 0.0)
            target_logits = picked if target_logits is None else target_logits + picked
    return ((lse - target_logits) * token_weights).sum()


__all__ = [
    "GPT1Dropout",
    "apply_dropout",
    "cpu_dropout_attention_forward",
    "cpu_dropout_mask",
    "drop_where",
    "dropout_mask",
    "linear_cross_entropy",
    "plain_linear_cross_entropy",
    "sdpa_attention_forward",
    "split_kv_decode_attention",
]
