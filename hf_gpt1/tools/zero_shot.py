# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The paper's zero-shot heuristics (section 5, Fig. 2 right): task performance of a GPT-1 language model before any
fine-tuning, read off its next-token probabilities.

* CoLA: a sentence's average token log-probability, thresholded (acceptable above the threshold).
* SST-2: append "very" to the sentence and compare the probabilities of "positive" and "negative" as the next word.
* RACE: the answer with the highest average token log-probability given the document and the question.
* DPRD / WNLI: substitute the candidate for the pronoun and score the average log-probability of the rest of the
  sentence after it; the candidate that makes the rest most likely is the referent.

Inputs are raw text without GPT-1's special tokens, as in pre-training. A sentence's first token has no context, so
"average token log-probability" averages over the tokens after it. `evaluate_zero_shot` scores a dataset with the
task's GLUE metric; the experiment driver calls it on successive pre-training checkpoints.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import datasets
import numpy as np
import torch
from torch.nn import functional as F

from ..data.metrics import load_metric, prediction_warnings, score_with_baselines
from ..data.tasks import TaskSpec, get_task

ZERO_SHOT_TASKS: tuple[str, ...] = ("cola", "sst2", "race", "wnli")
SST2_CUE, SST2_POSITIVE, SST2_NEGATIVE = "very", "positive", "negative"

__all__ = [
    "ZERO_SHOT_TASKS",
    "cola_scores",
    "continuation_logprobs",
    "evaluate_zero_shot",
    "fit_threshold",
    "race_scores",
    "sst2_scores",
    "substitution_scores",
    "wnli_predictions",
]


def _encode(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    if not texts:
        return []
    return tokenizer(list(texts), add_special_tokens=False, split_special_tokens=True, verbose=False)["input_ids"]


@torch.no_grad()
def continuation_logprobs(
    model: torch.nn.Module,
    contexts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    batch_size: int = 16,
) -> list[torch.Tensor]:
    """log p(token | everything before it) for every token of each continuation, given its context.

    A context too long for the model's `n_positions` loses its oldest tokens (the continuation is kept whole).

    Args:
        model (`GPT1LMHeadModel`): The language model (put in eval mode here).
        contexts (`Sequence[Sequence[int]]`): Token ids before each continuation; at least one token each.
        continuations (`Sequence[Sequence[int]]`): Token ids to score.
        batch_size (`int`): Sequences per forward pass.

    Returns:
        `list[torch.Tensor]`: One float tensor of shape `(len(continuation),)` per pair.
    """
    model.eval()
    n_positions = model.config.n_positions
    pairs = []
    for context, continuation in zip(contexts, continuations, strict=True):
        if not context:
            raise ValueError("Every continuation needs at least one context token to be predicted from.")
        if len(continuation) >= n_positions:
            raise ValueError(f"A continuation of {len(continuation)} tokens does not fit n_positions={n_positions}.")
        pairs.append((list(context)[-(n_positions - len(continuation)) :], list(continuation)))
    device = next(model.parameters()).device
    out: list[torch.Tensor] = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        width = max(len(c) + len(t) for c, t in chunk)
        ids = torch.zeros(len(chunk), width, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, (context, continuation) in enumerate(chunk):  # right padding: positions start at 0 for every row
            seq = context + continuation
            ids[row, : len(seq)] = torch.tensor(seq)
            mask[row, : len(seq)] = 1
        logprobs = F.log_softmax(model(ids.to(device), attention_mask=mask.to(device)).logits.float(), dim=-1).cpu()
        for row, (context, continuation) in enumerate(chunk):
            positions = torch.arange(len(context) - 1, len(context) + len(continuation) - 1)  # predict token t+1
            out.append(logprobs[row, positions, torch.tensor(continuation, dtype=torch.long)])
    return out


def _mean(values: torch.Tensor) -> float:
    return float(values.mean()) if values.numel() else float("-inf")


def cola_scores(model: torch.nn.Module, tokenizer: Any, sentences: Sequence[str], batch_size: int = 16) -> np.ndarray:
    """Average token log-probability of each sentence (tokens after the first); `-inf` for one-token sentences.

    A sentence longer than the model's `n_positions` is scored on its first `n_positions` tokens.
    """
    ids = [seq[: model.config.n_positions] for seq in _encode(tokenizer, sentences)]
    if any(not seq for seq in ids):
        raise ValueError("An empty sentence has no tokens to score.")
    logprobs = continuation_logprobs(model, [seq[:1] for seq in ids], [seq[1:] for seq in ids], batch_size)
    return np.array([_mean(lp) for lp in logprobs])


def fit_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold on `scores` (predict 1 above it) with the best Matthews correlation on `labels`."""
    from sklearn.metrics import matthews_corrcoef

    candidates = np.unique(scores)
    # midpoints between consecutive distinct scores, plus one below all of them
    cuts = np.concatenate([[candidates[0] - 1.0], (candidates[:-1] + candidates[1:]) / 2])
    mcc = [matthews_corrcoef(labels, (scores > cut).astype(int)) for cut in cuts]
    return float(cuts[int(np.argmax(mcc))])


def sst2_scores(model: torch.nn.Module, tokenizer: Any, sentences: Sequence[str], batch_size: int = 16) -> np.ndarray:
    """log p("positive" | sentence + " very") − log p("negative" | sentence + " very"); positive sentiment if > 0.

    A word the vocabulary splits into several tokens is scored by the log-probability of all of them.
    """
    contexts = _encode(tokenizer, [f"{sentence} {SST2_CUE}" for sentence in sentences])
    positive, negative = _encode(tokenizer, [SST2_POSITIVE, SST2_NEGATIVE])
    logprobs = continuation_logprobs(
        model, contexts + contexts, [positive] * len(contexts) + [negative] * len(contexts), batch_size
    )
    totals = np.array([float(lp.sum()) for lp in logprobs])
    return totals[: len(contexts)] - totals[len(contexts) :]


def race_scores(
    model: torch.nn.Module,
    tokenizer: Any,
    contexts: Sequence[str],
    options: Sequence[Sequence[str]],
    batch_size: int = 16,
) -> list[np.ndarray]:
    """Average token log-probability of each option given its context (document + question); one array per row."""
    context_ids = _encode(tokenizer, contexts)
    flat_options = [option for row in options for option in row]
    # an option is scored on at most half the context (only models with a short context ever cut one)
    option_ids = [ids[: model.config.n_positions // 2] for ids in _encode(tokenizer, flat_options)]
    owners = [i for i, row in enumerate(options) for _ in row]
    logprobs = continuation_logprobs(model, [context_ids[i] for i in owners], option_ids, batch_size)
    scores: list[list[float]] = [[] for _ in options]
    for owner, lp in zip(owners, logprobs):
        scores[owner].append(_mean(lp))
    return [np.array(row) for row in scores]


def substitution_scores(
    model: torch.nn.Module,
    before: Sequence[int],
    candidates: Sequence[Sequence[int]],
    rest: Sequence[int],
    batch_size: int = 16,
) -> np.ndarray:
    """Average log-probability of `rest` after `before + candidate`, for each candidate (Trinh & Le's partial score,
    the paper's DPRD heuristic): the referent of the pronoun is the candidate with the highest score."""
    contexts = [list(before) + list(candidate) for candidate in candidates]
    return np.array([_mean(lp) for lp in continuation_logprobs(model, contexts, [rest] * len(contexts), batch_size)])


def _common_suffix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _wnli_substitution(premise: list[int], hypothesis: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """Splits a WNLI row into (premise before the pronoun, pronoun, candidate, rest).

    The hypothesis is the premise's clause with the pronoun replaced: its longest common suffix with the premise is
    the rest after the substitution; the premise token just before the rest is the pronoun; the hypothesis tokens
    before the rest, minus those repeating the premise words right before the pronoun, are the candidate.
    """
    n_rest = _common_suffix(premise, hypothesis)
    if n_rest == 0 or n_rest >= len(hypothesis) or n_rest >= len(premise):
        return [], [], [], []
    rest = premise[len(premise) - n_rest :]
    before, pronoun = premise[: len(premise) - n_rest - 1], premise[len(premise) - n_rest - 1 : len(premise) - n_rest]
    head = hypothesis[: len(hypothesis) - n_rest]
    shared = max((k for k in range(len(head)) if k == 0 or head[:k] == before[len(before) - k :]), default=0)
    return before, pronoun, head[shared:], rest


def wnli_predictions(
    model: torch.nn.Module,
    tokenizer: Any,
    premises: Sequence[str],
    hypotheses: Sequence[str],
    batch_size: int = 16,
) -> tuple[np.ndarray, int]:
    """WNLI with the DPRD heuristic: 1 (entailment) where the hypothesis substitutes the pronoun's referent.

    Rows that substitute the same pronoun of the same premise (same premise, same rest) are compared with each
    other: the candidate whose substitution makes the rest most likely is the referent. A row without a competitor
    (most of the dev set) is compared with the pronoun itself: the candidate is the referent when it makes the rest
    at least as likely as the pronoun does. Rows where no substitution can be found (the hypothesis does not end like
    the premise) get the majority class, 0.

    Returns:
        `tuple[np.ndarray, int]`: The predictions and the number of rows without a substitution.
    """
    premise_ids, hypothesis_ids = _encode(tokenizer, premises), _encode(tokenizer, hypotheses)
    groups: dict[tuple, list[tuple[int, list[int]]]] = defaultdict(list)
    predictions = np.zeros(len(premises), dtype=int)
    unresolved = 0
    for row, (premise, hypothesis) in enumerate(zip(premise_ids, hypothesis_ids)):
        before, pronoun, candidate, rest = _wnli_substitution(premise, hypothesis)
        if not rest or not candidate:
            unresolved += 1
            continue
        # A model with a short context scores the start of the rest only: the same tokens for every candidate.
        rest = rest[: model.config.n_positions // 2]
        groups[(tuple(before), tuple(pronoun), tuple(rest))].append((row, candidate))
    for (before, pronoun, rest), members in groups.items():
        candidates = [candidate for _, candidate in members]
        distinct = {tuple(c) for c in candidates}
        reference = [] if len(distinct) > 1 else [list(pronoun)]
        scores = substitution_scores(model, before, candidates + reference, rest, batch_size)
        best = scores.max()
        for (row, _), score in zip(members, scores):
            predictions[row] = int(score >= best)
    return predictions, unresolved


def _labels(spec: TaskSpec, dataset: datasets.Dataset) -> np.ndarray:
    if spec.label_column not in dataset.column_names:
        raise ValueError(f"The {spec.name} rows have no {spec.label_column!r} column: zero-shot scoring needs labels.")
    labels = [spec.label_to_id(value) for value in dataset[spec.label_column]]
    if any(label is None for label in labels):
        raise ValueError(f"Some {spec.name} rows have no gold label (test split?); evaluate a labelled split.")
    return np.array(labels)


def evaluate_zero_shot(
    model: torch.nn.Module,
    tokenizer: Any,
    task: str | TaskSpec,
    dataset: datasets.Dataset,
    *,
    batch_size: int = 16,
    threshold: float | None = None,
    calibration: datasets.Dataset | None = None,
) -> dict[str, Any]:
    """Scores a language model on a task with the paper's zero-shot heuristic and the task's GLUE metric.

    Args:
        model (`GPT1LMHeadModel`): Any GPT-1 language-model checkpoint (pre-training checkpoints included).
        tokenizer (`PreTrainedTokenizerFast`): Its tokenizer; special tokens are not used.
        task (`str` or `TaskSpec`): `"cola"`, `"sst2"`, `"race"` or `"wnli"` (any spelling `get_task` accepts).
        dataset (`datasets.Dataset`): Labelled rows with the task's Hub column names (as `load_glue_tsv` gives them).
        batch_size (`int`): Sequences per forward pass.
        threshold (`float`, *optional*): CoLA only: the score above which a sentence is acceptable. Default: the best
            threshold (by MCC) on `calibration`, or, without it, the median score of `dataset` (label-free).
        calibration (`datasets.Dataset`, *optional*): CoLA only: labelled rows (e.g. training rows) to fit the
            threshold on.

    Returns:
        `dict[str, Any]`: `task`, `num_examples`, the metric values (e.g. `matthews_correlation`, `accuracy`), each
        also as `baseline_<metric>` (the majority class predicted for every row), `warnings` when the predictions are
        constant or no better than that, and per task `threshold` (CoLA) or `unresolved` (WNLI rows without a pronoun
        substitution).
    """
    spec = get_task(task)
    if spec.name not in ZERO_SHOT_TASKS:
        raise ValueError(f"No zero-shot heuristic for {spec.name!r}; the paper's are {list(ZERO_SHOT_TASKS)}.")
    if len(dataset) == 0:
        raise ValueError(f"The {spec.name} dataset has no rows.")
    labels = _labels(spec, dataset)
    extra: dict[str, Any] = {}
    if spec.name == "cola":
        scores = cola_scores(model, tokenizer, dataset["sentence"], batch_size)
        if threshold is None and calibration is not None:
            calibration_scores = cola_scores(model, tokenizer, calibration["sentence"], batch_size)
            threshold = fit_threshold(calibration_scores, _labels(spec, calibration))
        elif threshold is None:
            threshold = float(np.median(scores))
        predictions = (scores > threshold).astype(int)
        extra["threshold"] = threshold
    elif spec.name == "sst2":
        predictions = (sst2_scores(model, tokenizer, dataset["sentence"], batch_size) > 0).astype(int)
    elif spec.name == "race":
        contexts = [f"{article} {question}" for article, question in zip(dataset["article"], dataset["question"])]
        scores = race_scores(model, tokenizer, contexts, dataset["options"], batch_size)
        predictions = np.array([int(np.argmax(row)) for row in scores])
    else:
        predictions, extra["unresolved"] = wnli_predictions(
            model, tokenizer, dataset["sentence1"], dataset["sentence2"], batch_size
        )
    metrics = score_with_baselines(load_metric(spec), spec, predictions, labels)
    results = {"task": spec.name, "num_examples": len(dataset), **metrics, **extra}
    if found := prediction_warnings(spec, spec.name, metrics):
        results["warnings"] = found
    return results


if __name__ == "__main__":  # `python -m hf_gpt1.tools.zero_shot` ran the command until 0.6.0: a library runs nothing
    raise SystemExit(
        "error: python -m hf_gpt1.tools.zero_shot was removed in hf_gpt1 0.6.0: run hf-gpt1 zero-shot (or "
        "python -m hf_gpt1.commands.zero_shot)."
    )
