# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Fuzzing the data path with hypothesis: arbitrary Unicode (control characters, emoji, right-to-left scripts,
combining marks, very long words, literal special-token strings) through tokenizer → GPT1Preprocessor → collator →
model, for every input format. Nothing may crash, and every output must stay within bounds: ids inside the
vocabulary, sequences at most `max_length` long, exactly one `_classify_` per sequence at its last real position,
masks and LM labels consistent with the padding, and finite logits and losses."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification
from hf_gpt1.data.tasks import TaskSpec, get_task
from hf_gpt1.data.transforms import GPT1Preprocessor, collator_for_format
from hf_gpt1.formats import IGNORE_INDEX
from hf_gpt1.tokenization_gpt1 import load_gpt1_tokenizer

MAX_LENGTH = 64
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

SPECIAL_CHARS = [
    "\x00",
    "\x07",
    "\x1b",
    "\x7f",
    "\u200b",
    "\u200d",
    "\u202e",
    "\ufeff",
    "\r\n",
    "\u2028",
    "\t",  # control / bidi
    "😀",
    "👩‍👩‍👧",
    "🇫🇷",
    "مرحبا",
    "שלום",
    "\u0301",
    "ﬁ",
    "—",
    "…",
    "´",
    "ẞ",
    "İ",
    "\U0010ffff",  # emoji, RTL, ...
    "_start_",
    "_delimiter_",
    "_classify_",
    "<pad>",
    "<unk>",
    "</w>",  # literal special-token strings
]
pieces = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    st.sampled_from(SPECIAL_CHARS),
    st.text(
        alphabet=st.characters(codec="utf-8", categories=["L", "M", "N"]), min_size=200, max_size=400
    ),  # long word
)
texts = st.lists(pieces, max_size=8).map("".join)


@pytest.fixture(scope="module")
def setup(tiny):
    tokenizer = load_gpt1_tokenizer(tiny)
    models = {
        "classification": GPT1ForSequenceClassification.from_pretrained(tiny, num_labels=2),
        "similarity": GPT1ForSequenceClassification.from_pretrained(tiny, num_labels=1, similarity=True),
        "multiple_choice": GPT1ForMultipleChoice.from_pretrained(tiny),
    }
    return tokenizer, {name: model.eval() for name, model in models.items()}


def _check_sequences(batch, config, n_sequences):
    ids, mask = batch["input_ids"], batch["attention_mask"]
    ids, mask, lm = (t.reshape(-1, t.shape[-1]) for t in (ids, mask, batch["lm_labels"]))
    assert ids.shape[0] == n_sequences and ids.shape[-1] <= MAX_LENGTH
    assert int(ids.min()) >= 0 and int(ids.max()) < config.vocab_size
    for row, row_mask, row_lm in zip(ids, mask, lm):
        n = int(row_mask.sum())
        assert row_mask[:n].all() and not row_mask[n:].any(), "padding only on the right"
        assert row[0] == config.start_token_id and row[n - 1] == config.extract_token_id
        assert (row[:n] == config.extract_token_id).sum() == 1 and (row[:n] == config.start_token_id).sum() == 1
        assert (row[n:] == config.pad_token_id).all()
        assert row_lm[0] == IGNORE_INDEX and (row_lm[n:] == IGNORE_INDEX).all() and (row_lm[1:n] == row[1:n]).all()


def _run(tokenizer, model, spec: TaskSpec, rows: dict[str, list], n_sequences: int):
    features = GPT1Preprocessor(tokenizer, spec)(rows)
    n_rows = len(next(iter(rows.values())))
    feature_list = [{key: values[i] for key, values in features.items()} for i in range(n_rows)]
    collator = collator_for_format(spec.format).from_config(
        model.config, max_length=MAX_LENGTH, num_labels=spec.num_labels
    )
    batch = collator(feature_list)
    _check_sequences(batch, model.config, n_sequences)
    with torch.no_grad():
        out = model(**batch)
    assert torch.isfinite(out.logits).all() and torch.isfinite(out.loss)
    return out


@FUZZ
@given(st.lists(st.tuples(texts, texts, st.sampled_from(["entailment", "not_entailment"])), min_size=1, max_size=3))
def test_fuzz_entailment(setup, rows):
    tokenizer, models = setup
    a, b, labels = (list(column) for column in zip(*rows))
    out = _run(
        tokenizer,
        models["classification"],
        get_task("rte"),
        {"sentence1": a, "sentence2": b, "label": labels},
        len(rows),
    )
    assert out.logits.shape == (len(rows), 2)


@FUZZ
@given(st.lists(st.tuples(texts, st.integers(0, 1)), min_size=1, max_size=3))
def test_fuzz_classification(setup, rows):
    tokenizer, models = setup
    sentences, labels = (list(column) for column in zip(*rows))
    _run(tokenizer, models["classification"], get_task("sst2"), {"sentence": sentences, "label": labels}, len(rows))


@FUZZ
@given(st.lists(st.tuples(texts, texts, st.floats(0, 5)), min_size=1, max_size=3))
def test_fuzz_similarity(setup, rows):
    tokenizer, models = setup
    a, b, scores = (list(column) for column in zip(*rows))
    out = _run(
        tokenizer,
        models["similarity"],
        get_task("stsb"),
        {"sentence1": a, "sentence2": b, "label": scores},
        2 * len(rows),
    )
    assert out.logits.shape == (len(rows), 1)


@FUZZ
@given(
    st.lists(
        st.tuples(texts, texts, st.lists(texts, min_size=4, max_size=4), st.integers(0, 3)), min_size=1, max_size=2
    )
)
def test_fuzz_multiple_choice(setup, rows):
    tokenizer, models = setup
    spec = get_task("swag")
    columns = {"sent1": [], "sent2": [], "label": [], **{name: [] for name in spec.choice_columns}}
    for context, prefix, endings, label in rows:
        columns["sent1"].append(context)
        columns["sent2"].append(prefix)
        columns["label"].append(label)
        for name, ending in zip(spec.choice_columns, endings):
            columns[name].append(ending)
    out = _run(tokenizer, models["multiple_choice"], spec, columns, 4 * len(rows))
    assert out.logits.shape == (len(rows), 4)
