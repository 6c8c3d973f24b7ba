# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Task kinds (`hf_gpt1.data.kinds`): each input kind and label kind carries its behaviour, so that a kind of your own
is one class, and the code outside the kinds asks them instead of branching on flags."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import hf_gpt1
from hf_gpt1.data import kinds
from hf_gpt1.data.kinds import INPUT_KINDS, LABEL_KINDS, Classes, register_label_kind
from hf_gpt1.data.metrics import baseline_name, prediction_warnings, score_with_baselines
from hf_gpt1.data.submissions import write_predictions
from hf_gpt1.data.tasks import TASKS, TaskSpec
from hf_gpt1.formats import INPUT_FORMATS

# What the kinds replaced: the flags that every module used to branch on.
_FLAGS = re.compile(r"\.choices\b|is_regression")


def test_flags_are_read_in_the_kinds_and_the_task_table_only():
    package = Path(hf_gpt1.__file__).parent
    readers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if _FLAGS.search(path.read_text(encoding="utf-8"))
    )
    assert readers == ["data/tasks.py"]  # where `is_regression` stays, a property asking the label kind


def test_every_format_has_its_input_kind_and_every_task_its_label_kind():
    assert set(INPUT_KINDS) == set(INPUT_FORMATS)
    expected = {"stsb": "score", "rte": "classes", "sst2": "classes", "race": "choice", "story_cloze": "choice"}
    assert {name: TASKS[name].labels.name for name in expected} == expected
    assert TASKS["mrpc"].inputs.name == "similarity" and TASKS["mrpc"].inputs.command == "glue"
    assert TASKS["swag"].inputs.command == "multiple-choice"
    assert TASKS["stsb"].labels.head_config(TASKS["stsb"]) == {
        "num_labels": 1,
        "problem_type": "regression",
        "id2label": {0: "similarity"},
        "label2id": {"similarity": 0},
    }
    assert TASKS["race"].labels.head_config(TASKS["race"]) == {}  # the multiple-choice head has one loss


def test_the_refusal_of_a_command_comes_from_the_input_kind():
    assert TASKS["swag"].inputs.command_problem("glue", "swag") == (
        "--task 'swag' is multiple choice: run it with hf-gpt1 multiple-choice."
    )
    assert TASKS["rte"].inputs.command_problem("multiple_choice", "rte") == (
        "--task 'rte' is not multiple choice: run it with hf-gpt1 glue."
    )
    assert TASKS["rte"].inputs.command_problem("glue", "rte") is None
    assert TASKS["race"].inputs.command_problem("multiple_choice", "race") is None


def test_a_label_kind_that_does_not_fit_the_input_is_refused():
    pairs = {"name": "pairs", "format": "entailment", "text_columns": ("a", "b"), "label_names": ("x", "y")}
    with pytest.raises(ValueError, match="label_kind 'choice' does not fit format 'entailment'; only 'choice'"):
        TaskSpec(**pairs, label_kind="choice")
    with pytest.raises(ValueError, match=r"unknown label_kind 'none'; valid kinds: \['choice', 'classes', 'score'"):
        TaskSpec(**pairs, label_kind="none")


class Stars(Classes):
    """A kind of one's own: ratings, written as stars, the baseline the middle rating."""

    name = "stars"
    baseline_name = "middle-rating"

    def constant(self, references: np.ndarray) -> int:
        return int(np.median(references))

    def prediction_value(self, spec: TaskSpec, prediction: object) -> str:
        return "*" * (int(prediction) + 1)


@pytest.fixture
def stars():
    register_label_kind(Stars())
    yield TaskSpec(
        name="ratings",
        format="classification",
        text_columns=("review",),
        label_names=("1", "2", "3"),
        label_kind="stars",
        metric_config="accuracy",
        main_metric="accuracy",
    )
    del LABEL_KINDS["stars"]


def test_a_registered_label_kind_needs_no_edit_outside_the_kinds(stars, tmp_path):
    """Parsing, the head, the baseline and the prediction file all ask the kind: registering it is enough."""
    assert stars.labels.name == "stars" and stars.num_labels == 3 and stars.label_to_id("3") == 2
    assert stars.labels.head_config(stars)["problem_type"] == "single_label_classification"
    assert baseline_name(stars) == "middle-rating"
    scores = score_with_baselines(_Accuracy(), stars, np.array([0, 2, 2]), np.array([0, 1, 2]))
    assert scores["baseline_accuracy"] == pytest.approx(1 / 3)  # the middle rating, 1, right once
    path = write_predictions(stars, [0, 2], tmp_path, "test")
    assert path.read_text().splitlines() == ["index\tlabel", "0\t*", "1\t***"]
    assert prediction_warnings(stars, "test", {"majority_share": 1.0, "majority_prediction": 2.0}) == [
        "test: every prediction is '3': the model answers the same whatever the input (check the learning rate, the "
        "number of updates and the labels)."
    ]


class _Accuracy:
    """The metric module's interface, `compute(predictions=, references=)`, for accuracy."""

    def compute(self, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
        return {"accuracy": float((predictions == references).mean())}


def test_the_kinds_module_imports_no_heavy_library():
    # the task table imports it, and the task table is read by tools that load neither numpy nor datasets
    source = Path(kinds.__file__).read_text(encoding="utf-8")
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    light = (
        r"(from __future__|from collections\.abc|from typing|import (ast|json|math|numbers)"
        r"|from \.\.formats|from \.scores)\b"
    )
    assert all(re.match(light, line) for line in top_level), top_level


# ------------------------------------------------------------------------------------------------- multi-label

TOPICS = ("sports", "politics", "science")


@pytest.fixture
def topics() -> TaskSpec:
    return TaskSpec(
        name="topics",
        format="classification",
        text_columns=("text",),
        label_names=TOPICS,
        label_kind="multi_label",
        metric_config="multi_label",
        main_metric="micro_f1",
    )


def test_a_multi_label_set_is_read_from_a_list_or_a_separated_text(topics):
    # a JSON / JSONL list, a CSV / TSV field of names separated by ",", the text pandas writes for a list, ids
    for value in (["sports", "science"], "sports, science", "['sports', 'science']", '["science","sports"]', [0, 2]):
        assert topics.label_to_id(value) == [1.0, 0.0, 1.0], value
    assert topics.label_to_id([]) == topics.label_to_id("[]") == [0.0, 0.0, 0.0]  # no label applies: a valid set
    assert topics.label_to_id("") is None and topics.label_to_id(None) is None  # no gold label, as for every kind
    assert topics.label_to_id("politics") == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "value, message",
    [
        ("sport, science", "label 'sport' is not one of the names ['sports', 'politics', 'science'] or the integer "
         "ids [0, 1, 2]; write a label set as names separated by ',' (CSV/TSV) or as a list (JSON)."),
        (0.7, "label 0.7 is a number, not a label set: write the set as names separated by ',' (CSV/TSV) or as a "
         "list (JSON), e.g. 'sports, politics'."),
        (True, "label True is a number, not a label set"),
        ([["sports"]], "label ['sports'] is not one of the names"),
        ([0, 1, 0], "label [0, 1, 0] reads as one 0/1 flag per label or as label ids: write the set as its "
         "names, e.g. ['politics']."),
        ([1, 1, 1], "label [1, 1, 1] reads as one 0/1 flag per label or as label ids"),
        ([1.0, 0.0, 1.0], "label [1.0, 0.0, 1.0] reads as one 0/1 flag per label or as label ids: write the "
         "set as its names, e.g. ['sports', 'science']."),
    ],
)  # fmt: skip
def test_a_bad_label_set_is_one_line_naming_it_and_the_fix(topics, value, message):
    with pytest.raises(ValueError) as err:
        topics.label_to_id(value)
    assert str(err.value).startswith("Task 'topics': ") and message in str(err.value) and "\n" not in str(err.value)


def test_a_multi_label_task_needs_names_and_a_multi_label_metric():
    base = {"name": "t", "format": "classification", "text_columns": ("text",), "label_kind": "multi_label"}
    with pytest.raises(ValueError, match="label_kind 'multi_label' needs label_names"):
        TaskSpec(**base, metric_config="multi_label", main_metric="micro_f1")
    with pytest.raises(ValueError, match="metric_config 'accuracy' scores one label per row; a multi_label task"):
        TaskSpec(**base, label_names=TOPICS, metric_config="accuracy", main_metric="accuracy")
    with pytest.raises(ValueError, match="metric_config 'multi_label' scores label sets; label_kind 'classes'"):
        TaskSpec(
            **base | {"label_kind": None}, label_names=TOPICS, metric_config="multi_label", main_metric="macro_f1"
        )
    with pytest.raises(ValueError, match="label_kind 'multi_label' does not fit format 'multiple_choice'; a "
                       "multiple-choice task is labelled by 'choice' only."):  # fmt: skip
        TaskSpec(**{**base, "format": "multiple_choice"}, choice_columns=("a",), label_names=TOPICS)


def test_multi_label_head_predictions_and_rows(topics, tmp_path):
    assert topics.labels.head_config(topics) == {
        "num_labels": 3,
        "id2label": dict(enumerate(TOPICS)),
        "label2id": {name: i for i, name in enumerate(TOPICS)},
        "problem_type": "multi_label_classification",  # BCE with logits (GPT1ForSequenceClassification)
    }
    logits = np.array([[2.0, -1.0, 0.1], [0.0, -3.0, -0.2]], dtype=np.float32)
    preds = topics.labels.predictions(logits)  # the sigmoid above 0.5: a positive logit; 0.5 itself is no
    assert preds.tolist() == [[1, 0, 1], [0, 0, 0]]
    path = write_predictions(topics, preds.tolist(), tmp_path, "test")
    assert path.read_text().splitlines() == ["index\tlabel", '0\t["sports", "science"]', "1\t[]"]
    for line in path.read_text().splitlines()[1:]:  # what is written reads back as the same set
        assert topics.label_to_id(line.split("\t")[1]) in ([1.0, 0.0, 1.0], [0.0, 0.0, 0.0])


def test_multi_label_scores_and_baseline(topics):
    from sklearn.metrics import f1_score

    from hf_gpt1.data.metrics import load_metric

    references = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0]], dtype=np.float32)  # as Trainer hands them
    predictions = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 0, 0]])
    scores = score_with_baselines(load_metric(topics), topics, predictions, references)
    assert scores["micro_f1"] == pytest.approx(f1_score(references, predictions, average="micro"))
    assert scores["macro_f1"] == pytest.approx(f1_score(references, predictions, average="macro"))
    assert scores["subset_accuracy"] == pytest.approx(0.25)  # only row 2 is exactly right
    # the constant baseline predicts each label's most common value: sports always, the others never
    constant = np.array([[1, 0, 0]] * 4)
    assert scores["baseline_micro_f1"] == pytest.approx(f1_score(references, constant, average="micro"))
    assert baseline_name(topics) == "majority-per-label"
    assert scores["majority_share"] == 0.25
    warnings = prediction_warnings(
        topics, "test", {"majority_share": 1.0, "majority_prediction": ["sports", "science"]}
    )
    assert warnings[0].startswith('test: every prediction is \'["sports", "science"]\': the model answers the same')


def test_the_majority_prediction_is_the_label_kinds_own_value_for_any_number_of_labels():
    """An int id for classes, the set's names for multi-label (it was a float, a bit per label: inexact past 53
    labels), as JSON writes and reads it back, and the warning names it."""
    import json

    from hf_gpt1.data.metrics import load_metric

    names = tuple(f"tag{i}" for i in range(60))
    many = TaskSpec(name="many", format="classification", text_columns=("text",), label_names=names,
                    label_kind="multi_label", metric_config="multi_label", main_metric="micro_f1")  # fmt: skip
    predictions = np.zeros((4, 60), dtype=np.int64)
    predictions[:, [0, 59]] = 1  # the same set for every row
    references = np.zeros((4, 60), dtype=np.float32)
    references[:, 1] = 1.0
    scores = score_with_baselines(load_metric(many), many, predictions, references)
    assert scores["majority_prediction"] == ["tag0", "tag59"] and scores["majority_share"] == 1.0
    assert json.loads(json.dumps(scores))["majority_prediction"] == ["tag0", "tag59"]
    assert prediction_warnings(many, "test", scores)[0].startswith('test: every prediction is \'["tag0", "tag59"]\'')
    wide = TaskSpec(name="wide", format="classification", text_columns=("text",), label_names=names,
                    metric_config="accuracy", main_metric="accuracy")  # fmt: skip
    scores = score_with_baselines(_Accuracy(), wide, np.full(4, 59), np.arange(4))
    assert scores["majority_prediction"] == 59 and type(scores["majority_prediction"]) is int
    assert prediction_warnings(wide, "test", scores)[0].startswith("test: every prediction is 'tag59'")


# ------------------------------------------------------------------------------------------- names that are numbers

STARS = ("1", "2", "5")  # label names that look like integers, each unequal to its id


def _numbered(label_kind: str | None = None) -> TaskSpec:
    multi = label_kind == "multi_label"
    return TaskSpec(
        name="stars",
        format="classification",
        text_columns=("review",),
        label_names=STARS,
        label_kind=label_kind,
        metric_config="multi_label" if multi else "accuracy",
        main_metric="micro_f1" if multi else "accuracy",
    )


def test_with_names_that_are_numbers_a_text_is_a_name_and_an_integer_an_id():
    """datasets' `ClassLabel` rule: a string is a name, an int is an id. A CSV/TSV cell is always text, so "2" is the
    class named "2" (id 1); a JSON / parquet integer is an id, as a loader's `ClassLabel` column holds it."""
    stars = _numbered()
    assert [stars.label_to_id(v) for v in ("1", "2", "5", " 5")] == [0, 1, 2, 2]
    assert [stars.label_to_id(v) for v in (0, 1, 2, np.int64(2))] == [0, 1, 2, 2]
    for text in STARS:  # an id read back (a GLUE-layout file's ClassLabel column, parsed again) is the same id
        assert stars.label_to_id(stars.label_to_id(text)) == stars.label_to_id(text)
    multi = _numbered("multi_label")
    assert multi.label_to_id("2, 5") == multi.label_to_id(["2", "5"]) == multi.label_to_id([1, 2]) == [0.0, 1.0, 1.0]
    assert multi.label_to_id("['5']") == multi.label_to_id("[2]") == [0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "value, message",
    [
        ("0", "label '0' is not one of the names ['1', '2', '5']: the label names are numbers, so a text label is "
         "read as a name, never as an id; fix the row or the task's label_names"),
        ("3", "label '3' is not one of the names ['1', '2', '5']: the label names are numbers"),
        (5, "label 5 is not one of the names ['1', '2', '5'] or the integer ids [0, 1, 2]: an integer label is a "
         "class id (as in datasets' ClassLabel); write the name as text, \"5\""),
        (7, "label 7 is not one of the names ['1', '2', '5'] or the integer ids [0, 1, 2]"),
    ],
)  # fmt: skip
def test_with_names_that_are_numbers_a_label_is_never_guessed(value, message):
    for spec in (_numbered(), _numbered("multi_label")):
        with pytest.raises(ValueError) as err:
            spec.label_to_id(value)
        assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_names_that_are_any_numbers_are_read_as_names_only():
    """Ratings "0.5", "1.0", "1.5": a text "1" would be id 1, the rating "1.0" by chance; it is refused instead."""
    halves = TaskSpec(name="halves", format="classification", text_columns=("review",),
                      label_names=("0.5", "1.0", "1.5"))  # fmt: skip
    assert halves.label_to_id("1.0") == 1 and halves.label_to_id(2) == 2
    with pytest.raises(ValueError, match="label '1' is not one of the names .*: the label names are numbers"):
        halves.label_to_id("1")
    sst2 = TASKS["sst2"]  # "0" / "1", whose classes are named too: both said
    with pytest.raises(ValueError, match=r"label '7' is not one of the names \['0', '1'\] \(or \['negative', 'pos"):
        sst2.label_to_id("7")


def test_every_file_format_reads_labels_by_one_rule(tmp_path):
    """CSV, TSV and JSONL text cells are names; JSONL integers are ids; a GLUE-layout TSV stores ClassLabel ids that
    tokenization reads back unchanged: the rule is the label kind's, whatever the file."""
    from hf_gpt1.data.files import load_task_splits, read_data_file
    from hf_gpt1.data.tasks import GlueTsvLayout

    stars = _numbered()
    (tmp_path / "t.csv").write_text("review,label\ngood,2\nbad,1\ngreat,5\n")
    (tmp_path / "t.tsv").write_text("review\tlabel\ngood\t2\nbad\t1\ngreat\t5\n")
    (tmp_path / "t.jsonl").write_text('{"review": "good", "label": "2"}\n{"review": "bad", "label": "1"}\n')
    (tmp_path / "ids.jsonl").write_text('{"review": "good", "label": 1}\n{"review": "bad", "label": 0}\n')
    for name, expected in (("t.csv", [1, 0, 2]), ("t.tsv", [1, 0, 2]), ("t.jsonl", [1, 0]), ("ids.jsonl", [1, 0])):
        rows = read_data_file(tmp_path / name, task=stars)
        assert [stars.label_to_id(v) for v in rows["label"]] == expected, name
    columns = {"review": "review", "label": "label"}
    layout = GlueTsvLayout(folder="STARS", files={"train": "train.tsv"}, columns=columns)
    glue_like = TaskSpec(**{**stars.__dict__, "glue_tsv": layout})
    (tmp_path / "STARS").mkdir()
    (tmp_path / "STARS" / "train.tsv").write_text("review\tlabel\ngood\t2\nbad\t1\ngreat\t5\n")
    rows = load_task_splits(glue_like, data_dir=str(tmp_path))[0]["train"]
    assert rows["label"] == [1, 0, 2] and [glue_like.label_to_id(v) for v in rows["label"]] == [1, 0, 2]


def test_a_multi_label_name_holding_the_separator_is_refused_when_the_task_is_read(tmp_path):
    """A CSV/TSV field separates a set's names by ',': a name holding one could never be read, so the declaration is
    refused, naming the label and the fix, before any data is."""
    from hf_gpt1.data.tasks import task_from_file

    path = tmp_path / "topics.json"
    path.write_text(
        '{"name": "topics", "format": "classification", "text_columns": ["text"], "label_kind": "multi_label", '
        '"label_names": ["sports", "arts, crafts"], "metric_config": "multi_label", "main_metric": "micro_f1"}'
    )
    with pytest.raises(ValueError) as err:
        task_from_file(path)
    assert str(err.value) == (
        f"{path}: Task 'topics': label name 'arts, crafts' holds ',', which separates the names of a label set in a "
        "CSV/TSV field: rename the label without ',' (e.g. 'arts and crafts')."
    )
    # one label per row: a name may hold ',' (a CSV field is quoted)
    assert (
        TaskSpec(name="t", format="classification", text_columns=("text",), label_names=("a, b", "c")).num_labels == 2
    )
