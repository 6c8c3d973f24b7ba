# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT-1's task input formats on plain lists of ids (hf_gpt1.formats): the transforms, their truncation rules, and
the module's independence (it ships as remote code beside the model and the pipelines).

Segments are plain integer ids below 100; the special tokens sit above them.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_gpt1.formats import (
    classification,
    entailment,
    longest_first,
    multiple_choice,
    similarity,
    story_cloze_segment_cap,
)
from tests.utils import REPO_ROOT

START, DELIM, EXTRACT = 100, 101, 102
IDS = {"start_token_id": START, "delimiter_token_id": DELIM, "extract_token_id": EXTRACT}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

segments = st.lists(st.integers(0, 99), max_size=40)
max_lengths = st.one_of(st.none(), st.integers(3, 60))


def _reference_longest_first(a: list[int], b: list[int], budget: int) -> tuple[int, int]:
    """The rule spelled out: drop the last token of the longer segment (the second on ties) until both fit."""
    len_a, len_b = len(a), len(b)
    while len_a + len_b > budget:
        if len_a > len_b:
            len_a -= 1
        else:
            len_b -= 1
    return len_a, len_b


@SETTINGS
@given(segments, segments, st.integers(0, 90))
def test_longest_first_matches_token_by_token_rule(a, b, budget):
    assert longest_first(len(a), len(b), budget) == _reference_longest_first(a, b, budget)


@SETTINGS
@given(segments, max_lengths)
def test_classification(segment, max_length):
    ids = classification(segment, start_token_id=START, extract_token_id=EXTRACT, max_length=max_length)
    assert ids[0] == START and ids[-1] == EXTRACT and ids.count(EXTRACT) == 1
    body = ids[1:-1]
    assert body == segment[: len(body)]
    if max_length is None or len(segment) + 2 <= max_length:
        assert body == segment
    else:
        assert len(ids) == max_length


@SETTINGS
@given(segments, segments, max_lengths)
def test_entailment(premise, hypothesis, max_length):
    ids = entailment(premise, hypothesis, **IDS, max_length=max_length)
    assert ids[0] == START and ids[-1] == EXTRACT
    assert ids.count(START) == ids.count(DELIM) == ids.count(EXTRACT) == 1
    split = ids.index(DELIM)
    a, b = ids[1:split], ids[split + 1 : -1]
    assert a == premise[: len(a)] and b == hypothesis[: len(b)]
    if max_length is None:
        assert (a, b) == (premise, hypothesis)
    else:
        assert len(ids) <= max_length
        assert (len(a), len(b)) == _reference_longest_first(premise, hypothesis, max_length - 3)


@SETTINGS
@given(segments, segments, max_lengths)
def test_similarity_orderings_are_exact_swaps(a, b, max_length):
    forward, backward = similarity(a, b, **IDS, max_length=max_length)
    assert forward == entailment(a, b, **IDS, max_length=max_length)
    split = forward.index(DELIM)
    seg_a, seg_b = forward[1:split], forward[split + 1 : -1]
    assert backward == [START, *seg_b, DELIM, *seg_a, EXTRACT]


@SETTINGS
@given(segments, st.lists(segments, min_size=1, max_size=5), max_lengths, st.one_of(st.none(), st.integers(0, 30)))
def test_multiple_choice(context, answers, max_length, segment_cap):
    sequences = multiple_choice(context, answers, **IDS, max_length=max_length, segment_cap=segment_cap)
    assert len(sequences) == len(answers)
    contexts = set()
    for ids, answer in zip(sequences, answers):
        assert ids[0] == START and ids[-1] == EXTRACT and ids.count(EXTRACT) == ids.count(DELIM) == 1
        assert max_length is None or len(ids) <= max_length
        split = ids.index(DELIM)
        contexts.add(tuple(ids[1:split]))
        kept_answer = ids[split + 1 : -1]
        assert kept_answer == answer[: len(kept_answer)]
        if segment_cap is not None:
            assert len(kept_answer) <= segment_cap
        if max_length is None and segment_cap is None:
            assert kept_answer == answer
    assert len(contexts) == 1, "every choice must see the same context"
    kept_context = list(contexts.pop())
    assert kept_context == context[: len(kept_context)]
    if segment_cap is not None:
        assert len(kept_context) <= segment_cap


def test_multiple_choice_original_story_cloze_cap():
    """The original code cuts each segment on its own to n_ctx // 2 - 2 tokens (254 of 512), not the longest first:
    a long context keeps 254 tokens even beside a short answer, so every sequence fits and nothing else is cut."""
    assert story_cloze_segment_cap(512) == 254 and story_cloze_segment_cap(64) == 30
    context, answers = [1] * 300, [[2] * 260, [3] * 5]
    sequences = multiple_choice(context, answers, **IDS, max_length=512, segment_cap=story_cloze_segment_cap(512))
    assert [len(ids) for ids in sequences] == [3 + 254 + 254, 3 + 254 + 5]
    # the longest-first rule alone would have given the context 255 tokens (the answer 254) and the short answer's
    # sequence a 255-token context too: different from the original's
    assert len(multiple_choice(context, answers, **IDS, max_length=512)[1]) == 3 + 255 + 5


def test_empty_segments_are_valid():
    assert classification([], start_token_id=START, extract_token_id=EXTRACT) == [START, EXTRACT]
    assert entailment([], [], **IDS) == [START, DELIM, EXTRACT]
    assert similarity([], [7], **IDS) == ([START, DELIM, 7, EXTRACT], [START, 7, DELIM, EXTRACT])
    assert multiple_choice([], [[]], **IDS) == [[START, DELIM, EXTRACT]]


def test_transform_input_errors():
    with pytest.raises(TypeError, match="premise is None"):
        entailment(None, [1], **IDS)
    with pytest.raises(TypeError, match="tokenize it first"):
        classification("some text", start_token_id=START, extract_token_id=EXTRACT)
    with pytest.raises(ValueError, match="cannot hold the 3 special tokens"):
        entailment([1], [2], **IDS, max_length=2)
    with pytest.raises(ValueError, match="already contains the special token id 102"):
        classification([1, EXTRACT], start_token_id=START, extract_token_id=EXTRACT)
    with pytest.raises(ValueError, match="non-empty list"):
        multiple_choice([1], [], **IDS)
    with pytest.raises(ValueError, match="segment_cap"):
        multiple_choice([1], [[2]], **IDS, segment_cap=-1)


def test_every_format_is_one_row_that_the_package_reads():
    """Each format's row names a transform, a head and a collator that exist, and its counts match what the
    transform builds; no module but hf_gpt1/formats.py compares a value with a format's name (behaviour follows
    the row's fields, so a new format is one row)."""
    import ast

    from hf_gpt1.data.transforms import GPT1Collator, collator_for_format
    from hf_gpt1.formats import INPUT_FORMATS
    from hf_gpt1.modeling_gpt1 import head

    for name, fmt in INPUT_FORMATS.items():
        assert fmt.name == name and issubclass(collator_for_format(name), GPT1Collator)
        assert head(fmt.head).model.__name__ == fmt.head
        if fmt.choices:
            built = fmt.transform([5], [[6], [7]], **IDS)
        elif fmt.pair:
            built = fmt.transform([5], [6], **IDS)
        else:
            built = fmt.transform([5], start_token_id=IDS["start_token_id"], extract_token_id=IDS["extract_token_id"])
        sequences = built if isinstance(built, list | tuple) and isinstance(built[0], list) else [built]
        assert all(sum(token >= 100 for token in sequence) == fmt.special_tokens for sequence in sequences)
        assert len(sequences) == (2 if fmt.choices else fmt.orderings)
    names = set(INPUT_FORMATS)
    compared = []
    for path in sorted((REPO_ROOT / "hf_gpt1").rglob("*.py")):
        if path.name == "formats.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                constants = [c for c in (node.left, *node.comparators) if isinstance(c, ast.Constant)]
                tuples = [e for c in node.comparators if isinstance(c, ast.Tuple | ast.List | ast.Set) for e in c.elts]
                if names & {c.value for c in [*constants, *tuples] if isinstance(c, ast.Constant)}:
                    compared.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert not compared, compared


def test_a_format_row_is_built_with_keywords_and_its_classes_come_from_tables():
    """`InputFormat(...)` takes keywords only (a reordered field cannot shift silently); the collator a row names is
    an entry of the explicit `COLLATORS` table (no lookup in a module's globals), the head an entry of `HEADS`, the
    command one of `hf-gpt1`'s."""
    import dataclasses

    from hf_gpt1.data.transforms import COLLATORS
    from hf_gpt1.formats import INPUT_FORMATS, InputFormat
    from hf_gpt1.modeling_gpt1 import HEADS

    row = INPUT_FORMATS["entailment"]
    with pytest.raises(TypeError):
        InputFormat(*dataclasses.astuple(row))
    assert InputFormat(**{f.name: getattr(row, f.name) for f in dataclasses.fields(row)}) == row
    assert {fmt.collator for fmt in INPUT_FORMATS.values()} == set(COLLATORS)
    assert {fmt.head for fmt in INPUT_FORMATS.values()} <= {entry.model.__name__ for entry in HEADS}
    from hf_gpt1.commands import COMMANDS

    assert {fmt.command for fmt in INPUT_FORMATS.values()} == {"glue", "multiple-choice"} <= set(COMMANDS)
    import ast

    for path in sorted((REPO_ROOT / "hf_gpt1").rglob("*.py")):  # `globals()[name]` read: a lookup by name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                called = node.value
                assert not (isinstance(called, ast.Call) and getattr(called.func, "id", "") == "globals"), path
