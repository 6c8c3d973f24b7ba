# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT-1's task input formats on plain lists of token ids (the paper's Fig. 1, right), and the constants they share.

`s` = start, `$` = delimiter, `e` = extract (`_classify_`):

- classification: `s text e`
- entailment: `s premise $ hypothesis e`
- similarity: both `s a $ b e` and `s b $ a e`
- multiple choice: `s context $ answer_k e` for each answer

Truncation never drops a special token. Two rules exist: `"longest_first"` trims the longer of two segments one token
at a time (the second on ties) until the sequence fits, the rule of transformers' tokenizers, which the pipelines use
as well; `segment_cap` first cuts every segment to a fixed number of tokens on its own, the original code's rule for
Story Cloze (`n_ctx // 2 - 2` tokens per segment, so that a sequence always fits `n_ctx`).

This module imports nothing but the standard library: the modeling code, the collators and the pipelines all read it,
and `save_pretrained` copies it beside the remote code so a pushed model needs no hf_gpt1 install.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

IGNORE_INDEX = -100
"""Label value that no loss is computed for (PyTorch's `cross_entropy` default)."""

SPECIAL_TOKENS: dict[str, str] = {
    "start": "_start_",
    "delimiter": "_delimiter_",
    "extract": "_classify_",
    "pad": "<pad>",
}
"""GPT-1's special tokens, appended after the BPE vocabulary in this order (ids 40478-40481 on the original one).
The first three are the paper's start, delimiter and extract tokens; the original code had no padding token (it
padded with id 0 and masked the loss), `<pad>` gives batched inference a real one."""

SPECIAL_TOKEN_FIELDS: dict[str, str] = {f"{name}_token_id": token for name, token in SPECIAL_TOKENS.items()}
"""`GPT1Config` field (and collator argument) holding a special token's id → that token, in `SPECIAL_TOKENS` order."""


def story_cloze_segment_cap(n_positions: int) -> int:
    """The original code's per-segment cap for Story Cloze, `n_ctx // 2 - 2` (254 for 512 positions): context and
    answer each keep at most this many tokens, so `s context $ answer e` always fits `n_positions`."""
    return n_positions // 2 - 2


def longest_first(len_a: int, len_b: int, budget: int) -> tuple[int, int]:
    """Lengths of two segments after trimming the longer one token by token (the second one on ties) until they fit
    `budget`, in closed form so that long documents cost no loop per token."""
    if len_a + len_b <= budget:
        return len_a, len_b
    if 2 * min(len_a, len_b) <= budget:
        return (len_a, budget - len_a) if len_b > len_a else (budget - len_b, len_b)
    return budget - budget // 2, budget // 2


def check_max_length(max_length: int | None, n_special: int) -> None:
    """Refuses a `max_length` that cannot hold the format's special tokens."""
    if max_length is not None and (not isinstance(max_length, int) or max_length < n_special):
        raise ValueError(f"max_length={max_length!r} cannot hold the {n_special} special tokens of this format.")


def check_segment(segment: object, name: str, special_ids: Sequence[int]) -> list[int]:
    """A segment as a list of ids; refuses text, None, and ids of special tokens (which would move the pooling)."""
    if segment is None:
        raise TypeError(f"{name} is None: every text must be a string (an empty string gives an empty segment).")
    if isinstance(segment, (str, bytes)):
        raise TypeError(f"{name} is text ({segment[:40]!r}); the transforms take token ids: tokenize it first.")
    segment = list(segment)
    for token_id in special_ids:
        # A literal "_classify_" in the text would otherwise add a second extract token and move the pooled position.
        if token_id in segment:
            raise ValueError(
                f"{name} already contains the special token id {token_id}; the transforms insert special tokens "
                "themselves. Tokenize raw text with split_special_tokens=True (GPT1Preprocessor does)."
            )
    return segment


def classification(
    segment: Sequence[int], *, start_token_id: int, extract_token_id: int, max_length: int | None = None
) -> list[int]:
    """`<s> text <e>`: the input of a single-text classification task (CoLA, SST-2).

    Args:
        segment (`Sequence[int]`): Token ids of the text, without special tokens (may be empty).
        start_token_id, extract_token_id (`int`): Ids of `_start_` and `_classify_`.
        max_length (`int`, *optional*): Cap on the sequence length; the text is cut at its end, never a special token.

    Returns:
        `list[int]`: The ids of the sequence.
    """
    check_max_length(max_length, 2)  # s text e
    ids = check_segment(segment, "segment", (start_token_id, extract_token_id))
    if max_length is not None:
        ids = ids[: max_length - 2]
    return [start_token_id, *ids, extract_token_id]


def entailment(
    premise: Sequence[int],
    hypothesis: Sequence[int],
    *,
    start_token_id: int,
    delimiter_token_id: int,
    extract_token_id: int,
    max_length: int | None = None,
) -> list[int]:
    """`<s> premise <$> hypothesis <e>`: the input of an entailment task or any text-pair classification.

    Args:
        premise, hypothesis (`Sequence[int]`): Token ids of the two texts, without special tokens (may be empty).
        start_token_id, delimiter_token_id, extract_token_id (`int`): Ids of `_start_`, `_delimiter_`, `_classify_`.
        max_length (`int`, *optional*): Cap on the sequence length, by [`longest_first`]; special tokens are never
            dropped.

    Returns:
        `list[int]`: The ids of the sequence.
    """
    check_max_length(max_length, 3)  # s premise $ hypothesis e
    specials = (start_token_id, delimiter_token_id, extract_token_id)
    a = check_segment(premise, "premise", specials)
    b = check_segment(hypothesis, "hypothesis", specials)
    if max_length is not None:
        len_a, len_b = longest_first(len(a), len(b), max_length - 3)
        a, b = a[:len_a], b[:len_b]
    return [start_token_id, *a, delimiter_token_id, *b, extract_token_id]


def similarity(
    segment_a: Sequence[int],
    segment_b: Sequence[int],
    *,
    start_token_id: int,
    delimiter_token_id: int,
    extract_token_id: int,
    max_length: int | None = None,
) -> tuple[list[int], list[int]]:
    """Both orderings `<s> a <$> b <e>` and `<s> b <$> a <e>`: similarity has no natural order, so the model adds
    the two representations.

    The texts are truncated once (as in [`entailment`]) before building both, so the second sequence is an exact
    swap of the first.

    Returns:
        `tuple[list[int], list[int]]`: The two sequences, `a` first then `b` first.
    """
    forward = entailment(
        segment_a,
        segment_b,
        start_token_id=start_token_id,
        delimiter_token_id=delimiter_token_id,
        extract_token_id=extract_token_id,
        max_length=max_length,
    )
    split = forward.index(delimiter_token_id)
    a, b = forward[1:split], forward[split + 1 : -1]
    return forward, [start_token_id, *b, delimiter_token_id, *a, extract_token_id]


def multiple_choice(
    context: Sequence[int],
    answers: Sequence[Sequence[int]],
    *,
    start_token_id: int,
    delimiter_token_id: int,
    extract_token_id: int,
    max_length: int | None = None,
    segment_cap: int | None = None,
    question: Sequence[int] = (),
) -> list[list[int]]:
    """`<s> context question <$> answer_k <e>` for every answer (Story Cloze, RACE, SWAG).

    Every sequence keeps the same context tokens, so the choices differ only in their answers.

    Args:
        context (`Sequence[int]`): Token ids of the context (RACE: the article).
        answers (`Sequence[Sequence[int]]`): Token ids of each answer; at least one.
        start_token_id, delimiter_token_id, extract_token_id (`int`): Ids of `_start_`, `_delimiter_`, `_classify_`.
        max_length (`int`, *optional*): Cap on each sequence's length. With a `question`, the context's end is cut
            first, keeping the question and every answer whole (RACE); what still does not fit (or all of it, without
            a question) is trimmed by [`longest_first`], the context (and question) and the longest answer taken as
            the pair, every answer cut to the length the longest one gets.
        segment_cap (`int`, *optional*): Keep only the first `segment_cap` tokens of the context and of each answer,
            each on its own, before anything else: the original code's rule for Story Cloze
            ([`story_cloze_segment_cap`]).
        question (`Sequence[int]`, *optional*): Token ids read right after the context (RACE's question).

    Returns:
        `list[list[int]]`: One sequence per answer.
    """
    check_max_length(max_length, 3)  # s context $ answer e
    if segment_cap is not None and (
        not isinstance(segment_cap, int) or isinstance(segment_cap, bool) or segment_cap < 0
    ):
        raise ValueError(f"segment_cap={segment_cap!r} must be a non-negative int.")
    if answers is None or isinstance(answers, (str, bytes)) or len(answers) == 0:
        raise ValueError(f"answers must be a non-empty list of token-id lists, got {answers!r:.60}.")
    specials = (start_token_id, delimiter_token_id, extract_token_id)
    ctx = check_segment(context, "context", specials)
    kept = check_segment(question, "question", specials)
    choices = [check_segment(answer, f"answer {k}", specials) for k, answer in enumerate(answers)]
    if segment_cap is not None:
        ctx, choices = ctx[:segment_cap], [answer[:segment_cap] for answer in choices]
    lead = [*ctx, *kept]  # what precedes the delimiter
    if max_length is not None:
        room = max_length - 3 - len(kept) - max(map(len, choices))
        if kept and room >= 0:
            lead = [*ctx[:room], *kept]
        else:  # no question, or the question and the answers alone are too long: the context goes first
            lead = kept or ctx
            len_lead, len_answer = longest_first(len(lead), max(map(len, choices)), max_length - 3)
            lead, choices = lead[:len_lead], [answer[:len_answer] for answer in choices]
    return [[start_token_id, *lead, delimiter_token_id, *answer, extract_token_id] for answer in choices]


@dataclass(frozen=True, kw_only=True)
class InputFormat:
    """One of GPT-1's input transforms: everything the package reads about a format, declared once.

    Args:
        name (`str`): The name tasks and `GPT1Config.input_format` give it.
        text_columns (`tuple[int, int]`): How many text columns a task of this format declares (fewest, most); for
            multiple choice, the parts of its context.
        pair (`bool`): A sequence joins two texts with the delimiter token (a model fine-tuned on pairs refuses one
            text, and the reverse).
        orderings (`int`): Sequences per example and answer: 2 where both orderings of the pair are read and their
            extract-token states added (similarity).
        choices (`bool`): One sequence per answer, scored by the multiple-choice head with a softmax over answers;
            labels are choice indices, and `segment_cap` and a question column apply.
        special_tokens (`int`): Special tokens in one sequence: what truncation leaves room for.
        transform (`Callable`): Builds one example's sequence(s) from token ids.
        head (`str`): The model class that reads it (`hf_gpt1.modeling_gpt1.HEADS`).
        collator (`str`): The collator class that batches it (`hf_gpt1.data.transforms.COLLATORS`).
        command (`str`): The `hf-gpt1` command that fine-tunes a task of this format (`glue`, `multiple-choice`).

    Named, not classes: this module is shipped as remote code and imports neither the models nor the collators;
    each table that holds the classes is checked against these rows by the tests. Built with keywords only.
    """

    name: str
    text_columns: tuple[int, int]
    pair: bool
    orderings: int
    choices: bool
    special_tokens: int
    transform: Callable
    head: str
    collator: str
    command: str


_CLASSIFIER = "GPT1ForSequenceClassification"
INPUT_FORMATS: dict[str, InputFormat] = {
    f.name: f
    for f in (
        InputFormat(name="classification", text_columns=(1, 1), pair=False, orderings=1, choices=False,
                    special_tokens=2, transform=classification, head=_CLASSIFIER,
                    collator="GPT1ClassificationCollator", command="glue"),
        InputFormat(name="entailment", text_columns=(2, 2), pair=True, orderings=1, choices=False,
                    special_tokens=3, transform=entailment, head=_CLASSIFIER, collator="GPT1ClassificationCollator",
                    command="glue"),
        InputFormat(name="similarity", text_columns=(2, 2), pair=True, orderings=2, choices=False,
                    special_tokens=3, transform=similarity, head=_CLASSIFIER, collator="GPT1SimilarityCollator",
                    command="glue"),
        InputFormat(name="multiple_choice", text_columns=(1, 99), pair=False, orderings=1, choices=True,
                    special_tokens=3, transform=multiple_choice, head="GPT1ForMultipleChoice",
                    collator="GPT1MultipleChoiceCollator", command="multiple-choice"),
    )
}  # fmt: skip
"""The paper's four input transforms (Fig. 1, right), by name."""


def input_format(name: str) -> InputFormat:
    """The [`InputFormat`] named `name`.

    Raises:
        `ValueError`: No such format; the message lists them.
    """
    if name not in INPUT_FORMATS:
        raise ValueError(f"Unknown format {name!r}; valid formats: {list(INPUT_FORMATS)}.")
    return INPUT_FORMATS[name]


__all__ = [
    "IGNORE_INDEX",
    "INPUT_FORMATS",
    "SPECIAL_TOKENS",
    "InputFormat",
    "SPECIAL_TOKEN_FIELDS",
    "check_max_length",
    "check_segment",
    "classification",
    "entailment",
    "input_format",
    "longest_first",
    "multiple_choice",
    "similarity",
    "story_cloze_segment_cap",
]
