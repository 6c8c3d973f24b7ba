# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The collators that apply the paper's input transforms, and the tokenization step (hf_gpt1.data.transforms).

Segments are plain integer ids below 100; the special tokens sit above them, so no test depends on a real tokenizer
except the `prepare_dataset` ones, which use a tiny WordLevel tokenizer.
"""

from types import SimpleNamespace

import datasets
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from hf_gpt1.data.tasks import TaskSpec
from hf_gpt1.data.transforms import (
    GPT1ClassificationCollator,
    GPT1MultipleChoiceCollator,
    GPT1Preprocessor,
    GPT1SimilarityCollator,
    collator_for_format,
    prepare_dataset,
)
from hf_gpt1.formats import IGNORE_INDEX

START, DELIM, EXTRACT, PAD = 100, 101, 102, 103
IDS = {"start_token_id": START, "delimiter_token_id": DELIM, "extract_token_id": EXTRACT}
COLLATOR_IDS = {**IDS, "pad_token_id": PAD}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

segments = st.lists(st.integers(0, 99), max_size=40)
max_lengths = st.one_of(st.none(), st.integers(3, 60))


# ---------------------------------------------------------------------------------------------------------------------
# Collators
# ---------------------------------------------------------------------------------------------------------------------


def _check_sequences(input_ids: torch.Tensor, attention_mask: torch.Tensor, lm_labels: torch.Tensor, max_length):
    """Invariants every collated (…, seq) batch must satisfy, whatever the format."""
    flat_ids, flat_mask, flat_lm = (t.reshape(-1, t.shape[-1]) for t in (input_ids, attention_mask, lm_labels))
    if max_length is not None:
        assert flat_ids.shape[-1] <= max_length
    for ids, mask, lm in zip(flat_ids, flat_mask, flat_lm):
        n_real = int(mask.sum())
        assert mask[:n_real].all() and not mask[n_real:].any(), "padding must be on the right"
        assert ids[0] == START
        assert (ids[:n_real] == EXTRACT).sum() == 1 and ids[n_real - 1] == EXTRACT, "one extract, the last real token"
        assert (ids[n_real:] == PAD).all()
        assert lm[0] == IGNORE_INDEX and (lm[n_real:] == IGNORE_INDEX).all()
        assert torch.equal(lm[1:n_real], ids[1:n_real]), "every real token after _start_ is an LM target"


@SETTINGS
@given(
    st.lists(st.tuples(segments, st.one_of(st.none(), segments), st.integers(0, 2)), min_size=1, max_size=6),
    st.one_of(st.none(), st.sampled_from([8, 16, 24, 32])),
    st.sampled_from([None, 1, 8]),
)
def test_classification_collator(rows, max_length, multiple):
    features = []
    for a, b, label in rows:
        feature = {"segment_a": a, "labels": label, "idx": 3}
        if b is not None:
            feature["segment_b"] = b
        features.append(feature)
    collator = GPT1ClassificationCollator(**COLLATOR_IDS, max_length=max_length, pad_to_multiple_of=multiple)
    batch = collator(features)
    assert set(batch) == {"input_ids", "attention_mask", "lm_labels", "labels"}
    assert batch["input_ids"].shape[0] == len(rows) and batch["input_ids"].dim() == 2
    assert batch["input_ids"].dtype == batch["attention_mask"].dtype == torch.long
    assert batch["labels"].dtype == torch.long and batch["labels"].tolist() == [label for _, _, label in rows]
    if multiple:
        assert batch["input_ids"].shape[1] % multiple == 0
    _check_sequences(batch["input_ids"], batch["attention_mask"], batch["lm_labels"], max_length)
    for ids, mask, (_, b, _) in zip(batch["input_ids"], batch["attention_mask"], rows):
        assert (ids[: int(mask.sum())] == DELIM).sum() == (b is not None)


@SETTINGS
@given(
    st.lists(st.tuples(segments, segments, st.floats(0, 5, width=32)), min_size=1, max_size=5),
    st.one_of(st.none(), st.integers(3, 40)),
)
def test_similarity_collator(rows, max_length):
    features = [{"segment_a": a, "segment_b": b, "label": score} for a, b, score in rows]
    batch = GPT1SimilarityCollator(**COLLATOR_IDS, max_length=max_length, num_labels=1)(features)
    assert batch["input_ids"].shape[:2] == (len(rows), 2)
    assert batch["labels"].dtype == torch.float32
    _check_sequences(batch["input_ids"], batch["attention_mask"], batch["lm_labels"], max_length)
    for pair, mask in zip(batch["input_ids"], batch["attention_mask"]):
        forward, backward = (ids[: int(m.sum())].tolist() for ids, m in zip(pair, mask))
        split = forward.index(DELIM)
        assert backward == [START, *forward[split + 1 : -1], DELIM, *forward[1:split], EXTRACT]


@SETTINGS
@given(
    st.integers(1, 5).flatmap(
        lambda n_choices: st.lists(
            st.tuples(
                segments, st.lists(segments, min_size=n_choices, max_size=n_choices), st.integers(0, n_choices - 1)
            ),
            min_size=1,
            max_size=4,
        )
    ),
    st.one_of(st.none(), st.integers(3, 40)),
)
def test_multiple_choice_collator(rows, max_length):
    features = [{"context": context, "choices": choices, "label": label} for context, choices, label in rows]
    batch = GPT1MultipleChoiceCollator(**COLLATOR_IDS, max_length=max_length)(features)
    n_choices = len(rows[0][1])
    assert batch["input_ids"].shape[:2] == (len(rows), n_choices)
    assert batch["labels"].dtype == torch.long and batch["labels"].tolist() == [label for *_, label in rows]
    _check_sequences(batch["input_ids"], batch["attention_mask"], batch["lm_labels"], max_length)
    for choices in batch["input_ids"]:
        contexts = {tuple(ids[1 : ids.tolist().index(DELIM)].tolist()) for ids in choices}
        assert len(contexts) == 1, "the choices of an example share the context"


def test_collator_label_dtypes_and_absence():
    collator = GPT1ClassificationCollator(**COLLATOR_IDS)
    assert "labels" not in collator([{"segment_a": [1]}, {"segment_a": [2]}])
    assert "labels" not in collator([{"segment_a": [1], "labels": None}])
    assert collator([{"segment_a": [1], "label": 0.5}])["labels"].dtype == torch.float32
    regression = GPT1ClassificationCollator(**COLLATOR_IDS, num_labels=1)
    assert regression([{"segment_a": [1], "labels": 3}])["labels"].dtype == torch.float32
    assert "lm_labels" not in GPT1ClassificationCollator(**COLLATOR_IDS, return_lm_labels=False)([{"segment_a": [1]}])


def test_collator_stacks_a_label_with_one_target_per_class():
    """A label kind whose label is a vector (multi-label: 0/1 per class) is batched as float, as BCE takes it."""
    collator = GPT1ClassificationCollator(**COLLATOR_IDS, num_labels=3)
    batch = collator([{"segment_a": [1], "labels": [1.0, 0.0, 1.0]}, {"segment_a": [2], "labels": [0, 0, 0]}])
    assert batch["labels"].dtype == torch.float32 and batch["labels"].tolist() == [[1, 0, 1], [0, 0, 0]]
    with pytest.raises(ValueError, match=r"Feature 1: label \[1.0\] is not a list of 3 class targets"):
        collator([{"segment_a": [1], "labels": [1.0, 0.0, 1.0]}, {"segment_a": [2], "labels": [1.0]}])
    with pytest.raises(ValueError, match=r"Feature 1: label 2 is not a list of 3 class targets"):
        collator([{"segment_a": [1], "labels": [1.0, 0.0, 1.0]}, {"segment_a": [2], "labels": 2}])


def test_collator_errors_name_the_problem():
    collator = GPT1ClassificationCollator(**COLLATOR_IDS, num_labels=2)
    with pytest.raises(KeyError, match=r"no 'segment_a' key \(keys present: \['input_ids', 'label'\]\)"):
        collator([{"input_ids": [1, 2], "label": 0}])
    with pytest.raises(KeyError, match="remove_unused_columns=False"):
        collator([{"sentence": "raw"}])
    with pytest.raises(ValueError, match=r"label 2 is not an int in \[0, 2\)"):
        collator([{"segment_a": [1], "labels": 2}])
    with pytest.raises(ValueError, match="label True"):
        collator([{"segment_a": [1], "labels": True}])
    with pytest.raises(ValueError, match=r"Features \[1\] have no 'labels'"):
        collator([{"segment_a": [1], "labels": 1}, {"segment_a": [1], "labels": None}])
    with pytest.raises(ValueError, match="regression label nan"):
        GPT1SimilarityCollator(**COLLATOR_IDS, num_labels=1)(
            [{"segment_a": [], "segment_b": [], "label": float("nan")}]
        )
    with pytest.raises(TypeError, match="segment_b is None|hypothesis is None"):
        collator([{"segment_a": [1], "segment_b": None}])
    with pytest.raises(ValueError, match=r"int in \[0, 2\)"):
        GPT1MultipleChoiceCollator(**COLLATOR_IDS)([{"context": [1], "choices": [[2], [3]], "label": 2}])
    with pytest.raises(ValueError, match="same number of choices"):
        GPT1MultipleChoiceCollator(**COLLATOR_IDS)(
            [{"context": [], "choices": [[1]]}, {"context": [], "choices": [[1], [2]]}]
        )
    with pytest.raises(ValueError, match="empty list"):
        collator([])


def test_collator_construction_errors():
    with pytest.raises(ValueError, match="must differ"):
        GPT1ClassificationCollator(start_token_id=1, delimiter_token_id=1, extract_token_id=2, pad_token_id=0)
    with pytest.raises(ValueError, match="pad_token_id must be a non-negative int"):
        GPT1ClassificationCollator(**IDS, pad_token_id=None)
    with pytest.raises(ValueError, match="not a multiple of pad_to_multiple_of"):
        GPT1ClassificationCollator(**COLLATOR_IDS, max_length=510, pad_to_multiple_of=8)
    with pytest.raises(ValueError, match="cannot hold"):
        GPT1ClassificationCollator(**COLLATOR_IDS, max_length=2)


def test_collator_from_config():
    config = SimpleNamespace(**COLLATOR_IDS, n_positions=16)
    collator = GPT1SimilarityCollator.from_config(config)
    assert (collator.start_token_id, collator.pad_token_id, collator.max_length) == (START, PAD, 16)
    assert GPT1SimilarityCollator.from_config(config, max_length=8).max_length == 8
    with pytest.raises(ValueError, match="at most config.n_positions=16"):
        GPT1SimilarityCollator.from_config(config, max_length=32)
    with pytest.raises(ValueError, match=r"no \['extract_token_id'\]"):
        GPT1SimilarityCollator.from_config(
            SimpleNamespace(**{**COLLATOR_IDS, "extract_token_id": None}, n_positions=8)
        )


def test_collator_for_format():
    assert collator_for_format("entailment") is GPT1ClassificationCollator
    assert collator_for_format("multiple_choice") is GPT1MultipleChoiceCollator
    with pytest.raises(ValueError, match=r"Unknown format 'ranking'; valid formats: \['classification'"):
        collator_for_format("ranking")


# ---------------------------------------------------------------------------------------------------------------------
# Tokenization step and prepare_dataset, with a tiny word-level tokenizer
# ---------------------------------------------------------------------------------------------------------------------

WORDS = "the a cat dog sat on mat is not good bad yes no".split()


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {word: i for i, word in enumerate(["<unk>", *WORDS])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", model_max_length=32)
    tok.add_special_tokens({"additional_special_tokens": ["_start_", "_delimiter_", "_classify_"]})
    return tok


def _ids(tokenizer, text: str) -> list[int]:
    return [tokenizer.get_vocab().get(word, 0) for word in text.split()]


def test_prepare_dataset_entailment(tokenizer):
    rows = {
        "sentence1": ["the cat sat", "", "a dog _classify_"],
        "sentence2": ["a dog", "bad", "good"],
        "label": ["entailment", "not_entailment", "entailment"],
        "idx": [0, 1, 2],
    }
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(rows), tokenizer, "RTE")
    assert set(dataset.column_names) == {"segment_a", "segment_b", "labels", "length", "idx"}  # length: segment tokens
    assert dataset["segment_a"][0] == _ids(tokenizer, "the cat sat") and dataset["segment_a"][1] == []
    assert dataset["labels"] == [0, 1, 0]
    assert isinstance(collator, GPT1ClassificationCollator) and collator.max_length == 32 and collator.num_labels == 2
    vocab = tokenizer.get_vocab()
    assert (collator.start_token_id, collator.delimiter_token_id) == (vocab["_start_"], vocab["_delimiter_"])
    assert (collator.extract_token_id, collator.pad_token_id) == (vocab["_classify_"], vocab["<pad>"])
    # A literal special-token string in the text stays text: one extract token per sequence.
    assert vocab["_classify_"] not in dataset["segment_a"][2]
    batch = collator([dataset[i] for i in range(3)])
    assert (batch["input_ids"] == vocab["_classify_"]).sum(dim=1).tolist() == [1, 1, 1]
    assert batch["labels"].tolist() == [0, 1, 0]


def test_prepare_dataset_similarity_and_unlabelled_test_split(tokenizer):
    rows = {"sentence1": ["the cat", "a dog"], "sentence2": ["a mat", "the dog"], "label": [-1.0, -1.0]}
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(rows), tokenizer, "sts-b", max_length=16)
    assert isinstance(collator, GPT1SimilarityCollator) and collator.num_labels == 1
    batch = collator(list(dataset))
    assert batch["input_ids"].shape[:2] == (2, 2) and "labels" not in batch
    labelled = datasets.Dataset.from_dict({**rows, "label": [4.5, 0.25]})
    dataset, collator = prepare_dataset(labelled, tokenizer, "stsb")
    labels = collator(list(dataset))["labels"]
    assert labels.dtype == torch.float32 and labels.tolist() == [4.5, 0.25]


def test_prepare_dataset_multiple_choice(tokenizer):
    race = {"article": ["the cat sat"], "question": ["is good"], "options": [["a", "b c", "no", ""]], "answer": ["C"]}
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(race), tokenizer, "race")
    assert dataset[0]["context"] == _ids(tokenizer, "the cat sat") and len(dataset[0]["choices"]) == 4
    assert dataset[0]["question"] == _ids(tokenizer, "is good")  # kept whole by the collator
    assert dataset[0]["choices"][3] == [] and dataset[0]["labels"] == 2
    assert collator(list(dataset))["input_ids"].shape[:2] == (1, 4)

    swag = {"sent1": ["the cat"], "sent2": ["a dog"], "label": [1]}
    swag.update({f"ending{i}": [word] for i, word in enumerate(["sat", "is good", "bad", "no"])})
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(swag), tokenizer, "swag", segment_cap=3)
    assert dataset[0]["choices"][1] == _ids(tokenizer, "a dog is good") and collator.segment_cap == 3
    assert collator(list(dataset))["input_ids"].shape[-1] <= 3 + 3 + 3

    story = {f"InputSentence{i}": ["the cat sat"] for i in range(1, 5)}
    story.update(RandomFifthSentenceQuiz1=["good"], RandomFifthSentenceQuiz2=["bad"], AnswerRightEnding=[2])
    dataset, _ = prepare_dataset(datasets.Dataset.from_dict(story), tokenizer, "story_cloze")
    assert dataset[0]["labels"] == 1 and len(dataset[0]["context"]) == 12


def test_prepare_dataset_custom_format(tokenizer):
    rows = datasets.Dataset.from_dict({"text": ["the cat", "a dog"], "y": [1, 0]})
    rows = rows.cast_column("y", datasets.ClassLabel(names=["neg", "pos"]))
    dataset, collator = prepare_dataset(rows, tokenizer, "classification", text_columns=["text"], label_column="y")
    assert collator(list(dataset))["labels"].tolist() == [1, 0]
    with pytest.raises(ValueError, match="needs text_columns"):
        prepare_dataset(rows, tokenizer, "classification")
    ints = datasets.Dataset.from_dict({"text": ["the"], "label": [1]})
    with pytest.raises(ValueError, match="pass label_names"):
        prepare_dataset(ints, tokenizer, "classification", text_columns=["text"])
    dataset, _ = prepare_dataset(ints, tokenizer, "classification", text_columns=["text"], label_names=["no", "yes"])
    assert dataset["labels"] == [1]


def test_prepare_dataset_errors(tokenizer):
    renamed = {"sentence1": ["the cat"], "premise": ["a dog"], "label": ["entailment"]}
    with pytest.raises(
        KeyError, match=r"needs column 'sentence2', but the dataset has \['label', 'premise', 'sentence1'\]"
    ):
        prepare_dataset(datasets.Dataset.from_dict(renamed), tokenizer, "rte")
    bad_label = {"sentence1": ["the", "a"], "sentence2": ["a", "b"], "label": ["entailment", "maybe"]}
    with pytest.raises(
        ValueError, match=r"Row 1, column 'label'.*'maybe' is not one of.*'entailment', 'not_entailment'"
    ):
        prepare_dataset(datasets.Dataset.from_dict(bad_label), tokenizer, "rte")
    none_text = {"sentence": ["the cat", None], "label": [0, 1]}
    with pytest.raises(TypeError, match=r"Row 1, column 'sentence': expected text, got None"):
        prepare_dataset(datasets.Dataset.from_dict(none_text), tokenizer, "sst2")
    with pytest.raises(KeyError, match="Unknown task 'ranking'"):
        prepare_dataset(datasets.Dataset.from_dict(none_text), tokenizer, "ranking")
    no_specials = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"a": 0}, unk_token="a")))
    with pytest.raises(ValueError, match="add_gpt1_special_tokens"):
        GPT1ClassificationCollator.from_tokenizer(no_specials)


def test_prepare_dataset_unlabelled_rows(tokenizer):
    snli = {"premise": ["the cat", "a dog", "the mat"], "hypothesis": ["a", "b", "c"], "label": [0, -1, 2]}
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(snli), tokenizer, "snli")
    assert dataset["labels"] == [0, None, 2]
    with pytest.raises(ValueError, match="drop_unlabeled=True"):
        collator(list(dataset))
    dataset, collator = prepare_dataset(datasets.Dataset.from_dict(snli), tokenizer, "snli", drop_unlabeled=True)
    assert collator(list(dataset))["labels"].tolist() == [0, 2]


def test_preprocessor_is_a_batched_map_function(tokenizer):
    spec = TaskSpec("pairs", "entailment", ("p", "h"), ("no", "yes"))
    out = GPT1Preprocessor(tokenizer, spec)({"p": ["the cat", ""], "h": ["a", "dog"], "label": ["yes", 0]})
    a = _ids(tokenizer, "the cat")
    assert out == {"segment_a": [a, []], "segment_b": [[2], [4]], "labels": [1, 0], "length": [len(a) + 1, 1]}


def test_prepare_dataset_tokenizes_a_streamed_dataset_as_it_is_read():
    import datasets

    from hf_gpt1 import prepare_dataset, train_gpt1_tokenizer
    from tests.utils import SENTENCES

    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=120)
    rows = datasets.Dataset.from_dict(
        {"sentence1": SENTENCES[:6], "sentence2": SENTENCES[1:7], "label": ["entailment", "not_entailment"] * 3}
    )
    in_memory, _ = prepare_dataset(rows, tokenizer, "rte")
    streamed, collator = prepare_dataset(rows.to_iterable_dataset(), tokenizer, "rte", drop_unlabeled=True)
    assert isinstance(streamed, datasets.IterableDataset)
    assert list(streamed) == list(in_memory)
    assert collator(list(streamed)[:2])["input_ids"].shape[0] == 2
    with pytest.raises(
        ValueError,
        match="num_proc applies to a datasets.Dataset; a streamed IterableDataset is tokenized as it is read",
    ):
        prepare_dataset(rows.to_iterable_dataset(), tokenizer, "rte", num_proc=2)
