# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Inference pipelines for GPT-1 fine-tuned models: multiple choice as a registered `pipeline()` task.

Text classification, entailment, similarity and regression need no class of ours: the saved tokenizer's
post-processor (installed by `hf_gpt1.add_gpt1_special_tokens`) turns `tokenizer(a)` into `_start_ a _classify_` and
`tokenizer(a, b)` into `_start_ a _delimiter_ b _classify_`, a similarity model builds the swapped ordering itself,
and a regression model's config says `problem_type="regression"`, so the stock pipeline serves all of them:

```python
>>> classifier = pipeline("text-classification", model="runs/rte")
>>> classifier({"text": "A man is sleeping.", "text_pair": "Nobody sleeps."})
>>> pipeline("text-classification", model="runs/stsb")({"text": a, "text_pair": b})  # raw score, no sigmoid
```

Multiple choice has no stock task; [`GPT1MultipleChoicePipeline`] is registered as `"multiple-choice"` when
`hf_gpt1` is imported:

```python
>>> chooser = pipeline("multiple-choice", model="runs/story_cloze")
>>> chooser("Karen was assigned a roommate. ...", answers=["Karen became friends with her.", "Karen hated pizza."])
[{'answer': 'Karen became friends with her.', 'score': 0.93}, {'answer': 'Karen hated pizza.', 'score': 0.07}]
```

This module imports nothing but transformers, torch, numpy and the dependency-free `formats.py` (the same
transforms and truncation the fine-tuning collators use): `hf_gpt1.tools.hub.push_finetuned` ships both beside a
multiple-choice model, so `pipeline("multiple-choice", model=repo_id, trust_remote_code=True)` works in a process
without hf_gpt1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from transformers import AutoModelForMultipleChoice, Pipeline
from transformers.pipelines import PIPELINE_REGISTRY

from .formats import SPECIAL_TOKEN_FIELDS, multiple_choice
from .modeling_gpt1 import head

MULTIPLE_CHOICE_TASK = head("GPT1ForMultipleChoice").pipeline_tag  # "multiple-choice"
# Config field -> token string of the start, delimiter and extract tokens (the ones a task input holds).
_TASK_TOKENS = {field: token for field, token in SPECIAL_TOKEN_FIELDS.items() if field != "pad_token_id"}


def gpt1_special_token_ids(tokenizer: Any, config: Any) -> dict[str, int]:
    """The start / delimiter / extract ids of a GPT-1 tokenizer, checked against the model's config.

    Args:
        tokenizer (`PreTrainedTokenizerBase`): The tokenizer saved with the model.
        config (`GPT1Config`): The model's config (`start_token_id`, `delimiter_token_id`, `extract_token_id`).

    Returns:
        `dict[str, int]`: `{"start_token_id": ..., "delimiter_token_id": ..., "extract_token_id": ...}`.

    Raises:
        `ValueError`: The tokenizer lacks a GPT-1 special token, or its ids differ from the ones the model was
            fine-tuned with (a tokenizer of another checkpoint).
    """
    if tokenizer is None:
        raise ValueError("A GPT-1 pipeline needs the tokenizer saved with the model; pass tokenizer=... .")
    vocab = tokenizer.get_vocab()
    missing = [token for token in _TASK_TOKENS.values() if token not in vocab]
    if missing:
        raise ValueError(
            f"The tokenizer has no GPT-1 special token(s) {missing}, so it cannot build the model's inputs. Add them "
            "with hf_gpt1.add_gpt1_special_tokens(tokenizer, model) and save the tokenizer with the model (the "
            "fine-tuning recipes do)."
        )
    ids = {name: vocab[token] for name, token in _TASK_TOKENS.items()}
    expected = {name: getattr(config, name, None) for name in _TASK_TOKENS}
    if any(value is not None and value != ids[name] for name, value in expected.items()):
        raise ValueError(
            f"The tokenizer's special-token ids {ids} differ from the model's {expected}: use the tokenizer that was "
            "saved with this model."
        )
    return ids


class GPT1MultipleChoicePipeline(Pipeline):
    """Scores the answers to a context with a GPT-1 multiple-choice model (Story Cloze, RACE, SWAG).

    Each answer becomes `_start_ context _delimiter_ answer _classify_` as in fine-tuning (same tokenization:
    segments without special tokens, literal special-token strings in the text split as plain text; same truncation),
    and the model gives one logit per answer.

    Call it with `pipe(context, answers=[...])`, `pipe({"context": ..., "answers": [...]})` or a list of such dicts.
    For RACE, pass the article and the question joined by a space as the context (the recipe's context columns).

    Args:
        max_length (`int`, *optional*):
            Longest sequence; defaults to the smaller of the model's `n_positions` and the tokenizer's
            `model_max_length`. Pass the recipe's `--max_seq_length` to reproduce its evaluation on long inputs.
        segment_cap (`int`, *optional*):
            Cut the context and each answer to this many tokens first; default: the cap the model was fine-tuned
            with (`config.segment_cap`, which the recipes save: `--segment_cap`, or the Story Cloze protocol's).
        function_to_apply (`str`, *optional*, defaults to `"softmax"`):
            `"softmax"` gives probabilities over the answers; `"none"` gives the raw logits the recipe's accuracy is
            computed from (the argmax is the same).

    Returns:
        One list per example, in the order the answers were given: `[{"answer": str, "score": float}, ...]`.
    """

    _load_processor = False
    _load_image_processor = False
    _load_feature_extractor = False
    _load_tokenizer = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._special_ids = gpt1_special_token_ids(self.tokenizer, self.model.config)
        pad_id = self.tokenizer.pad_token_id
        self._pad_id = pad_id if pad_id is not None else getattr(self.model.config, "pad_token_id", None) or 0

    def _sanitize_parameters(
        self,
        max_length: int | None = None,
        segment_cap: int | None = None,
        function_to_apply: str | None = None,
        **kwargs,
    ) -> tuple[dict, dict, dict]:
        preprocess: dict[str, Any] = {}
        if max_length is not None:
            preprocess["max_length"] = max_length
        if segment_cap is not None:
            preprocess["segment_cap"] = segment_cap
        postprocess: dict[str, Any] = {}
        if function_to_apply is not None:
            if function_to_apply not in ("softmax", "none"):
                raise ValueError(f"function_to_apply must be 'softmax' or 'none', got {function_to_apply!r}.")
            postprocess["function_to_apply"] = function_to_apply
        return preprocess, {}, postprocess

    def __call__(
        self,
        inputs: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        answers: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]] | list[list[dict[str, Any]]]:
        """Scores the answers of one example (`context` + `answers=`, or one dict) or of a list of dicts.

        Args:
            inputs (`str`, `dict` or `list[dict]`): The context (then `answers` is required), or
                `{"context": str, "answers": list[str]}`, or a list of those dicts.
            answers (`list[str]`, *optional*): The candidate answers when `inputs` is the context.
        """
        if isinstance(inputs, str):
            if answers is None:
                raise ValueError("Pass the candidate answers: pipe(context, answers=[...]).")
            inputs = {"context": inputs, "answers": answers}
        elif answers is not None:
            raise ValueError("answers= goes with a context string; a dict input carries its own 'answers'.")
        return super().__call__(inputs, **kwargs)

    def preprocess(
        self, inputs: Mapping[str, Any], max_length: int | None = None, segment_cap: int | None = None
    ) -> dict[str, Any]:
        context, answers = _unpack_example(inputs)
        config = self.model.config
        limit = min(config.n_positions, self.tokenizer.model_max_length)
        max_length = limit if max_length is None else max_length
        if max_length > config.n_positions:
            raise ValueError(f"max_length={max_length} exceeds the model's n_positions={config.n_positions}.")
        if segment_cap is None:  # the cap the model was fine-tuned with (the recipes save it), if any
            segment_cap = getattr(config, "segment_cap", None)
        # Segments are tokenized as the fine-tuning preprocessor does: no special tokens, and a literal
        # "_classify_" in the text stays text instead of becoming a second extract token.
        encode = {"add_special_tokens": False, "split_special_tokens": True, "verbose": False}
        ctx = self.tokenizer(context, **encode)["input_ids"]
        choices = self.tokenizer(list(answers), **encode)["input_ids"]
        sequences = multiple_choice(ctx, choices, max_length=max_length, segment_cap=segment_cap, **self._special_ids)
        width = max(map(len, sequences))
        input_ids = torch.full((1, len(sequences), width), self._pad_id, dtype=torch.long)
        attention_mask = torch.zeros_like(input_ids)
        for k, ids in enumerate(sequences):  # right padding: the classifier reads the first extract token
            input_ids[0, k, : len(ids)] = torch.tensor(ids)
            attention_mask[0, k, : len(ids)] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask, "answers": list(answers)}

    def _forward(self, model_inputs: dict[str, Any]) -> dict[str, Any]:
        answers = model_inputs.pop("answers")
        return {"logits": self.model(**model_inputs).logits, "answers": answers}

    def postprocess(self, model_outputs: dict[str, Any], function_to_apply: str = "softmax") -> list[dict[str, Any]]:
        logits = model_outputs["logits"][0].float().numpy()  # (num_choices,)
        if function_to_apply == "softmax":
            exp = np.exp(logits - logits.max())
            scores = exp / exp.sum()
        else:
            scores = logits
        return [{"answer": answer, "score": float(s)} for answer, s in zip(model_outputs["answers"], scores)]


def _unpack_example(inputs: Any) -> tuple[str, list[str]]:
    if not isinstance(inputs, Mapping) or set(inputs) != {"context", "answers"}:
        raise ValueError(
            f"A multiple-choice example is {{'context': str, 'answers': [str, ...]}}, got {inputs!r:.80}; or call "
            "pipe(context, answers=[...])."
        )
    context, answers = inputs["context"], inputs["answers"]
    if not isinstance(context, str):
        raise ValueError(f"The context must be a string, got {type(context).__name__}.")
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise ValueError(f"answers must be a list of strings, got {answers!r:.80}.")
    if len(answers) == 0:
        raise ValueError("The list of answers is empty: give at least one answer to score.")
    if not all(isinstance(answer, str) for answer in answers):
        raise ValueError(f"Every answer must be a string, got {answers!r:.80}.")
    return context, list(answers)


def register_pipelines() -> None:
    """Registers `"multiple-choice"` with transformers' `pipeline()` (done by `import hf_gpt1`)."""
    if PIPELINE_REGISTRY.supported_tasks.get(MULTIPLE_CHOICE_TASK, {}).get("impl") is GPT1MultipleChoicePipeline:
        return
    PIPELINE_REGISTRY.register_pipeline(
        MULTIPLE_CHOICE_TASK,
        pipeline_class=GPT1MultipleChoicePipeline,
        pt_model=AutoModelForMultipleChoice,
        type="text",
    )


__all__ = [
    "MULTIPLE_CHOICE_TASK",
    "GPT1MultipleChoicePipeline",
    "gpt1_special_token_ids",
    "register_pipelines",
]
