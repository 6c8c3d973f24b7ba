# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Kinds of task: what a task's inputs are and what its labels are, each one class that carries its behaviour.

A [`~hf_gpt1.data.tasks.TaskSpec`] has one input kind (`spec.inputs`: a single text, a pair, a pair read in both
orderings, choices) and one label kind (`spec.labels`: classes, a score, a choice index). Code outside this module asks
the kinds what to do: how a batch of rows becomes token ids, which command fine-tunes the task, how a label is parsed
and stored, the head's configuration and its loss (`problem_type`), the baseline the scores are shown beside, how
logits become predictions and how predictions are written. A new kind is one class here, registered in
[`INPUT_KINDS`] or [`LABEL_KINDS`] ([`register_label_kind`]); a task names its label kind with `label_kind`.

The paper's input formats themselves (the token-level transforms, the head and the collator of each) are declared in
`hf_gpt1.formats`, which is shipped as remote code; an input kind reads its format's row there.

This module imports nothing but the standard library and `hf_gpt1.formats` (numpy and datasets are imported by the
methods that need them): the task table imports it.
"""

from __future__ import annotations

import ast
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..formats import InputFormat, input_format
from .scores import METRIC_OUTPUTS, SCORES

if TYPE_CHECKING:
    import numpy as np

    from .tasks import TaskSpec
    from .transforms import GPT1Preprocessor

__all__ = [
    "INPUT_KINDS",
    "LABEL_KINDS",
    "ChoiceIndex",
    "Choices",
    "Classes",
    "InputKind",
    "LabelKind",
    "MultiLabel",
    "Pair",
    "Score",
    "SimilarityPair",
    "SingleText",
    "input_kind",
    "label_kind",
    "register_label_kind",
]


# ------------------------------------------------------------------------------------------------- inputs


class InputKind:
    """What a task's input is: the columns it reads, how a batch of rows becomes token ids, the command that
    fine-tunes it. One instance per format of `hf_gpt1.formats.INPUT_FORMATS` (its `name`)."""

    name: ClassVar[str]
    described: ClassVar[str] = "not multiple choice"
    """How a refusal names the kind (`--task 'rte' is not multiple choice: ...`)."""
    labels_are_choices: ClassVar[bool] = False
    """Labels index the answers of each example (and `choice_columns`, a question column, `--segment_cap` apply)."""

    @property
    def format(self) -> InputFormat:
        """The format's declaration (transform, head, collator, command)."""
        return input_format(self.name)

    @property
    def command(self) -> str:
        """The `hf-gpt1` command that fine-tunes a task of this kind."""
        return self.format.command

    def command_problem(self, command: str, task: object) -> str | None:
        """Why `hf-gpt1 <command>` does not fine-tune `--task <task>` of this kind, or None when it does."""
        if command.replace("_", "-") == self.command:
            return None
        return f"--task {task!r} is {self.described}: run it with hf-gpt1 {self.command}."

    def empty_text_problem(self, spec: TaskSpec, columns: Mapping[str, Sequence[object]]) -> tuple[int, str] | None:
        """The first row (0-based) and column whose text is empty, which would be classified from its special tokens
        alone; None when every text has words."""
        for name in spec.text_columns:
            empty = next(
                (i for i, text in enumerate(columns[name]) if isinstance(text, str) and not text.strip()), None
            )
            if empty is not None:
                return empty, name
        return None

    def tokenize(self, pre: GPT1Preprocessor, batch: Mapping[str, list], indices: Sequence[int]) -> dict[str, list]:
        """One batch of rows as token columns (`segment_a`, `segment_b`) and `length`, the segment tokens."""
        out: dict[str, list] = {}
        for key, name in zip(("segment_a", "segment_b"), pre.task.text_columns):
            out[key] = pre._tokenize(pre._texts(batch, name, indices))
        out["length"] = [sum(map(len, row)) for row in zip(*(out[k] for k in ("segment_a", "segment_b") if k in out))]
        return out


class SingleText(InputKind):
    """One text per example, `<s> text <e>` (CoLA, SST-2)."""

    name = "classification"


class Pair(InputKind):
    """Two texts, `<s> a <$> b <e>` (entailment: MNLI, RTE, ...)."""

    name = "entailment"


class SimilarityPair(Pair):
    """Two texts read in both orderings, their extract-token states added (MRPC, QQP, STS-B)."""

    name = "similarity"


class Choices(InputKind):
    """A context and one sequence per answer, `<s> context <$> answer_k <e>` (Story Cloze, RACE, SWAG)."""

    name = "multiple_choice"
    described = "multiple choice"
    labels_are_choices = True

    def empty_text_problem(self, spec: TaskSpec, columns: Mapping[str, Sequence[object]]) -> tuple[int, str] | None:
        return None  # a context part may be empty: the answers are scored side by side

    def tokenize(self, pre: GPT1Preprocessor, batch: Mapping[str, list], indices: Sequence[int]) -> dict[str, list]:
        task, n_rows = pre.task, len(indices)
        parts = [pre._texts(batch, name, indices) for name in task.text_columns]
        out: dict[str, list] = {"context": pre._tokenize([" ".join(p for p in row if p) for row in zip(*parts)])}
        if task.question_column:
            out["question"] = pre._tokenize(pre._texts(batch, task.question_column, indices))
        out["choices"] = pre._choices(batch, indices)
        # every answer's sequence is padded to the longest one's
        questions = out.get("question", [[]] * n_rows)
        out["length"] = [
            len(c) + len(q) + max(map(len, a), default=0) for c, q, a in zip(out["context"], questions, out["choices"])
        ]
        return out


INPUT_KINDS: dict[str, InputKind] = {kind.name: kind for kind in (SingleText(), Pair(), SimilarityPair(), Choices())}
"""The input kind of each format of `hf_gpt1.formats.INPUT_FORMATS`, by the format's name."""


def input_kind(name: str) -> InputKind:
    """The [`InputKind`] of the format `name`."""
    input_format(name)  # an unknown format: the formats' own message
    return INPUT_KINDS[name]


# ------------------------------------------------------------------------------------------------- labels


class LabelKind:
    """What a task's labels are, and everything that follows from it: parsing, the stored feature, the head's
    configuration and loss, the constant baseline, predictions from logits, and how predictions are written."""

    name: ClassVar[str]
    problem_type: ClassVar[str | None] = None
    """transformers' `config.problem_type` for the head (its loss): None where the head has no such choice."""
    described: ClassVar[str] = "a classification task"
    label_smoothing: ClassVar[bool] = True
    """`--clf_label_smoothing` applies (a softmax over classes or answers)."""
    baseline_name: ClassVar[str] = "majority-class"
    """What the constant baseline predicts, as the score lines say it."""
    clips_to_range: ClassVar[bool] = False
    """Predictions are clipped to the task's `label_range` in a GLUE submission."""
    for_choices: ClassVar[bool] = False
    """The labels index answers (the input kind's `labels_are_choices` must agree)."""
    label_sets: ClassVar[bool] = False
    """A label is a set (one 0/1 per class), scored by the metric table's `label_sets` scores only."""

    @classmethod
    def default_for(cls, spec: TaskSpec) -> bool:
        """Whether a task that names no `label_kind` has this one."""
        return False

    def declaration_problem(self, spec: TaskSpec) -> str | None:
        """What in a task's declaration does not fit this kind of label (`TaskSpec` refuses it), or None."""
        if self.for_choices != spec.inputs.labels_are_choices:
            rule = (
                "only 'choice' labels multiple choice"
                if self.for_choices
                else "a multiple-choice task is labelled by 'choice' only"
            )
            return f"label_kind {self.name!r} does not fit format {spec.format!r}; {rule}."
        scores = [SCORES[name] for name in METRIC_OUTPUTS.get(spec.metric_config, ()) if name in SCORES]
        if any(score.label_sets != self.label_sets for score in scores):
            if self.label_sets:
                fitting = [c for c, names in METRIC_OUTPUTS.items() if all(SCORES[n].label_sets for n in names)]
                return (
                    f"metric_config {spec.metric_config!r} scores one label per row; a {self.name} task is scored by "
                    f"{' or '.join(map(repr, fitting))} ({', '.join(METRIC_OUTPUTS[fitting[0]])})."
                )
            return (
                f"metric_config {spec.metric_config!r} scores label sets; label_kind {self.name!r} has one label per "
                "row: give label_kind: multi_label, or another metric_config."
            )
        return None

    # the task's labels
    def num_labels(self, spec: TaskSpec) -> int | None:
        """`config.num_labels`: the head's outputs (None: one per answer, however many)."""
        return len(spec.label_names)

    def id2label(self, spec: TaskSpec) -> dict[int, str] | None:
        """`config.id2label`: what each output means."""
        return dict(enumerate(spec.class_names or spec.label_names))

    def head_config(self, spec: TaskSpec) -> dict[str, Any]:
        """The config fields of the task's head (`num_labels` first: setting it resets `id2label`)."""
        id2label = self.id2label(spec)
        overrides: dict[str, Any] = {"num_labels": self.num_labels(spec)}
        if id2label:
            overrides["id2label"], overrides["label2id"] = id2label, {v: k for k, v in id2label.items()}
        if self.problem_type is not None:
            overrides["problem_type"] = self.problem_type
        return overrides

    def parse(self, spec: TaskSpec, value: object) -> object:
        """One gold label (not None, empty, `-` or -1: those are "no label") as the model trains on it.

        Raises:
            `ValueError`: Not a valid label of this task; the message names it and the valid set.
        """
        raise NotImplementedError

    def rows_problem(self, spec: TaskSpec, rows: Any, limit: int | None = None) -> str | None:
        """The first of a split's gold labels (its first `limit` rows, as the run reads them) that does not parse, as
        `Row <i>, column '<label column>': <why>` (0-based, as tokenization says it), or None. `rows`: the split
        (a `datasets.Dataset`); one without the label column has nothing to check. A plan asks this, so that a dry
        run refuses a bad label as the run does."""
        if spec.label_column not in rows.column_names:
            return None
        selected = rows if limit is None or limit >= rows.num_rows else rows.select(range(limit))
        for row, value in enumerate(selected[spec.label_column]):
            try:
                spec.label_to_id(value)
            except ValueError as err:
                return f"Row {row}, column {spec.label_column!r}: {err}"
        return None

    def valid_labels(self, spec: TaskSpec) -> str:
        """The valid labels, as a refusal lists them."""
        ids = range(spec.label_offset, spec.label_offset + len(spec.label_names))
        return f"the names {list(spec.label_names)} or the integer ids {list(ids)}"

    def feature(self, spec: TaskSpec) -> Any:
        """The `datasets` feature that stores parsed labels."""
        import datasets

        return datasets.ClassLabel(names=list(spec.label_names))

    # predictions
    def predictions(self, logits: np.ndarray) -> np.ndarray:
        """The head's outputs → one prediction per example."""
        return logits.argmax(-1)

    def constant(self, references: np.ndarray) -> object:
        """The constant prediction of the baseline: the references' most common label."""
        import numpy as np

        values, counts = np.unique(references, return_counts=True)
        return values[counts.argmax()].item()

    def spread(self, spec: TaskSpec, predictions: np.ndarray) -> dict[str, object]:
        """How varied the predictions are: the most common one (`majority_prediction`, exact in JSON: a class id is
        an int) and its share."""
        import numpy as np

        values, counts = np.unique(predictions, return_counts=True)
        share = float(counts.max() / counts.sum())
        return {"majority_prediction": values[counts.argmax()].item(), "majority_share": share}

    def prediction_name(self, spec: TaskSpec, prediction: object) -> str:
        """How a warning names one prediction (`spread`'s `majority_prediction`)."""
        return (self.id2label(spec) or {}).get(int(prediction), str(int(prediction)))

    def prediction_value(self, spec: TaskSpec, prediction: object) -> str:
        """One prediction as a prediction file writes it: in the task's own label values."""
        if spec.label_names is not None:
            return spec.label_names[int(prediction)]
        return str(int(prediction) + spec.label_offset)

    def submission_value(self, spec: TaskSpec, row: int, prediction: object) -> str:
        """One prediction as a GLUE submission writes it: the label value of the task's TSV files."""
        label_id = int(prediction)
        if not 0 <= label_id < len(spec.label_names):
            raise ValueError(
                f"Prediction {prediction!r} at row {row} is not a label id of {spec.name!r} "
                f"(0..{len(spec.label_names) - 1})."
            )
        return spec.label_names[label_id]

    def submission_problem(self, spec: TaskSpec, text: str) -> str | None:
        """What is wrong with one prediction read back from a GLUE submission, or None."""
        return None if text in spec.label_names else f"{text!r} is not one of {list(spec.label_names)}"

    # the model card
    def pipeline_arguments(self, spec: TaskSpec) -> dict[str, object]:
        """The arguments a `text-classification` pipeline call needs to answer for this kind of label (the card's
        usage shows them); none: the pipeline's top label is the answer."""
        return {}

    def pipeline_answer(self, spec: TaskSpec) -> str | None:
        """What that call returns, as the card's usage comments it; None: the pipeline's usual answer."""
        return None


class Classes(LabelKind):
    """One class per example, from `label_names`: cross-entropy over the classes."""

    name = "classes"
    problem_type = "single_label_classification"

    @classmethod
    def default_for(cls, spec: TaskSpec) -> bool:
        return spec.label_names is not None

    def parse(self, spec: TaskSpec, value: object) -> int:
        # datasets' ClassLabel rule: a text is a name, an integer is an id. A CSV/TSV cell is always text, so with
        # names that are numbers ("1", "2", "5" stars) "2" is the class named "2"; a JSON / parquet integer, or a
        # ClassLabel id a loader stored, is an id (reading an id again gives the same id).
        if isinstance(value, bool) and spec.label_names is not None:  # a bool column (BoolQ's `answer`)
            named = [name.lower() for name in spec.label_names]
            if str(value).lower() in named:
                return named.index(str(value).lower())
            if tuple(spec.label_names) == ("0", "1"):
                return int(value)  # False, True: the ids 0, 1
        if isinstance(value, str):
            text = value.strip()
            for names in (spec.label_names, spec.class_names):
                if names is not None and text in names:
                    return names.index(text)
            if _is_integer(text):
                if self._numbered(spec):  # an id reading would guess: "0" of stars "1".."5" is no star
                    also = f" (or {list(spec.class_names)})" if spec.class_names else ""
                    raise ValueError(
                        f"Task {spec.name!r}: label {value!r} is not one of the names {list(spec.label_names)}{also}: "
                        "the label names are numbers, so a text label is read as a name, never as an id; fix the row "
                        "or the task's label_names."
                    )
                return self._check_id(spec, int(text) - spec.label_offset, value)  # an id written as text (a CSV)
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return self._check_id(spec, int(value) - spec.label_offset, value)
        raise ValueError(f"Task {spec.name!r}: label {value!r} is not one of {self.valid_labels(spec)}.")

    @staticmethod
    def _numbered(spec: TaskSpec) -> bool:
        """Some label name is a number ("2", "1.5"): a text is then read as a name only."""
        return any(_is_number(name) for names in (spec.label_names, spec.class_names) for name in names or ())

    def _check_id(self, spec: TaskSpec, label_id: int, raw: object) -> int:
        n = None if spec.label_names is None else len(spec.label_names)
        if label_id < 0 or (n is not None and label_id >= n):
            hint = ""
            if isinstance(raw, numbers.Integral) and str(int(raw)) in (spec.label_names or ()):  # meant as a name
                text = json.dumps(str(int(raw)))  # the name as JSON writes it
                hint = f": an integer label is a class id (as in datasets' ClassLabel); write the name as text, {text}"
            raise ValueError(f"Task {spec.name!r}: label {raw!r} is not one of {self.valid_labels(spec)}{hint}.")
        return label_id


def _is_integer(text: str) -> bool:
    """`text` is an integer written out ("2", "-1")."""
    return text.lstrip("-").isdigit()


def _is_number(text: str) -> bool:
    """`text` is a finite number written out ("2", "1.5", "-1")."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


class ChoiceIndex(Classes):
    """The index of the right answer among an example's choices: a softmax over the answers' scores."""

    name = "choice"
    problem_type = None  # the multiple-choice head has one loss
    described = "a multiple-choice task"
    for_choices = True

    @classmethod
    def default_for(cls, spec: TaskSpec) -> bool:
        return spec.inputs.labels_are_choices

    def num_labels(self, spec: TaskSpec) -> int | None:
        return None  # one logit per answer, however many answers

    def id2label(self, spec: TaskSpec) -> dict[int, str] | None:
        return None

    def head_config(self, spec: TaskSpec) -> dict[str, Any]:
        return {}

    def valid_labels(self, spec: TaskSpec) -> str:
        if spec.label_names is None:
            return f"the choice indices (integers from {spec.label_offset})"
        return super().valid_labels(spec)


class Score(LabelKind):
    """A real number per example (STS-B): one output, mean squared error."""

    name = "score"
    problem_type = "regression"
    described = "a regression task"
    label_smoothing = False
    baseline_name = "mean-prediction"
    clips_to_range = True

    @classmethod
    def default_for(cls, spec: TaskSpec) -> bool:
        return spec.label_names is None

    def num_labels(self, spec: TaskSpec) -> int:
        return 1

    def id2label(self, spec: TaskSpec) -> dict[int, str] | None:
        return None

    def head_config(self, spec: TaskSpec) -> dict[str, Any]:
        # the pipeline's label for the score (transformers' default would say LABEL_0)
        return {**super().head_config(spec), "id2label": {0: "similarity"}, "label2id": {"similarity": 0}}

    def parse(self, spec: TaskSpec, value: object) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if isinstance(value, bool) or not math.isfinite(number):
            raise ValueError(f"Task {spec.name!r}: regression label {value!r} is not a finite number.")
        if spec.label_range is not None and not spec.label_range[0] <= number <= spec.label_range[1]:
            low, high = spec.label_range
            raise ValueError(
                f"Task {spec.name!r}: score {value!r} is outside the task's range [{low:g}, {high:g}]; fix or "
                "drop the row (a scale of another dataset?)."
            )
        return number

    def valid_labels(self, spec: TaskSpec) -> str:
        return "finite numbers"

    def feature(self, spec: TaskSpec) -> Any:
        import datasets

        return datasets.Value("float32")

    def predictions(self, logits: np.ndarray) -> np.ndarray:
        return logits.squeeze(-1)

    def constant(self, references: np.ndarray) -> float:
        return float(references.mean())

    def spread(self, spec: TaskSpec, predictions: np.ndarray) -> dict[str, object]:
        return {"prediction_std": float(predictions.std())}

    def prediction_name(self, spec: TaskSpec, prediction: object) -> str:
        return f"{prediction:g}"

    def prediction_value(self, spec: TaskSpec, prediction: object) -> str:
        return f"{float(prediction):.6g}"

    def submission_value(self, spec: TaskSpec, row: int, prediction: object) -> str:
        score = float(prediction)
        if spec.label_range is not None:  # the GLUE server takes scores in the task's range (STS-B's [0, 5])
            score = min(max(score, spec.label_range[0]), spec.label_range[1])
        return f"{score:.3f}"

    def submission_problem(self, spec: TaskSpec, text: str) -> str | None:
        try:
            valid = math.isfinite(float(text))
        except ValueError:
            valid = False
        return None if valid else f"{text!r} is not a score"


class MultiLabel(Classes):
    """A set of labels per example, any number of them from `label_names` (none included): transformers'
    `problem_type="multi_label_classification"`, one sigmoid per label, binary cross-entropy inside L3, a label
    predicted where its sigmoid is above `threshold`, scored by micro and macro F1 (`metric_config: multi_label`).

    A set is read from a list (JSON / JSONL, parquet), or from a text (CSV / TSV) of names separated by `separator`
    (`"sports, science"`), or a list written as text (`["sports", "science"]`, or pandas' `['sports', 'science']`):
    `[]` is the empty set. A name may be given by its id, as for classes. A label name holds no `separator` (the task
    is refused when it is declared: its sets could not be written in a CSV/TSV field). An empty field is no gold
    label, as for every kind. Prediction files write each set as a JSON list of names, which reads back as the same
    set.
    """

    name = "multi_label"
    problem_type = "multi_label_classification"
    described = "a multi-label task"
    label_smoothing = False  # the smoothing inside L3 is a softmax's
    baseline_name = "majority-per-label"
    label_sets = True
    threshold: ClassVar[float] = 0.5
    separator: ClassVar[str] = ","

    @classmethod
    def default_for(cls, spec: TaskSpec) -> bool:
        return False  # named by the task (`label_kind: multi_label`), never guessed

    def declaration_problem(self, spec: TaskSpec) -> str | None:
        if spec.label_names is None:
            return "label_kind 'multi_label' needs label_names: the labels each row's set is made of."
        # a CSV/TSV field lists a set's names between separators: a name holding one could never be read
        if held := next((name for name in spec.label_names if self.separator in name), None):
            renamed = " and ".join(part.strip() for part in held.split(self.separator))
            return (
                f"label name {held!r} holds {self.separator!r}, which separates the names of a label set in a CSV/TSV "
                f"field: rename the label without {self.separator!r} (e.g. {renamed!r})."
            )
        return super().declaration_problem(spec)

    def parse(self, spec: TaskSpec, value: object) -> list[float]:
        how = f"write the set as names separated by {self.separator!r} (CSV/TSV) or as a list (JSON)"
        if isinstance(value, str):
            items = _listed(value.strip())
            if items is None:
                items = [part.strip() for part in value.split(self.separator) if part.strip()]
        elif isinstance(value, (list, tuple)):
            items = list(value)
            flags = len(items) == len(spec.label_names) and all(
                isinstance(item, numbers.Real) and not isinstance(item, bool) and item in (0, 1) for item in items
            )
            if flags:  # transformers' multi-hot layout, or ids: never guessed
                names = [name for name, flag in zip(spec.label_names, items) if flag == 1]
                raise ValueError(
                    f"Task {spec.name!r}: label {value!r} reads as one 0/1 flag per label or as label ids: "
                    f"write the set as its names, e.g. {names}."
                )
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            items = [value]  # one id
        else:
            what = "is a number, not a label set" if isinstance(value, numbers.Real) else "is not a label set"
            example = f"{self.separator} ".join(spec.label_names[:2])
            raise ValueError(f"Task {spec.name!r}: label {value!r} {what}: {how}, e.g. {example!r}.")
        hot = [0.0] * len(spec.label_names)
        for item in items:
            try:
                hot[super().parse(spec, item)] = 1.0
            except ValueError as err:  # the name, the valid ones, and how a set is written
                raise ValueError(
                    f"{str(err).removesuffix('.')}; write a label set as names separated by {self.separator!r} "
                    "(CSV/TSV) or as a list (JSON)."
                ) from None
        return hot

    def feature(self, spec: TaskSpec) -> Any:
        import datasets

        return datasets.Sequence(datasets.Value("float32"), length=len(spec.label_names))

    def predictions(self, logits: np.ndarray) -> np.ndarray:
        import numpy as np

        probabilities = 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))  # transformers' pipeline's sigmoid
        return (probabilities > self.threshold).astype(np.int64)

    def constant(self, references: np.ndarray) -> np.ndarray:
        import numpy as np

        return (np.asarray(references).mean(axis=0) > 0.5).astype(np.int64)  # each label's most common value

    def spread(self, spec: TaskSpec, predictions: np.ndarray) -> dict[str, object]:
        import numpy as np

        rows, counts = np.unique(np.asarray(predictions), axis=0, return_counts=True)
        # the most common set as its names: exact in JSON for any number of labels
        names = [name for name, bit in zip(spec.label_names, rows[counts.argmax()]) if bit]
        return {"majority_prediction": names, "majority_share": float(counts.max() / counts.sum())}

    def prediction_name(self, spec: TaskSpec, prediction: object) -> str:
        return json.dumps(list(prediction), ensure_ascii=False)  # the names, as a prediction file writes a set

    def prediction_value(self, spec: TaskSpec, prediction: object) -> str:
        return json.dumps([name for name, bit in zip(spec.label_names, prediction) if bit], ensure_ascii=False)

    def submission_value(self, spec: TaskSpec, row: int, prediction: object) -> str:
        raise ValueError(
            f"Task {spec.name!r} is multi-label: a GLUE submission holds one label per row; remove its glue_tsv "
            "submission_files (its predictions are written as a prediction file)."
        )

    def submission_problem(self, spec: TaskSpec, text: str) -> str | None:
        return f"task {spec.name!r} is multi-label: a GLUE submission holds one label per row"

    def pipeline_arguments(self, spec: TaskSpec) -> dict[str, object]:
        return {"top_k": None}  # transformers' pipeline returns the top label alone unless top_k=None

    def pipeline_answer(self, spec: TaskSpec) -> str | None:
        return f"every label's score (its sigmoid); the predicted set: the labels above {self.threshold:g}"


def _listed(text: str) -> list | None:
    """A list written as text (`["a", "b"]`, pandas' `['a', 'b']`, `[]`), or None when `text` is no such list."""
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        items = json.loads(text)
    except ValueError:
        try:
            items = ast.literal_eval(text)  # literals only: nothing is run
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return items if isinstance(items, list) else None


LABEL_KINDS: dict[str, LabelKind] = {kind.name: kind for kind in (ChoiceIndex(), Classes(), Score(), MultiLabel())}
"""Every label kind by name, in the order a task without `label_kind` picks its default ([`LabelKind.default_for`])."""


def register_label_kind(kind: LabelKind) -> LabelKind:
    """Adds a label kind of your own: tasks then name it (`label_kind`), and every command, metric, file and card
    asks it what to do."""
    if not isinstance(kind, LabelKind):
        raise TypeError(f"register_label_kind takes a LabelKind instance, got {type(kind).__name__}.")
    LABEL_KINDS[kind.name] = kind
    return kind


def label_kind(spec: TaskSpec) -> LabelKind:
    """The label kind of `spec`: the one it names (`label_kind`), else the first whose `default_for` takes it."""
    if spec.label_kind is not None:
        return LABEL_KINDS[spec.label_kind]
    return next(kind for kind in LABEL_KINDS.values() if kind.default_for(spec))
