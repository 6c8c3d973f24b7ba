"""GPT-1 (Radford et al. 2018) as a transformers model: a post-LayerNorm decoder and its three heads.

The file reads top-down: attention → MLP → block → pre-trained base → decoder → heads. Parameter names and layouts
(`transformer.tokens_embed`, `transformer.h.{i}.attn.c_attn`, Conv1D weights stored `(in, out)`) are the ones of
transformers' `openai-gpt`, so its checkpoints (`openai-community/openai-gpt`) load without conversion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init
from transformers.activations import ACT2FN
from transformers.cache_utils import Cache, DynamicCache
from transformers.generation import GenerationMixin
from transformers.masking_utils import create_causal_mask
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel, slice_logits_to_keep
from transformers.pytorch_utils import Conv1D
from transformers.utils import ModelOutput, can_return_tuple
from transformers.utils.generic import merge_with_config_defaults
from transformers.utils.output_capturing import OutputRecorder, capture_outputs

from .configuration_gpt1 import GPT1Config

IGNORE_INDEX = -100
# Written into every saved config so that any Auto class loads a saved model with `trust_remote_code=True` in a
# process that never imported hf_gpt1 (save_pretrained copies this file and configuration_gpt1.py beside it).
AUTO_MAP = {
    "AutoConfig": "configuration_gpt1.GPT1Config",
    "AutoModel": "modeling_gpt1.GPT1Model",
    "AutoModelForCausalLM": "modeling_gpt1.GPT1LMHeadModel",
    "AutoModelForSequenceClassification": "modeling_gpt1.GPT1ForSequenceClassification",
    "AutoModelForMultipleChoice": "modeling_gpt1.GPT1ForMultipleChoice",
}


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
    """Reference attention; `attention_mask` is the additive 4D causal+padding mask from `create_causal_mask`."""
    attn_weights = torch.matmul(query, key.transpose(-1, -2)) * scaling  # (B, nh, T, S)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    # softmax in fp32 so bf16/fp16 runs normalise the same way as fp32 ones
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = F.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value).transpose(1, 2).contiguous()  # (B, T, nh, hs)
    return attn_output, attn_weights


def _cpu_dropout_mask(shape: torch.Size, p: float) -> torch.Tensor:
    """A boolean mask, True where an element is dropped (probability `p`), from the CPU generator's 31-bit integers.

    `bernoulli_` draws a double per element, and even one 31-bit integer per element left the mask the largest
    single cost of a bf16 training step. When `p ≥ 2⁻⁶` each 31-bit draw serves two elements through its two 15-bit
    halves (`p` resolved to 2⁻¹⁵, under 0.1% of `p`): half the draws; below that, one draw per element (`p` to 2⁻³¹).
    Under `torch.compile` it is `rand < p`, which the compiler fuses into the kernel that uses the mask.
    """
    if torch.compiler.is_compiling():
        return torch.rand(shape, device="cpu") < p
    n = shape.numel()
    if p * 2**15 >= 2**9:
        halves = torch.empty((n + 1) // 2, dtype=torch.int32, device="cpu").random_().view(torch.int16)[:n]
        return (halves.bitwise_and_(0x7FFF) < round(p * 2**15)).view(shape)
    return torch.empty(shape, dtype=torch.int32, device="cpu").random_() < round(p * 2**31)


def apply_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """`F.dropout`, with a cheaper mask on the CPU (`_cpu_dropout_mask`).

    Elsewhere, and under `torch.compile` (which fuses its own random numbers into the surrounding kernel), this is
    `F.dropout`.
    """
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or torch.compiler.is_compiling():
        return F.dropout(x, p, training=True)
    # `where` is one pass forward and backward; `masked_fill` out of place is a copy and a fill each way.
    return torch.where(_cpu_dropout_mask(x.shape, p), 0.0, x).mul_(1.0 / (1.0 - p))


class GPT1Dropout(nn.Dropout):
    """`nn.Dropout` through `apply_dropout` (the cheaper CPU mask); the same module in every other respect."""

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
    boolean SDPA mask of `create_causal_mask` (True = attend) or None for plain causal attention.
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
    probs = torch.where(_cpu_dropout_mask(probs.shape, dropout), 0.0, probs)
    return torch.matmul(probs, value * (1.0 / (1.0 - dropout))).transpose(1, 2), None  # (B, T, nh, hs)


class _LinearCrossEntropy(torch.autograd.Function):
    """`Σ_i w_i · CE(hidden_i @ weight.T, target_i)`, with both gradients computed in the forward pass.

    A 40k-wide LM head's logits, their fp32 copy, log-softmax, its gradient and nll's zero-filled one-hot gradient are
    five (M, V) buffers; on the CPU each is a fresh `mmap` that page-faults on first touch, which cost as much as the
    head's matmuls. Here one (M, V) buffer holds the logits and is overwritten, a chunk of rows at a time, with their
    gradient `w_i · (softmax_i - onehot_i)`; the same three matmuls then give both gradients. The softmax runs in fp32
    whatever the weights' dtype.
    """

    @staticmethod
    def forward(ctx, hidden, weight, targets, token_weights, chunk_rows: int):
        buffer = hidden @ weight.T  # (M, V), logits in the model's dtype, then their gradient in place
        losses = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], chunk_rows):
            rows = slice(start, start + chunk_rows)
            logits = buffer[rows].float()  # (n, V)
            lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # (n, 1)
            target_logits = logits.gather(1, targets[rows, None])  # (n, 1)
            losses[rows] = (lse - target_logits).squeeze(1)
            grad = logits.sub_(lse).exp_()  # softmax
            grad.scatter_add_(1, targets[rows, None], torch.full_like(target_logits, -1.0))
            buffer[rows] = grad.mul_(token_weights[rows, None])
        # Kept on ctx rather than saved for backward: backward scales them in place, so it runs once.
        # (M, C), (V, C); under autocast the matmuls return the autocast dtype: grads keep their inputs' dtypes
        ctx.grads = ((buffer @ weight).to(hidden.dtype), (buffer.T @ hidden).to(weight.dtype))
        return (losses * token_weights).sum()

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("The fused LM loss can be back-propagated once; recompute the forward pass.")
        grad_hidden, grad_weight = ctx.grads
        ctx.grads = None
        return grad_hidden.mul_(grad_output), grad_weight.mul_(grad_output), None, None, None


def linear_cross_entropy(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, token_weights: torch.Tensor
) -> torch.Tensor:
    """Weighted LM cross-entropy `Σ_i w_i · CE(hidden_i @ weight.T, target_i)` over rows that all carry a target.

    In eager training it never materialises more than one `(M, V)` buffer (see `_LinearCrossEntropy`); under
    `torch.compile`, or without gradients, it is the plain composition, which the compiler fuses itself.
    """
    if torch.compiler.is_compiling() or not torch.is_grad_enabled():
        token_loss = F.cross_entropy((hidden @ weight.T).float(), targets, reduction="none")
        return (token_loss * token_weights).sum()
    # ~16 MiB of fp32 logits per chunk: below glibc's mmap threshold, so the chunk buffers are reused, not re-faulted
    chunk_rows = max(1, (1 << 22) // weight.shape[0])
    return _LinearCrossEntropy.apply(hidden, weight, targets, token_weights.float(), chunk_rows)


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
        self.c_attn = Conv1D(3 * config.n_embd, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_embd)
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

        attention_interface: Callable = ALL_ATTENTION_FUNCTIONS.get_interface(
            self.config._attn_implementation, eager_attention_forward
        )
        if (
            self.training
            and self.attn_dropout > 0
            and query.device.type == "cpu"
            and self.config._attn_implementation == "sdpa"
        ):
            attention_interface = cpu_dropout_attention_forward
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


_FUSED_ACTIVATIONS = {"gelu_new": "gelu_pytorch_tanh"}


class GPT1MLP(nn.Module):
    def __init__(self, config: GPT1Config):
        super().__init__()
        inner = config.n_inner if config.n_inner is not None else 4 * config.n_embd
        self.c_fc = Conv1D(inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, inner)
        # "gelu_new" (the tanh GELU) as one fused kernel: the Python formula costs ~8 elementwise passes over the
        # (tokens × 3072) activation forward and more backward; the result is the same to float rounding.
        self.act = ACT2FN[_FUSED_ACTIVATIONS.get(config.activation_function, config.activation_function)]
        self.dropout = GPT1Dropout(config.resid_pdrop)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


class GPT1Block(GradientCheckpointingLayer):
    """Post-LayerNorm block of the original code: `n = LN(x + attn(x)); h = LN(n + mlp(n))`."""

    def __init__(self, config: GPT1Config, layer_idx: int):
        super().__init__()
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
    _skip_keys_device_placement = ["past_key_values"]
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

    def save_pretrained(self, save_directory, *args, **kwargs) -> None:
        """`PreTrainedModel.save_pretrained`, with the complete `auto_map` written into the saved config."""
        self.config.auto_map = dict(AUTO_MAP)
        super().save_pretrained(save_directory, *args, **kwargs)

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """GPT-1 init: N(0, initializer_range) for every matrix and embedding, zero biases, LayerNorm gain 1."""
        super()._init_weights(module)
        if isinstance(module, Conv1D):
            init.normal_(module.weight, mean=0.0, std=self.config.initializer_range)
            init.zeros_(module.bias)


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
        **kwargs,
    ) -> BaseModelOutputWithPast:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, seq_len)` or `(batch_size, n, seq_len)`):
                Token ids. Extra leading dimensions (pair orderings, answer choices) are folded into the batch and
                restored on `last_hidden_state`.
            attention_mask (`torch.Tensor` of the same shape as `input_ids`, *optional*):
                1 for real tokens, 0 for padding.
            past_key_values (`Cache`, *optional*):
                Keys and values of earlier positions; only the new tokens are then passed as `input_ids`.
            position_ids (`torch.LongTensor`, *optional*):
                Positions of the tokens; defaults to `past_length + arange(seq_len)`. `generate()` derives them from
                the attention mask so left-padded prompts start at position 0.
        """
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("Pass exactly one of `input_ids` or `inputs_embeds`.")
        input_shape = input_ids.shape if input_ids is not None else inputs_embeds.shape[:-1]
        seq_len = input_shape[-1]
        if input_ids is not None:
            input_ids = input_ids.reshape(-1, seq_len)  # (B, T)
            inputs_embeds = self.tokens_embed(input_ids)
        else:
            inputs_embeds = inputs_embeds.reshape(-1, seq_len, inputs_embeds.shape[-1])
        if attention_mask is not None and attention_mask.ndim != 4:
            attention_mask = attention_mask.reshape(inputs_embeds.shape[0], -1)

        # Training never reuses keys and values: a cache there would only copy every layer's K/V and keep them alive.
        use_cache = use_cache and not self.training
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        if past_length + seq_len > self.config.n_positions:
            raise ValueError(
                f"Sequence length {past_length + seq_len} exceeds n_positions={self.config.n_positions}, the number "
                "of learned position embeddings; truncate the input (e.g. the collator's max_length)."
            )
        if position_ids is None:
            position_ids = torch.arange(past_length, past_length + seq_len, device=inputs_embeds.device)[None]

        hidden_states = self.drop(inputs_embeds + self.positions_embed(position_ids))  # (B, T, C)
        causal_mask = create_causal_mask(
            config=self.config,
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            past_key_values=past_key_values,
            position_ids=position_ids,
        )
        for block in self.h:
            hidden_states = block(hidden_states, causal_mask, past_key_values, position_ids=position_ids, **kwargs)

        return BaseModelOutputWithPast(
            last_hidden_state=hidden_states.view(*input_shape, -1),
            past_key_values=past_key_values if use_cache else None,
        )


def _check_ids(input_ids: torch.Tensor, vocab_size: int) -> None:
    # Out-of-range ids otherwise surface as an opaque index error deep inside the embedding lookup.
    if torch.compiler.is_compiling() or input_ids.numel() == 0:
        return
    low, high = int(input_ids.min()), int(input_ids.max())
    if low < 0 or high >= vocab_size:
        raise ValueError(
            f"input_ids contain {low if low < 0 else high}, outside the embedding table [0, {vocab_size}); "
            "use the tokenizer this model was saved with, or add its special tokens with "
            "hf_gpt1.add_gpt1_special_tokens(tokenizer, model)."
        )


def _check_class_ids(labels: torch.Tensor, n: int, what: str, hint: str = "") -> None:
    # An out-of-range class id otherwise fails inside cross_entropy with an opaque index error.
    if torch.compiler.is_compiling() or labels.numel() == 0:
        return
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= n:
        raise ValueError(f"labels must be {what} in [0, {n}), got values in [{low}, {high}]{hint}.")


class GPT1WithLMHead(GPT1PreTrainedModel):
    """Shared base of every head that owns the tied LM head and can compute the auxiliary L1 loss."""

    _tied_weights_keys = {"lm_head.weight": "transformer.tokens_embed.weight"}

    def __init__(self, config: GPT1Config):
        super().__init__(config)
        self.transformer = GPT1Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head

    def set_output_embeddings(self, new_embeddings: nn.Linear) -> None:
        self.lm_head = new_embeddings

    def auxiliary_lm_loss(
        self, hidden_states: torch.Tensor, lm_labels: torch.Tensor, attention_mask: torch.Tensor | None
    ) -> torch.Tensor:
        """L1 on the task's own inputs, as the original code computes it.

        Targets are `lm_labels[:, 1:]` (unshifted labels, `-100` ignored); a target also needs a real token before
        it, so with left padding the start token is never predicted from padding. `lm_loss_reduction="sequence"`
        averages each sequence's token losses and then the sequences; `"token"` averages all target tokens.

        Args:
            hidden_states (`torch.Tensor` of shape `(N, T, C)`): final hidden states.
            lm_labels (`torch.LongTensor` of shape `(N, T)`): token ids, `-100` where no loss is wanted.
            attention_mask (`torch.Tensor` of shape `(N, T)`, *optional*).
        """
        targets = lm_labels[:, 1:]  # (N, T-1): position t predicts token t+1
        valid = targets != IGNORE_INDEX
        if attention_mask is not None:
            valid = valid & (attention_mask[:, :-1] != 0) & (attention_mask[:, 1:] != 0)
        # Each target token's weight in the mean: 1/all targets ("token"), or 1/(its sequence's targets × the number
        # of sequences with targets) ("sequence").
        counts = valid.sum(-1, keepdim=True)  # (N, 1)
        if self.config.lm_loss_reduction == "token":
            token_weights = valid / counts.sum().clamp(min=1)
        else:
            token_weights = valid / (counts.clamp(min=1) * (counts > 0).sum().clamp(min=1))  # (N, T-1)
        return self._weighted_lm_loss(hidden_states, targets, valid, token_weights)

    def _weighted_lm_loss(
        self, hidden_states: torch.Tensor, targets: torch.Tensor, valid: torch.Tensor, token_weights: torch.Tensor
    ) -> torch.Tensor:
        """`Σ w · CE` where position t of `hidden_states` (N, T, C) predicts `targets[:, t]` (N, T-1); positions where
        `valid` is False carry no loss."""
        hidden_states = hidden_states[:, :-1]
        if torch.compiler.is_compiling():
            # Static shapes for the compiler: project every position; ignored ones carry weight 0.
            return linear_cross_entropy(
                hidden_states.flatten(0, 1),
                self.lm_head.weight,
                targets.clamp(min=0).flatten(),
                token_weights.flatten(),
            )
        # Project only the positions that carry a target: padding never reaches the 40k-wide LM head.
        return linear_cross_entropy(hidden_states[valid], self.lm_head.weight, targets[valid], token_weights[valid])


class GPT1LMHeadModel(GPT1WithLMHead, GenerationMixin):
    """GPT-1 with its tied language-modelling head: the L1 pre-training objective and `generate()` with a KV cache."""

    def __init__(self, config: GPT1Config):
        super().__init__(config)
        # The class name maps to no loss type: name it, so `loss_function` neither warns on every lookup nor breaks
        # the graph of a compiled forward there.
        self.loss_type = "ForCausalLM"
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
        **kwargs,
    ) -> CausalLMOutputWithPast:
        r"""
        Args:
            labels (`torch.LongTensor` of shape `(batch_size, seq_len)`, *optional*):
                Targets for L1, unshifted (`labels = input_ids` works; the model shifts them); `-100` is ignored.
                The loss is the mean over all target tokens, the pre-training objective. In training mode (and not
                under `torch.compile`) the loss is fused with the LM head and `logits` is `None`: no `(B, T, V)`
                logits are built.
            logits_to_keep (`int` or `torch.Tensor`, defaults to 0):
                Compute logits for the last `logits_to_keep` positions only (0 = all), as `generate()` does.
        """
        if input_ids is not None:
            _check_ids(input_ids, self.config.vocab_size)
        outputs: BaseModelOutputWithPast = self.transformer(
            input_ids,
            attention_mask=attention_mask,
            past_key_values=past_key_values,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            **kwargs,
        )
        hidden_states = outputs.last_hidden_state
        if labels is not None and self.training and not torch.compiler.is_compiling():
            # Training needs only the loss: the fused loss never materialises the (B, T, V) logits (nor returns them).
            targets = labels[:, 1:]
            valid = targets != IGNORE_INDEX
            # Trainer's `num_items_in_batch` (targets over all accumulated micro-batches) keeps gradient
            # accumulation an exact mean, as `ForCausalLMLoss` does.
            total = kwargs.get("num_items_in_batch")
            total = valid.sum().clamp(min=1) if total is None else total
            loss = self._weighted_lm_loss(hidden_states, targets, valid, valid / total)
            return CausalLMOutputWithPast(
                loss=loss,
                past_key_values=outputs.past_key_values,
                hidden_states=outputs.hidden_states,
                attentions=outputs.attentions,
            )
        logits = self.lm_head(slice_logits_to_keep(hidden_states, logits_to_keep))
        loss = None
        if labels is not None:
            loss = self.loss_function(logits, labels, vocab_size=self.config.vocab_size, **kwargs)
        return CausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            past_key_values=outputs.past_key_values,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
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


class GPT1ForFineTuning(GPT1WithLMHead):
    """Shared machinery of the classification and multiple-choice heads: pooling, classifier and L3."""

    # L3 is a mean of per-sequence means: Trainer must not pass `num_items_in_batch` (a token count) to rescale it.
    accepts_loss_kwargs = False

    def __init__(self, config: GPT1Config, num_outputs: int):
        super().__init__(config)
        self.clf_dropout = config.clf_pdrop
        self.score = nn.Linear(config.n_embd, num_outputs)

    def _encode(
        self,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None,
        position_ids: torch.LongTensor | None,
        **kwargs,
    ) -> tuple[BaseModelOutputWithPast, torch.Tensor]:
        """Runs the decoder and returns its outputs and the hidden state at each sequence's extract token."""
        if self.config.extract_token_id is None:
            raise ValueError(
                "config.extract_token_id is not set: add the GPT-1 special tokens with "
                "hf_gpt1.add_gpt1_special_tokens(tokenizer, model) before fine-tuning."
            )
        _check_ids(input_ids, self.config.vocab_size)
        is_extract = input_ids == self.config.extract_token_id  # (..., T)
        if not torch.compiler.is_compiling() and not bool(is_extract.any(-1).all()):
            raise ValueError(
                f"A sequence has no extract token (id {self.config.extract_token_id}, `_classify_`): the classifier "
                "reads the hidden state there. Build inputs with the tokenizer from add_gpt1_special_tokens or the "
                "hf_gpt1.transforms collators, and keep truncation from cutting it off."
            )
        outputs = self.transformer(
            input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False, **kwargs
        )
        hidden = outputs.last_hidden_state  # (..., T, C)
        # argmax returns the first maximum: the first `_classify_` position, as in the original code.
        extract_index = is_extract.int().argmax(-1)  # (...)
        pooled = hidden.gather(-2, extract_index[..., None, None].expand(*extract_index.shape, 1, hidden.shape[-1]))
        return outputs, pooled.squeeze(-2)  # (..., C)

    def _lm_term(
        self,
        outputs: BaseModelOutputWithPast,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None,
        lm_labels: torch.LongTensor | None,
    ) -> torch.Tensor | None:
        if self.config.lm_coef == 0:
            return None
        seq_len = input_ids.shape[-1]
        labels = lm_labels if lm_labels is not None else input_ids
        mask = attention_mask.reshape(-1, seq_len) if attention_mask is not None else None
        return self.auxiliary_lm_loss(
            outputs.last_hidden_state.reshape(-1, seq_len, self.config.n_embd), labels.reshape(-1, seq_len), mask
        )

    def _output(
        self,
        outputs: BaseModelOutputWithPast,
        logits: torch.Tensor,
        clf_loss: torch.Tensor | None,
        lm_loss: torch.Tensor | None,
    ) -> GPT1ClassifierOutput:
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


def swap_pair(input_ids: torch.LongTensor, delimiter_token_id: int, extract_token_id: int) -> torch.LongTensor:
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


class GPT1ForSequenceClassification(GPT1ForFineTuning):
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
        lm_labels: torch.LongTensor | None = None,
        **kwargs,
    ) -> GPT1ClassifierOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, seq_len)`, or `(batch_size, 2, seq_len)` for
                similarity models): right-padded sequences built by `hf_gpt1.transforms`, each with an extract token.
            labels (`torch.Tensor` of shape `(batch_size,)`, *optional*):
                Class ids in `[0, num_labels)`, or float targets when `num_labels == 1`.
            lm_labels (`torch.LongTensor`, same shape as `input_ids`, *optional*):
                Targets of the auxiliary L1 (unshifted, `-100` ignored). Default: every real token of `input_ids`
                after the start token (padding excluded), the original code's rule.
        """
        if input_ids is None:
            raise ValueError("GPT1ForSequenceClassification needs `input_ids`: the pooling position is found in them.")
        self._check_input_format(input_ids)
        if self.config.similarity and input_ids.ndim == 2:
            input_ids, attention_mask, lm_labels = self._both_orderings(input_ids, attention_mask, lm_labels)
        outputs, pooled = self._encode(input_ids, attention_mask, position_ids, **kwargs)
        if self.config.similarity:
            if pooled.ndim != 3 or pooled.shape[1] != 2:
                raise ValueError(
                    f"A similarity model expects input_ids of shape (batch, 2, seq), got {tuple(input_ids.shape)}."
                )
            pooled = pooled.sum(1)  # the paper adds the two orderings' extract-token states
        elif pooled.ndim != 2:
            raise ValueError(
                f"input_ids must be (batch, seq), got {tuple(input_ids.shape)}; (batch, 2, seq) needs "
                "config.similarity=True."
            )
        logits = self.score(F.dropout(pooled, self.clf_dropout, self.training))  # (B, num_labels)

        clf_loss = lm_loss = None
        if labels is not None:
            clf_loss = self._classification_loss(logits, labels)
        if labels is not None or lm_labels is not None:
            lm_loss = self._lm_term(outputs, input_ids, attention_mask, lm_labels)
        return self._output(outputs, logits, clf_loss, lm_loss)

    def _check_input_format(self, input_ids: torch.LongTensor) -> None:
        # A pair fed to a single-sentence model (or the reverse) would be classified silently and wrongly.
        fmt, delimiter = self.config.input_format, self.config.delimiter_token_id
        if fmt is None or delimiter is None or torch.compiler.is_compiling():
            return
        has_pair = (input_ids == delimiter).any(-1)
        if fmt == "classification" and bool(has_pair.any()):
            raise ValueError(
                "This model was fine-tuned on single sentences (input_format='classification') but got a sentence "
                "pair (a delimiter token); give one text per example."
            )
        if fmt in ("entailment", "similarity") and not bool(has_pair.all()):
            raise ValueError(
                f"This model was fine-tuned on sentence pairs (input_format={fmt!r}) but got a single sentence; "
                "give {'text': a, 'text_pair': b} to the pipeline, or tokenizer(a, b)."
            )

    def _both_orderings(
        self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None, lm_labels: torch.LongTensor | None
    ) -> tuple[torch.LongTensor, torch.Tensor | None, torch.LongTensor | None]:
        if self.config.delimiter_token_id is None or self.config.extract_token_id is None:
            raise ValueError("A similarity model needs config.delimiter_token_id and config.extract_token_id.")
        swapped = swap_pair(input_ids, self.config.delimiter_token_id, self.config.extract_token_id)
        input_ids = torch.stack([input_ids, swapped], dim=1)  # (B, 2, T)
        if attention_mask is not None:
            attention_mask = torch.stack([attention_mask, attention_mask], dim=1)  # same length, same padding
        if lm_labels is not None:
            swapped_labels = swapped.masked_fill(lm_labels == IGNORE_INDEX, IGNORE_INDEX)
            lm_labels = torch.stack([lm_labels, swapped_labels], dim=1)
        return input_ids, attention_mask, lm_labels

    def _classification_loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.config.problem_type is None:
            if self.num_labels == 1:
                self.config.problem_type = "regression"
            elif labels.dtype in (torch.long, torch.int):
                self.config.problem_type = "single_label_classification"
            else:
                self.config.problem_type = "multi_label_classification"
        if self.config.problem_type == "regression":
            if not torch.compiler.is_compiling() and not bool(torch.isfinite(labels).all()):
                raise ValueError("Regression labels contain NaN or inf; clean or drop those rows.")
            return F.mse_loss(logits.squeeze(-1).float(), labels.float())
        if self.config.problem_type == "single_label_classification":
            _check_class_ids(labels, self.num_labels, "class ids", "; check the label column or config.num_labels")
            return F.cross_entropy(logits.float(), labels.long())
        return F.binary_cross_entropy_with_logits(logits.float(), labels.float())


class GPT1ForMultipleChoice(GPT1ForFineTuning):
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
        lm_labels: torch.LongTensor | None = None,
        **kwargs,
    ) -> GPT1ClassifierOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, num_choices, seq_len)`):
                One right-padded sequence per answer, each ending in the extract token.
            labels (`torch.LongTensor` of shape `(batch_size,)`, *optional*): index of the right answer.
            lm_labels (`torch.LongTensor`, same shape as `input_ids`, *optional*): targets of the auxiliary L1;
                default: every real token after the start token.
        """
        if input_ids is None or input_ids.ndim != 3:
            shape = None if input_ids is None else tuple(input_ids.shape)
            raise ValueError(
                f"GPT1ForMultipleChoice expects input_ids of shape (batch, num_choices, seq), got {shape}."
            )
        outputs, pooled = self._encode(input_ids, attention_mask, position_ids, **kwargs)  # (B, K, C)
        if self.training and self.clf_dropout > 0:
            # One dropout mask per example, broadcast over its choices (noise shape (B, 1, C) in the original).
            keep = torch.ones_like(pooled[:, :1])
            pooled = pooled * F.dropout(keep, self.clf_dropout, training=True)
        logits = self.score(pooled).squeeze(-1)  # (B, K)

        clf_loss = lm_loss = None
        if labels is not None:
            _check_class_ids(labels, logits.shape[-1], "choice indices")
            clf_loss = F.cross_entropy(logits.float(), labels.long())
        if labels is not None or lm_labels is not None:
            lm_loss = self._lm_term(outputs, input_ids, attention_mask, lm_labels)
        return self._output(outputs, logits, clf_loss, lm_loss)


__all__ = [
    "GPT1ClassifierOutput",
    "GPT1ForMultipleChoice",
    "GPT1ForSequenceClassification",
    "GPT1LMHeadModel",
    "GPT1Model",
    "GPT1PreTrainedModel",
    "swap_pair",
]
