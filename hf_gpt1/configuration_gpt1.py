# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT-1 configuration: the paper's architecture plus the fine-tuning fields of its L3 objective."""

from __future__ import annotations

from typing import Any

import transformers
from huggingface_hub.dataclasses import strict
from packaging import version
from transformers import PreTrainedConfig
from transformers.activations import ACT2FN

from .formats import INPUT_FORMATS

MIN_TRANSFORMERS_VERSION = "5.23.0"
"""The oldest transformers this code runs on (it uses machinery of transformers 5.23); recorded in model cards."""


def check_transformers_version() -> None:
    """Refuses, at import, a transformers older than [`MIN_TRANSFORMERS_VERSION`].

    A model pushed with its code runs that code under whatever transformers the user has; an older one would fail
    deep inside the model with a missing name.
    """
    installed = transformers.__version__
    if version.parse(installed) < version.parse(MIN_TRANSFORMERS_VERSION):
        raise ImportError(
            f"GPT-1 (hf_gpt1) code needs transformers>={MIN_TRANSFORMERS_VERSION}, but {installed} is installed: "
            f"pip install -U 'transformers>={MIN_TRANSFORMERS_VERSION}'."
        )


check_transformers_version()

# transformers' openai-gpt config names its tanh-approximate GELU "gelu" (its own ACT_FNS table), while
# transformers' ACT2FN calls that function "gelu_new"; this maps openai-gpt `afn` values to ours.
_OPENAI_AFN = {"gelu": "gelu_new", "relu": "relu", "silu": "silu", "swish": "silu"}
# openai-gpt config keys that only its DoubleHeads summary module reads; our heads are fixed by the paper.
_OPENAI_ONLY_KEYS = (
    "afn",
    "summary_type",
    "summary_use_proj",
    "summary_activation",
    "summary_proj_to_labels",
    "summary_first_dropout",
    "n_ctx",
    "predict_special_tokens",
)
LM_LOSS_REDUCTIONS = ("sequence", "token")
PROJECTION_LAYOUTS = ("linear", "conv1d")


@strict
class GPT1Config(PreTrainedConfig):
    r"""
    Configuration of a GPT-1 model (Radford et al. 2018, "Improving Language Understanding by Generative
    Pre-Training"). The defaults are the paper's: a 12-layer, 768-wide post-LayerNorm decoder with 12 heads,
    3072-wide MLPs, tanh-GELU, learned positions over 512 tokens and a 40,478-token BPE vocabulary.

    Args:
        vocab_size (`int`, defaults to 40478):
            Number of token embeddings (the BPE vocabulary plus any added special tokens).
        n_positions (`int`, defaults to 512):
            Number of learned position embeddings, i.e. the longest sequence the model reads.
        n_embd (`int`, defaults to 768):
            Width of the residual stream.
        n_layer (`int`, defaults to 12):
            Number of transformer blocks.
        n_head (`int`, defaults to 12):
            Number of attention heads; must divide `n_embd`.
        n_inner (`int`, *optional*):
            Width of the MLP; `None` means `4 * n_embd` (3072 for the paper's model).
        activation_function (`str`, defaults to `"gelu_new"`):
            MLP non-linearity, a key of `transformers.activations.ACT2FN`. `"gelu_new"` is the tanh approximation
            of GELU that the original code uses.
        resid_pdrop / embd_pdrop / attn_pdrop (`float`, defaults to 0.1):
            Dropout on residual branches, on the summed embeddings and on attention probabilities.
        layer_norm_epsilon (`float`, defaults to 1e-5):
            LayerNorm epsilon (the original code's value).
        initializer_range (`float`, defaults to 0.02):
            Standard deviation of the N(0, std) initialization of every matrix and embedding.
        lm_coef (`float`, defaults to 0.5):
            λ of the fine-tuning objective L3 = L2 + λ·L1; 0 turns the auxiliary language-model loss off.
        clf_pdrop (`float`, defaults to 0.1):
            Dropout applied to the pooled extract-token state before the classifier.
        clf_label_smoothing (`float`, defaults to 0.0):
            Label smoothing of the classification loss L2 (inside L3 = L2 + λ·L1); 0 is the paper's plain
            cross-entropy.
        lm_loss_reduction (`str`, defaults to `"sequence"`):
            How the auxiliary L1 is averaged: `"sequence"` averages over each sequence's targets and then over
            sequences (the original code); `"token"` averages over all target tokens of the batch.
        input_format (`str`, *optional*):
            The task format a classification model was fine-tuned on (`"classification"`, `"entailment"`,
            `"similarity"`); set by the recipes so that inference refuses a sentence pair given to a single-sentence
            model, and a single sentence given to a pair model.
        segment_cap (`int`, *optional*):
            Multiple choice: the per-segment cap (context and each answer) the model was fine-tuned with (the
            original's Story Cloze rule); the multiple-choice pipeline applies it, so serving truncates as training
            and the recipe's predictions did.
        finetuned_task (`str`, *optional*):
            The task (an `hf_gpt1.data.tasks` name) the classification or multiple-choice head was fine-tuned on, with
            the labels in `id2label`; set by the recipes, whose prediction-only runs refuse a head fine-tuned for
            another task or never fine-tuned.
        original_embedding_table (`bool`, defaults to `False`):
            Treat the token and position embeddings as the original code's single table `we` (tokens, special tokens,
            positions): dropout (`embd_pdrop`) drops elements of the whole table once per forward pass, so every
            occurrence of a token in the batch shares one mask, instead of each position of the summed embedding;
            and the training loss L1 normalises over every row of that (dropped) table, which is its output matrix, as
            the original's `lm_logits = h · weᵀ`. Returned logits, generation and eval-mode losses (perplexity) cover
            the token rows only. `False` is transformers' openai-gpt convention; the recipes turn it on. The two
            layouts give the same outputs in eval mode.
        similarity (`bool`, defaults to `False`):
            Sequence classification reads both orderings of a sentence pair and adds the two extract-token states
            before the classifier (the paper's similarity transform, used for STS-B, MRPC and QQP). Follows from
            `input_format` when that is set (true for `"similarity"` only; a contradicting `True` is refused).
        projection_layout (`str`, defaults to `"linear"`):
            How the checkpoint files this config came with store the blocks' projection weights: `"linear"`
            (`nn.Linear`'s `(out, in)`, what this version saves) or `"conv1d"` (transformers' legacy `Conv1D`,
            `(in, out)`: `openai-gpt` checkpoints and hf_gpt1 0.2), which loading converts. A config file
            without this field is one of those, so reading it gives `"conv1d"`.
        start_token_id / delimiter_token_id / extract_token_id (`int`, *optional*):
            Ids of `_start_`, `_delimiter_` and `_classify_`; set by `hf_gpt1.add_gpt1_special_tokens`.

    Example:

    ```python
    >>> from hf_gpt1 import GPT1Config, GPT1LMHeadModel
    >>> config = GPT1Config(n_layer=2, n_embd=64, n_head=4)
    >>> model = GPT1LMHeadModel(config)
    ```"""

    model_type = "gpt1"
    # Trainer's prediction loop returns every other output as "logits": keep only the classifier's.
    keys_to_ignore_at_inference = ["cache", "past_key_values", "clf_loss", "lm_loss"]
    attribute_map = {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    }

    vocab_size: int = 40478
    n_positions: int = 512
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    n_inner: int | None = None
    activation_function: str = "gelu_new"
    resid_pdrop: float | int = 0.1
    embd_pdrop: float | int = 0.1
    attn_pdrop: float | int = 0.1
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    lm_coef: float | int = 0.5
    clf_pdrop: float | int = 0.1
    clf_label_smoothing: float | int = 0.0
    lm_loss_reduction: str = "sequence"
    original_embedding_table: bool = False
    similarity: bool = False
    projection_layout: str = "linear"
    input_format: str | None = None
    finetuned_task: str | None = None
    segment_cap: int | None = None
    start_token_id: int | None = None
    delimiter_token_id: int | None = None
    extract_token_id: int | None = None
    pad_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    tie_word_embeddings: bool = True
    use_cache: bool = True

    def __post_init__(self, **kwargs):
        # One fact, one field: a model fine-tuned on a format reads both orderings exactly when that format does.
        if self.input_format in INPUT_FORMATS:
            if self.similarity and not self.format_fields(self.input_format)["similarity"]:
                raise ValueError(
                    f"GPT1Config: similarity=True contradicts input_format {self.input_format!r}, whose sequences "
                    "are read in one ordering: give input_format alone (similarity follows from it)."
                )
            self.similarity = self.format_fields(self.input_format)["similarity"]
        super().__post_init__(**kwargs)

    @staticmethod
    def format_fields(input_format: str) -> dict[str, Any]:
        """The fields a format sets: `input_format`, and `similarity`, which follows from it. What to pass when an
        existing config changes format (`from_pretrained(path, **GPT1Config.format_fields("entailment"))`, whose
        keyword arguments are set after the config is built)."""
        return {"input_format": input_format, "similarity": INPUT_FORMATS[input_format].orderings == 2}

    def validate_architecture(self):
        """Part of `@strict`-powered validation: reject values the model cannot be built with.

        Messages read `GPT1Config: <field> <value> ...` so that the recipes, which validate their flags with these same
        rules, can name the flag instead of the field (`hf_gpt1.training.arguments.check_config_fields`).
        """
        for name in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"):
            if getattr(self, name) < 1:
                raise ValueError(f"GPT1Config: {name} {getattr(self, name)} must be a positive integer.")
        if self.n_embd % self.n_head != 0:
            divisors = [d for d in range(1, self.n_embd + 1) if self.n_embd % d == 0]
            raise ValueError(
                f"GPT1Config: n_embd {self.n_embd} is not divisible by n_head {self.n_head}; choose n_head among "
                f"{divisors[:12]}."
            )
        if self.n_inner is not None and self.n_inner < 1:
            raise ValueError(f"GPT1Config: n_inner {self.n_inner} must be None or a positive integer.")
        if self.activation_function not in ACT2FN:
            raise ValueError(
                f"GPT1Config: activation_function {self.activation_function!r} is unknown; use a key of "
                "transformers.activations.ACT2FN such as 'gelu_new' (GPT-1's tanh GELU)."
            )
        for name in ("resid_pdrop", "embd_pdrop", "attn_pdrop", "clf_pdrop", "clf_label_smoothing"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"GPT1Config: {name} {getattr(self, name)} must be in [0, 1).")
        if self.lm_coef < 0:
            raise ValueError(f"GPT1Config: lm_coef {self.lm_coef} must be >= 0 (λ of L3 = L2 + λ·L1; 0 disables L1).")
        if self.lm_loss_reduction not in LM_LOSS_REDUCTIONS:
            raise ValueError(
                f"GPT1Config: lm_loss_reduction {self.lm_loss_reduction!r} must be one of {LM_LOSS_REDUCTIONS}."
            )
        if self.projection_layout not in PROJECTION_LAYOUTS:
            raise ValueError(
                f"GPT1Config: projection_layout {self.projection_layout!r} must be one of {PROJECTION_LAYOUTS}."
            )
        if self.input_format is not None and self.input_format not in INPUT_FORMATS:
            raise ValueError(
                f"GPT1Config: input_format {self.input_format!r} must be None or one of {list(INPUT_FORMATS)}."
            )
        if self.initializer_range <= 0:
            raise ValueError(f"GPT1Config: initializer_range {self.initializer_range} must be > 0.")

    @classmethod
    def get_config_dict(cls, *args, **kwargs) -> tuple[dict[str, Any], dict[str, Any]]:
        """`PretrainedConfig.get_config_dict`, with an `openai-gpt` config translated as it is read: loading the
        original checkpoint is expected, not the "model of type openai-gpt ... can yield errors" that transformers
        warns of for a config of another model type."""
        config_dict, kwargs = super().get_config_dict(*args, **kwargs)
        if config_dict.get("model_type") == "openai-gpt":
            config_dict = cls._translate_openai_gpt(config_dict)
        return config_dict, kwargs

    @classmethod
    def from_dict(cls, config_dict: dict[str, Any], **kwargs) -> GPT1Config:
        """Builds a config from a dict; an `openai-gpt` config (transformers' `OpenAIGPTConfig`) is translated."""
        if config_dict.get("model_type") == "openai-gpt":
            config_dict = cls._translate_openai_gpt(config_dict)
        # Files saved before the field existed store the projections as Conv1D.
        config_dict = {"projection_layout": "conv1d", **config_dict}
        return super().from_dict(config_dict, **kwargs)

    @staticmethod
    def _translate_openai_gpt(config_dict: dict[str, Any]) -> dict[str, Any]:
        translated = {k: v for k, v in config_dict.items() if k not in _OPENAI_ONLY_KEYS}
        afn = config_dict.get("afn", "gelu")
        if afn not in _OPENAI_AFN:
            raise ValueError(f"openai-gpt config has afn={afn!r}; supported values are {sorted(_OPENAI_AFN)}.")
        translated["activation_function"] = _OPENAI_AFN[afn]
        translated["model_type"] = GPT1Config.model_type
        # Heads are ours now: the openai-gpt architectures list would name classes this package does not have.
        translated.pop("architectures", None)
        return translated


__all__ = ["MIN_TRANSFORMERS_VERSION", "GPT1Config", "check_transformers_version"]
