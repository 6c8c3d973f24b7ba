# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The table of fine-tuning tasks GPT-1 was evaluated on.

One [`TaskSpec`] per task says which columns hold the text, which of the paper's four input formats (Fig. 1, right)
the task uses, how labels are named, which metric scores it, where the Hub copy lives and how the official GLUE TSV
files are laid out. Recipes, pipelines and the zero-shot code read this table instead of hard-coding columns; reading
and writing the files themselves is `hf_gpt1.data.files`' and `hf_gpt1.data.submissions`' job.

Column names are the Hugging Face Hub names (`nyu-mll/glue` etc.), so a Hub dataset and a GLUE folder feed the same
code. This module imports nothing but the standard library (and hf_gpt1's `formats`, `data.scores` and
`data.strict_files`, which import no more).
"""

from __future__ import annotations

import dataclasses
import numbers
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..formats import INPUT_FORMATS, InputFormat, input_format
from .kinds import LABEL_KINDS, InputKind, LabelKind, input_kind, label_kind
from .scores import METRIC_OUTPUTS, SCORES
from .strict_files import load_strict

__all__ = [
    "BUILTIN_TASKS",
    "FORMATS",
    "METRIC_OUTPUTS",
    "TASKS",
    "GlueTsvLayout",
    "TaskSpec",
    "get_task",
    "glue_task_names",
    "register_task",
    "task_from_file",
    "task_to_dict",
    "unlabelled",
]

FORMATS: tuple[str, ...] = tuple(INPUT_FORMATS)
"""The names of the paper's input transforms ([`~hf_gpt1.formats.INPUT_FORMATS`], where each is declared)."""


@dataclass(frozen=True)
class GlueTsvLayout:
    """Where a task's columns sit in the official GLUE TSV files (the `glue_data/<folder>/` download).

    Args:
        folder (`str`): Sub-folder of the GLUE data directory, e.g. `"CoLA"`.
        files (`Mapping[str, str]`): Split name (Hub spelling: `train`, `validation`, `test`, MNLI's
            `validation_matched`, ...) to file name.
        columns (`Mapping[str, str | int]`): Canonical column name to the TSV header name, or to a 0-based field
            index for files without a header. `"label"` names the gold-label column.
        test_columns (`Mapping[str, str]`, *optional*): Same for the unlabelled test files, when they are laid out
            differently (CoLA's test file has a header, its train/dev files do not). Defaults to `columns` without
            `"label"`.
        headerless_splits (`tuple[str, ...]`): Splits whose file has no header row.
        index_column (`str`): Header name of the row id that GLUE submissions refer to; files without it use the
            0-based row number, which is what the GLUE server expects for them.
        submission_files (`Mapping[str, str]`): Test split to the file name the GLUE server expects in the zip.
    """

    folder: str
    files: Mapping[str, str]
    columns: Mapping[str, str | int]
    test_columns: Mapping[str, str] | None = None
    headerless_splits: tuple[str, ...] = ()
    index_column: str = "index"
    submission_files: Mapping[str, str] = field(default_factory=dict)

    def columns_for(self, split: str) -> Mapping[str, str | int]:
        """The column map of `split` (the test files carry no label)."""
        if not split.startswith("test"):
            return self.columns
        if self.test_columns is not None:
            return self.test_columns
        return {name: col for name, col in self.columns.items() if name != "label"}


# A task's name names its run's files (predictions, the task file beside the model): a name, never a path, and short
# enough for every file name made from it (a file name holds at most 255 bytes).
_TASK_NAME = re.compile(r"[A-Za-z0-9_.-]+")
MAX_TASK_NAME = 64
# The TaskSpec fields that hold lists of strings (a string there would be read as a list of its characters).
_LIST_FIELDS = ("text_columns", "label_names", "class_names", "choice_columns", "id_subsets", "eval_splits", "aliases")


@dataclass(frozen=True)
class TaskSpec:
    """Everything the package needs to know about one fine-tuning task.

    Args:
        name (`str`): Canonical lower-case name (`"rte"`, `"story_cloze"`, ...).
        format (`str`): One of [`FORMATS`]. `classification` takes one text column, `entailment` and `similarity`
            two, `multiple_choice` a context plus answers.
        text_columns (`tuple[str, ...]`): The text columns. For `multiple_choice` these are the parts of the
            context, joined with a space in this order (Story Cloze: its four sentences).
        label_names (`tuple[str, ...]`, *optional*): Label values as written in the task's own files (and in GLUE
            submissions), in id order. `None` means regression (STS-B), or, for `multiple_choice`, that labels are
            already 0-based choice indices.
        label_column (`str`): The gold-label column.
        label_offset (`int`): Subtracted from integer labels: Story Cloze numbers its endings 1 and 2.
        label_range (`tuple[float, float]`, *optional*): Regression only: the closed range of valid scores (STS-B:
            0 to 5); a score outside it is refused.
        choice_columns (`tuple[str, ...]`): `multiple_choice` only: the answer columns, in choice order; a column
            holding a list (RACE's `options`) contributes every element.
        choice_prefix_column (`str`, *optional*): `multiple_choice` only: text that starts every answer (SWAG's
            `sent2`, the first words of each ending).
        question_column (`str`, *optional*): `multiple_choice` only: text read after the context and kept whole
            (RACE's `question`): truncation cuts the context's end, never the question or an answer.
        id_column (`str`, *optional*): The column holding each row's id, written beside its test prediction (Story
            Cloze's `InputStoryid`); GLUE files use their `index` instead.
        id_names_group (`bool`): The id column names a group of rows, not a row (RACE's `example_id` is the article's
            file, shared by its questions): the k-th row of a group is identified as `<id>#<k>` ([`row_ids`]).
        id_subsets (`tuple[str, ...]`): Prefixes of the ids naming subsets that are scored apart as well, from the
            same predictions (RACE: `middle` and `high` school exams).
        metric_config (`str`, *optional*): Config of the local metric module (`hf_gpt1.data.metrics.load_metric`): a
            key of [`METRIC_OUTPUTS`], a GLUE task's name or a kind (`accuracy`, `accuracy_f1`, ...).
        main_metric (`str`, *optional*): The key of that metric's output the paper reports (one of the config's
            [`METRIC_OUTPUTS`]).
        hub (`tuple[str, str | None]`, *optional*): `(path, config)` of the Hub copy whose columns match this spec.
        glue_tsv (`GlueTsvLayout`, *optional*): Layout of the official GLUE TSV files.
        eval_splits (`tuple[str, ...]`): Splits the paper reports on (MNLI: matched and mismatched).
        predicted_by (`str`, *optional*): A task without training data of its own, predicted by a model fine-tuned
            on this other task (GLUE's diagnostic set AX: by the MNLI model, with MNLI's labels).
        aliases (`tuple[str, ...]`): Other accepted names; [`get_task`] ignores case, `-` and `_`.
        class_names (`tuple[str, ...]`, *optional*): What each class means, where the files write ids (GLUE's SST-2
            `0`/`1` are `negative`/`positive`, the Hub copy's `ClassLabel` names): `config.id2label`, and so what a
            pipeline answers, whatever the source; also accepted as labels. Default: `label_names`.
        label_kind (`str`, *optional*): The kind of label, a key of [`~hf_gpt1.data.kinds.LABEL_KINDS`]. Default:
            `choice` for multiple choice, `classes` with `label_names`, `score` without.
    """

    name: str
    format: str
    text_columns: tuple[str, ...]
    label_names: tuple[str, ...] | None = None
    class_names: tuple[str, ...] | None = None
    label_column: str = "label"
    label_offset: int = 0
    label_range: tuple[float, float] | None = None
    choice_columns: tuple[str, ...] = ()
    choice_prefix_column: str | None = None
    question_column: str | None = None
    id_column: str | None = None
    id_names_group: bool = False
    id_subsets: tuple[str, ...] = ()
    metric_config: str | None = None
    main_metric: str | None = None
    hub: tuple[str, str | None] | None = None
    glue_tsv: GlueTsvLayout | None = None
    eval_splits: tuple[str, ...] = ("validation",)
    predicted_by: str | None = None
    aliases: tuple[str, ...] = ()
    label_kind: str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not _TASK_NAME.fullmatch(self.name) or set(self.name) == {"."}:
            raise ValueError(
                f"Task name {self.name!r}: use ASCII letters (a-z, A-Z), digits, '_', '-' and '.' only: it names the "
                "run's files and folders on every system, so it is never a path."
            )
        if len(self.name) > MAX_TASK_NAME:
            raise ValueError(
                f"Task name {self.name[:20]!r}… has {len(self.name)} characters: use at most {MAX_TASK_NAME} (it "
                "names the run's files, and a file name holds at most 255 bytes with its suffixes)."
            )
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name in _LIST_FIELDS and value is not None:
                if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                    raise ValueError(
                        f"Task {self.name!r}: {item.name} must be a list of strings, got {value!r}; write "
                        f'{item.name}: [a, b] (YAML) or "{item.name}": ["a", "b"] (JSON).'
                    )
        if self.format not in INPUT_FORMATS:
            raise ValueError(f"Task {self.name!r}: unknown format {self.format!r}; valid formats: {list(FORMATS)}.")
        low, high = self.input_format.text_columns
        if not low <= len(self.text_columns) <= high:
            raise ValueError(
                f"Task {self.name!r}: format {self.format!r} takes {low if low == high else f'at least {low}'} text "
                f"column(s), got {list(self.text_columns)}."
            )
        if self.label_kind is not None and self.label_kind not in LABEL_KINDS:
            raise ValueError(
                f"Task {self.name!r}: unknown label_kind {self.label_kind!r}; valid kinds: {list(LABEL_KINDS)}."
            )
        if problem := self.labels.declaration_problem(self):  # the label kind checks what it reads
            raise ValueError(f"Task {self.name!r}: {problem}")
        if self.question_column is not None and not self.inputs.labels_are_choices:
            raise ValueError(
                f"Task {self.name!r}: question_column is for multiple_choice only (format {self.format!r})."
            )
        if self.inputs.labels_are_choices != bool(self.choice_columns):
            raise ValueError(
                f"Task {self.name!r}: choice_columns are required for multiple_choice and only valid there "
                f"(format {self.format!r}, choice_columns {list(self.choice_columns)})."
            )
        if self.metric_config is not None and self.metric_config not in METRIC_OUTPUTS:
            raise ValueError(
                f"Task {self.name!r}: metric_config {self.metric_config!r} is not a config of the metric module; "
                f"use one of {list(METRIC_OUTPUTS)}."
            )
        scores = METRIC_OUTPUTS.get(self.metric_config, ())
        if unknown := [score for score in scores if score not in SCORES]:
            raise ValueError(
                f"Task {self.name!r}: metric_config {self.metric_config!r} gives {unknown}, which hf_gpt1.data.scores."
                "SCORES does not declare (its direction and baseline): add an entry for each."
            )
        if (self.main_metric is None) != (self.metric_config is None) or (
            self.main_metric is not None and self.main_metric not in scores
        ):
            raise ValueError(
                f"Task {self.name!r}: main_metric {self.main_metric!r} is not a score of metric_config "
                f"{self.metric_config!r}, which gives {list(scores)}; give both, or neither."
            )

    @property
    def input_format(self) -> InputFormat:
        """The declaration of this task's format ([`~hf_gpt1.formats.INPUT_FORMATS`])."""
        return input_format(self.format)

    @property
    def inputs(self) -> InputKind:
        """The kind of this task's input ([`~hf_gpt1.data.kinds.InputKind`]): what the code outside the kinds asks
        about the input."""
        return input_kind(self.format)

    @property
    def labels(self) -> LabelKind:
        """The kind of this task's labels ([`~hf_gpt1.data.kinds.LabelKind`]): what the code outside the kinds asks
        about the labels, the head, the metric's baseline and the predictions."""
        return label_kind(self)

    @property
    def is_regression(self) -> bool:
        """Whether the label is a real number (one output, MSE loss)."""
        return self.labels.problem_type == "regression"

    @property
    def num_labels(self) -> int | None:
        """`config.num_labels` for the classification head: 1 for regression, `None` for multiple choice (one logit
        per choice, however many choices)."""
        return self.labels.num_labels(self)

    @property
    def id2label(self) -> dict[int, str] | None:
        """`config.id2label` for the model, or `None` for regression / multiple choice."""
        return self.labels.id2label(self)

    def row_ids(self, ids: Sequence[object]) -> list[object]:
        """The ids a split's rows are known by (in prediction files): the id column's values, or with
        `id_names_group`, `<id>#<k>` for the k-th row (from 0) of each group, in the split's order."""
        if not self.id_names_group:
            return list(ids)
        seen: Counter = Counter()
        named = []
        for value in ids:
            named.append(f"{value}#{seen[value]}")
            seen[value] += 1
        return named

    def label_to_id(self, value: object) -> int | float | None:
        """Normalise one raw label to what the model trains on.

        Args:
            value (`object`): The label as a file or a Hub column holds it: a string (looked up in `label_names`, then
                `class_names`; digits that are no label name are an id, unless a label name is a number: then a
                string is a name only), an integer id (after subtracting `label_offset`; an integer is always an
                id, as in datasets' `ClassLabel`), a bool (the label it names, `"True"` / `"false"` in any case, or
                the id 0 / 1 for the labels `"0"` and `"1"`), or a score (regression, within `label_range`).

        Returns:
            `int | float | None`: The class id or score; `None` for "no gold label": `None`, `""`, `-1` (the Hub's
            mark on test rows, STS-B included; also as text, in a CSV export) and `"-"` (SNLI pairs without
            annotator consensus).

        Raises:
            `ValueError`: The value is not a valid label of this task; the message names it and the valid set.
        """
        return None if unlabelled(value) else self.labels.parse(self, value)


def unlabelled(value: object) -> bool:
    """Whether a raw label value means "no gold label" ([`TaskSpec.label_to_id`]): such rows are dropped before
    training and evaluation."""
    return value is None or (isinstance(value, str) and value.strip() in ("", "-", "-1")) or _is_minus_one(value)


def _is_minus_one(value: object) -> bool:
    # numpy / torch integers and floats compare equal to -1 without being `int`; bools never do.
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value == -1


def _glue(folder: str, columns: Mapping[str, str | int], submission: str, **kwargs) -> GlueTsvLayout:
    """The layout of most GLUE folders: train.tsv, dev.tsv and test.tsv, one submission file."""
    files = {"train": "train.tsv", "validation": "dev.tsv", "test": "test.tsv"}
    return GlueTsvLayout(folder=folder, files=files, columns=columns, submission_files={"test": submission}, **kwargs)


_BINARY = ("0", "1")
_NLI3 = ("entailment", "neutral", "contradiction")
_NLI2 = ("entailment", "not_entailment")
_PAIR = {"sentence1": "sentence1", "sentence2": "sentence2", "label": "label"}

TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec(
            name="cola",
            format="classification",
            text_columns=("sentence",),
            label_names=_BINARY,
            class_names=("unacceptable", "acceptable"),
            metric_config="cola",
            main_metric="matthews_correlation",
            hub=("nyu-mll/glue", "cola"),
            glue_tsv=_glue(
                "CoLA",
                {"sentence": 3, "label": 1},
                "CoLA.tsv",
                test_columns={"sentence": "sentence"},
                headerless_splits=("train", "validation"),
            ),
        ),
        TaskSpec(
            name="sst2",
            format="classification",
            text_columns=("sentence",),
            label_names=_BINARY,
            class_names=("negative", "positive"),
            metric_config="sst2",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "sst2"),
            glue_tsv=_glue("SST-2", {"sentence": "sentence", "label": "label"}, "SST-2.tsv"),
        ),
        # The paper treats MRPC, QQP and STS-B as similarity tasks: both segment orders, summed representations.
        TaskSpec(
            name="mrpc",
            format="similarity",
            text_columns=("sentence1", "sentence2"),
            label_names=_BINARY,
            class_names=("not_equivalent", "equivalent"),
            metric_config="mrpc",
            main_metric="f1",
            hub=("nyu-mll/glue", "mrpc"),
            glue_tsv=_glue(
                "MRPC", {"sentence1": "#1 String", "sentence2": "#2 String", "label": "Quality"}, "MRPC.tsv"
            ),
        ),
        TaskSpec(
            name="qqp",
            format="similarity",
            text_columns=("question1", "question2"),
            label_names=_BINARY,
            class_names=("not_duplicate", "duplicate"),
            metric_config="qqp",
            main_metric="f1",
            hub=("nyu-mll/glue", "qqp"),
            glue_tsv=_glue(
                "QQP",
                {"question1": "question1", "question2": "question2", "label": "is_duplicate"},
                "QQP.tsv",
                index_column="id",
            ),
        ),
        TaskSpec(
            name="stsb",
            format="similarity",
            text_columns=("sentence1", "sentence2"),
            label_range=(0.0, 5.0),
            metric_config="stsb",
            main_metric="pearson",
            hub=("nyu-mll/glue", "stsb"),
            glue_tsv=_glue("STS-B", {**_PAIR, "label": "score"}, "STS-B.tsv"),
        ),
        TaskSpec(
            name="mnli",
            format="entailment",
            text_columns=("premise", "hypothesis"),
            label_names=_NLI3,
            metric_config="mnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "mnli"),
            eval_splits=("validation_matched", "validation_mismatched"),
            aliases=("mnli_m", "mnli_mm", "mnli_matched", "mnli_mismatched", "multinli"),
            # GLUE asks for the diagnostic set (AX) to be predicted by the MNLI model: `test_ax` reads it from the
            # GLUE root's diagnostic/ folder when it is there, and the submission gets AX.tsv.
            glue_tsv=GlueTsvLayout(
                folder="MNLI",
                files={
                    "train": "train.tsv",
                    "validation_matched": "dev_matched.tsv",
                    "validation_mismatched": "dev_mismatched.tsv",
                    "test_matched": "test_matched.tsv",
                    "test_mismatched": "test_mismatched.tsv",
                    "test_ax": "../diagnostic/diagnostic.tsv",
                },
                columns={"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"},
                submission_files={"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv", "test_ax": "AX.tsv"},
            ),
        ),
        # GLUE's diagnostic set: test pairs only, predicted by an MNLI model with MNLI's three labels.
        TaskSpec(
            name="ax",
            format="entailment",
            text_columns=("premise", "hypothesis"),
            label_names=_NLI3,
            metric_config="ax",
            main_metric="matthews_correlation",
            hub=("nyu-mll/glue", "ax"),
            eval_splits=("test",),
            predicted_by="mnli",
            aliases=("diagnostic", "glue_diagnostic"),
            glue_tsv=GlueTsvLayout(
                folder="diagnostic",
                files={"test": "diagnostic.tsv"},
                columns={"premise": "sentence1", "hypothesis": "sentence2"},
                submission_files={"test": "AX.tsv"},
            ),
        ),
        TaskSpec(
            name="qnli",
            format="entailment",
            text_columns=("question", "sentence"),
            label_names=_NLI2,
            metric_config="qnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "qnli"),
            glue_tsv=_glue("QNLI", {"question": "question", "sentence": "sentence", "label": "label"}, "QNLI.tsv"),
        ),
        TaskSpec(
            name="rte",
            format="entailment",
            text_columns=("sentence1", "sentence2"),
            label_names=_NLI2,
            metric_config="rte",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "rte"),
            glue_tsv=_glue("RTE", _PAIR, "RTE.tsv"),
        ),
        TaskSpec(
            name="wnli",
            format="entailment",
            text_columns=("sentence1", "sentence2"),
            label_names=_BINARY,
            class_names=("not_entailment", "entailment"),
            metric_config="wnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "wnli"),
            glue_tsv=_glue("WNLI", _PAIR, "WNLI.tsv"),
        ),
        TaskSpec(
            name="snli",
            format="entailment",
            text_columns=("premise", "hypothesis"),
            label_names=_NLI3,
            metric_config="accuracy",
            main_metric="accuracy",
            hub=("stanfordnlp/snli", "plain_text"),
        ),
        TaskSpec(
            name="scitail",
            format="entailment",
            text_columns=("premise", "hypothesis"),
            label_names=("entails", "neutral"),
            metric_config="accuracy",
            main_metric="accuracy",
            hub=("allenai/scitail", "tsv_format"),
        ),
        # Columns of the ROCStories / Story Cloze 2016 CSVs (val and test). There is no Hub copy with these columns:
        # the CSVs come from the ROCStories request form, and `LSDSem/story_cloze` renames them and needs them too.
        TaskSpec(
            name="story_cloze",
            format="multiple_choice",
            text_columns=("InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4"),
            label_names=("1", "2"),
            label_column="AnswerRightEnding",
            label_offset=1,
            choice_columns=("RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2"),
            id_column="InputStoryid",
            metric_config="accuracy",
            main_metric="accuracy",
            eval_splits=("test",),
            aliases=("storycloze", "rocstories", "roc"),
        ),
        TaskSpec(
            name="race",
            format="multiple_choice",
            text_columns=("article",),
            question_column="question",
            label_names=("A", "B", "C", "D"),
            label_column="answer",
            choice_columns=("options",),
            id_column="example_id",
            id_names_group=True,  # the Hub's example_id is the article's file name, e.g. "high1234.txt"
            id_subsets=("middle", "high"),
            metric_config="accuracy",
            main_metric="accuracy",
            hub=("ehovy/race", "all"),
            eval_splits=("test",),
        ),
        TaskSpec(
            name="swag",
            format="multiple_choice",
            text_columns=("sent1",),
            label_names=("0", "1", "2", "3"),
            choice_columns=("ending0", "ending1", "ending2", "ending3"),
            choice_prefix_column="sent2",
            id_column="fold-ind",
            metric_config="accuracy",
            main_metric="accuracy",
            hub=("allenai/swag", "regular"),
        ),
    )
}
"""Every task of the paper's Tables 2-4 (plus GLUE's diagnostic set and SWAG), by canonical name; [`register_task`]
adds others."""


def _normalise_name(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


_BY_NAME: dict[str, TaskSpec] = {
    _normalise_name(alias): spec for spec in TASKS.values() for alias in (spec.name, *spec.aliases)
}


BUILTIN_TASKS: frozenset[str] = frozenset(TASKS)
"""The tasks declared here; others are registered by their users ([`register_task`])."""
TASK_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def register_task(spec: TaskSpec, exist_ok: bool = False) -> TaskSpec:
    """Declares a task of your own: afterwards every recipe, pipeline and tool takes its name (or an alias).

    ```python
    from hf_gpt1 import TaskSpec, register_task

    register_task(TaskSpec(name="boolq", format="entailment", text_columns=("question", "passage"),
                           label_names=("False", "True"), label_column="answer", metric_config="accuracy",
                           main_metric="accuracy", hub=("google/boolq", None)))
    ```

    The spec is checked when it is built (its format, columns and metric: [`METRIC_OUTPUTS`]).

    Args:
        spec (`TaskSpec`): The task.
        exist_ok (`bool`): Replace a task of the same name registered before (a built-in task is never replaced).

    Returns:
        `TaskSpec`: `spec`.

    Raises:
        `ValueError`: Its name or an alias is another task's (or a built-in task's); the message names it.
    """
    if not isinstance(spec, TaskSpec):
        raise TypeError(f"register_task takes a TaskSpec, got {type(spec).__name__}.")
    for alias in (spec.name, *spec.aliases):
        taken = _BY_NAME.get(_normalise_name(alias))
        if taken is None or (exist_ok and taken.name == spec.name and spec.name not in BUILTIN_TASKS):
            continue
        kind = "the built-in task" if taken.name in BUILTIN_TASKS else "the registered task"
        again = "" if taken.name in BUILTIN_TASKS else " (exist_ok=True replaces it)"
        raise ValueError(f"Task name {alias!r} is already {kind} {taken.name!r}{again}; choose another name.")
    if spec.name in TASKS:  # replaced: its old aliases go too
        for alias in (TASKS[spec.name].name, *TASKS[spec.name].aliases):
            _BY_NAME.pop(_normalise_name(alias), None)
    TASKS[spec.name] = spec
    _BY_NAME.update({_normalise_name(alias): spec for alias in (spec.name, *spec.aliases)})
    return spec


def task_from_file(path: str | os.PathLike) -> TaskSpec:
    """A task declared in a JSON or YAML file of [`TaskSpec`] fields (lists for tuples; `glue_tsv` an object of
    [`GlueTsvLayout`] fields), registered under its name.

    Raises:
        `ValueError`: The file is unreadable, or a field is unknown or invalid; the message names the file.
    """
    path = Path(path)
    try:
        fields = load_strict(path)
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a readable task file ({err}).") from None
    if not isinstance(fields, dict):
        raise ValueError(f"{path}: a task file holds one object of TaskSpec fields (name, format, text_columns, ...).")
    names = {f.name for f in dataclasses.fields(TaskSpec)}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise ValueError(f"{path}: {unknown[0]!r} is no TaskSpec field; the fields are {sorted(names)}.")
    fields = {key: tuple(value) if isinstance(value, list) else value for key, value in fields.items()}
    if isinstance(fields.get("glue_tsv"), dict):
        fields["glue_tsv"] = GlueTsvLayout(**fields["glue_tsv"])
    try:
        spec = TaskSpec(**fields)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from None
    return register_task(spec, exist_ok=True)


def task_to_dict(spec: TaskSpec) -> dict:
    """`spec` as the fields [`task_from_file`] reads (a run writes it beside its model when the task is not built
    in, so that later tools know it)."""
    return dataclasses.asdict(spec)


def get_task(name: str | os.PathLike | TaskSpec) -> TaskSpec:
    """Look a task up by name, ignoring case, `-`, `_` and spaces (`"SST-2"`, `"sts_b"`, `"MNLI-mm"` all work), or
    read a task file ([`task_from_file`]: a `.json`, `.yaml` or `.yml` path).

    Args:
        name (`str` or `TaskSpec`): A task name or alias, or a task file; a `TaskSpec` is returned unchanged.

    Raises:
        `KeyError`: Unknown name; the message lists the valid ones.
    """
    if isinstance(name, TaskSpec):
        return name
    if str(name).endswith(TASK_FILE_SUFFIXES):
        if not Path(name).is_file():
            raise KeyError(f"Task file {name} does not exist; give a task name ({sorted(TASKS)}) or a task file.")
        return task_from_file(name)
    spec = _BY_NAME.get(_normalise_name(str(name)))
    if spec is None:
        raise KeyError(
            f"Unknown task {name!r}; valid tasks: {sorted(TASKS)} (case, '-' and '_' are ignored), or a task file "
            "(.json / .yaml: TaskSpec fields), or register_task()."
        )
    return spec


def glue_task_names() -> list[str]:
    """The tasks that have an official GLUE TSV layout."""
    return [name for name, spec in TASKS.items() if spec.glue_tsv is not None]
