# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Task data in: local files, official GLUE TSV folders, the Hub, and pre-training corpora.

* [`read_data_file`] reads one split from a `.csv`, `.tsv`, `.json`/`.jsonl` or `.parquet` file. A `.tsv` of a GLUE
  task is read the way GLUE's own loader reads it (tabs, no quoting: a field may start with `"`), in the layout of
  the official files when its header is GLUE's; any other table by its header.
* [`load_glue_tsv`] reads one split of an official GLUE folder (`glue_data/RTE/dev.tsv`, ...).
* [`load_task_splits`] combines them for a recipe: the Hub copy, or a GLUE folder, with single splits overridden by
  files; Story Cloze's 1,497 / 374 split of the 2016 validation CSV.
* [`load_corpus`] reads the plain text of language-model pre-training (local files or a Hub dataset).

Every problem is a `ValueError` (or `FileNotFoundError`) naming the file, the line or column, and the fix. This
module imports neither torch nor transformers.
"""

from __future__ import annotations

import csv
import io
import math
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import datasets
import numpy as np
import pyarrow.compute as pc

from ..errors import ArgumentProblems
from .fingerprint import content_cache_dir, file_digest, refuse_repeated_inputs
from .hub_access import hub_access
from .strict_files import check_json_keys
from .tasks import GlueTsvLayout, TaskSpec, get_task, glue_task_names

__all__ = [
    "check_unique_ids",
    "each_file",
    "load_hub_copy",
    "STORY_CLOZE_SEED",
    "STORY_CLOZE_VALIDATION_ROWS",
    "load_corpus",
    "load_glue_tsv",
    "load_task_splits",
    "read_data_file",
    "story_cloze_split",
]

F, T = TypeVar("F"), TypeVar("T")

# The original code's split of the Story Cloze 2016 validation CSV into training and validation stories.
STORY_CLOZE_SEED = 3535999445
STORY_CLOZE_VALIDATION_ROWS = 374

_TABLE_SUFFIXES = {"csv", "tsv"}
_LOADERS = {"json": "json", "jsonl": "json", "parquet": "parquet"}
# Official GLUE fields can be long (QQP, MNLI); Python's csv module refuses fields over 128 KiB by default.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


# ------------------------------------------------------------------------------------------------ reading tables


# The first bytes of the compressed formats a text file is most often mistaken for.
COMPRESSED_MAGIC = {
    b"\x1f\x8b": ("gzip", "gunzip -c {name} > {stem}"),
    b"PK\x03\x04": ("zip", "unzip {name}"),
    b"BZh": ("bzip2", "bunzip2 -c {name} > {stem}"),
    b"\xfd7zXZ\x00": ("xz", "unxz -c {name} > {stem}"),
    b"(\xb5/\xfd": ("zstd", "zstd -d {name} -o {stem}"),
}


def compressed_error(path: Path, head: bytes) -> ValueError | None:
    """The error for a text input whose first bytes `head` are a compressed archive's (None when they are not)."""
    for magic, (kind, command) in COMPRESSED_MAGIC.items():
        if head.startswith(magic):
            stem = f"{path.stem}.uncompressed{path.suffix}" if path.suffix else f"{path.name}.txt"
            return ValueError(
                f"{path} holds {kind}-compressed bytes, not text: decompress it first "
                f"({command.format(name=path.name, stem=stem)}) and pass the decompressed file."
            )
    return None


def not_utf8_error(path: Path, line: int, byte: int) -> ValueError:
    """The error for a `byte` on line `line` (1-based) of `path` that is not UTF-8, naming the fix."""
    return ValueError(
        f"{path}:{line} is not UTF-8 text (byte {byte:#x}); re-save the file as UTF-8, e.g. "
        f"iconv -f latin1 -t utf-8 {path.name} > fixed.{path.suffix.lstrip('.')}."
    )


def each_file(files: Iterable[F], read: Callable[[F], T]) -> list[T]:
    """`read` of every file (a path, or what names one) in order, every file's problem found: one is raised as it
    was, several in one `ArgumentProblems` (one line each), so that a user fixes them all at once, not one run at a
    time."""
    results, errors = [], []
    for file in files:
        try:
            results.append(read(file))
        except (ValueError, OSError) as err:
            if str(err) not in map(str, errors):  # a file given twice (train and validation) is said once
                errors.append(err)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ArgumentProblems([problem for err in errors for problem in _problems(err)])
    return results


def _problems(err: Exception) -> list[str]:
    return err.problems if isinstance(err, ArgumentProblems) else [str(err)]


def check_text_file(path: str | Path) -> None:
    """A text input must be a file holding something, and not a compressed archive."""
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise FileNotFoundError(f"{path} {what} (a text file was expected).")
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty (a text file was expected).")
    with open(path, "rb") as f:
        if (error := compressed_error(path, f.read(8))) is not None:
            raise error


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if (error := compressed_error(path, data[:8])) is not None:
        raise error
    try:
        return data.decode("utf-8-sig")  # a UTF-8 BOM (MRPC's files have one) is not part of the first column's name
    except UnicodeDecodeError as err:
        raise not_utf8_error(path, data[: err.start].count(b"\n") + 1, data[err.start]) from None


def _read_rows_text(path: Path) -> str:
    """A data file's text (tables, JSON lines): a byte-order mark may start the file; one that starts a later line
    marks a second file joined on (`cat`) and would corrupt that row's first field. Inside a line it is text (QNLI's
    official dev.tsv holds one in a sentence), read as it is, as GLUE's loaders read it."""
    text = _read_text(path)
    bom = text.find("\n\ufeff")
    if bom >= 0:
        raise ValueError(
            f"{path}:{text.count(chr(10), 0, bom) + 2} holds a byte-order mark (U+FEFF, invisible in most "
            "editors) at its start, where a second file was joined on; delete it from that line, or join the files "
            "without it."
        )
    return text


def _table_rows(path: Path, tsv: bool) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank row; TSV without quoting, as GLUE's loader reads it. Rows end at a
    line feed only: U+2028, NEL and the other characters `str.splitlines` also breaks at are text inside a field."""
    text = _read_rows_text(path)
    if tsv:
        reader = csv.reader(
            [line.removesuffix("\r") for line in text.split("\n")], delimiter="\t", quoting=csv.QUOTE_NONE
        )
    else:
        reader = csv.reader(io.StringIO(text, newline=""))
    rows = []
    try:
        for fields in reader:
            if fields and any(field.strip() for field in fields):  # blank lines (a file's trailing ones) are no rows
                rows.append((reader.line_num, fields))
    except csv.Error as err:
        raise ValueError(f"{path}:{reader.line_num}: cannot parse it as CSV ({err}); check its quoting.") from None
    return rows


def _check_header(header: Sequence[str], path: Path) -> None:
    names = [name.strip() for name in header]
    if any(not name for name in names):
        raise ValueError(f"{path}:1: the header has an empty column name ({list(header)}); name every column.")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(
            f"{path}:1: the header names column(s) {duplicates} more than once; rename the copies so that "
            "each column is read once."
        )


def _refuse_repeated_header(header: Sequence[str], rows: Sequence[tuple[int, list[str]]], path: Path):
    """A row equal to the header is a second file's header (files joined with `cat`), not an example."""
    names = [name.strip() for name in header]
    for line, fields in rows:
        if [field.strip() for field in fields] == names:
            raise ValueError(
                f"{path}:{line} repeats the header row (two files joined with `cat`?); delete that line, or "
                "join the files without their headers."
            )


def _refuse_duplicate_ids(ids: Sequence[object], places: Sequence[str], column: str) -> None:
    """Predictions are matched to rows by id: two rows with one id cannot both be answered. `places[i]` says where
    row i is (`file:line`)."""
    first: dict[object, str] = {}
    for row_id, place in zip(ids, places):
        if row_id in first:
            raise ValueError(
                f"{place}: {column} {row_id!r} is also the id of the row at {first[row_id]}; each row needs its own "
                "id (predictions refer to rows by it). Remove the duplicate or restore the original ids."
            )
        first[row_id] = place


def _read_table(path: Path) -> datasets.Dataset:
    """A `.csv` / `.tsv` file with a header row, every field as text (an empty field stays "", "NA" stays "NA")."""
    rows = _table_rows(path, tsv=path.suffix.lower() == ".tsv")
    if not rows:
        raise ValueError(f"{path} is empty: it needs a header and at least one row.")
    (_, header), body = rows[0], rows[1:]
    _check_header(header, path)
    if not body:
        raise ValueError(f"{path} holds a header but no rows.")
    _refuse_repeated_header(header, body, path)
    if len(header) == 1:
        other = next((d for d in (",", "\t", ";", "|") if d in header[0]), None)
        if other is not None:
            expected = "tab" if path.suffix.lower() == ".tsv" else "comma"
            raise ValueError(
                f"{path}: the header parsed as the single column {header[0]!r}: the file is not {expected}-"
                f"separated (it seems to use {other!r}). Save .csv files with commas and .tsv files with tabs."
            )
    columns: dict[str, list[str]] = {name.strip(): [] for name in header}
    for line, fields in body:
        if len(fields) != len(header):
            raise ValueError(
                f"{path}:{line}: expected {len(header)} fields like the header, got {len(fields)}. Fix that "
                "row (a tab or an unbalanced quote inside a text?) so every row has the header's fields."
            )
        for name, value in zip(columns, fields):
            columns[name].append(value)
    return datasets.Dataset.from_dict(columns)


def _read_with_datasets(path: Path, loader: str) -> datasets.Dataset:
    """JSON / JSONL / parquet through `datasets`, with parse failures turned into one line naming the file."""
    if loader == "json":
        # names the line of a non-UTF-8 byte or a BOM, and a key given twice; the JSON parsers would not (one of
        # datasets' keeps the last)
        check_json_keys(_read_rows_text(path), path)
    dataset = _load_by_content(
        loader, [path], str(path), "JSON files hold one object per line (JSONL) or a list of objects."
    )
    if dataset.num_rows == 0:
        raise ValueError(f"{path} holds no rows.")
    return dataset


def read_data_file(path: str | Path, task: TaskSpec | None = None, split: str = "train"):
    """Reads one split of task data from a local file.

    Args:
        path (`str` or `Path`): A `.csv`, `.tsv`, `.json`, `.jsonl` or `.parquet` file with one row per example.
        task (`TaskSpec`, *optional*): With a GLUE task, a `.tsv` whose header (or, for CoLA's train/dev files, whose
            header-less layout) is the official one is read with [`load_glue_tsv`]'s rules and column names.
        split (`str`): The split the file holds (`train`, `validation`, `test`): which GLUE layout applies.

    Returns:
        `datasets.Dataset`: The rows, with the file's column names (the task's Hub names for GLUE-layout files).
    """
    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    if path.is_dir():  # before its suffix: a folder has no file type
        raise FileNotFoundError(f"{path} is a folder, not a file.")
    if suffix not in _TABLE_SUFFIXES and suffix not in _LOADERS:
        raise ValueError(f"{path}: unsupported file type {suffix!r}; use .csv, .tsv, .json, .jsonl or .parquet.")
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist.")
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty: it needs a header and at least one row.")
    if suffix in _LOADERS:
        return _read_with_datasets(path, _LOADERS[suffix])
    if suffix == "tsv" and task is not None and task.glue_tsv is not None:
        layout_split = _glue_layout_split(task.glue_tsv, split)
        if layout_split is not None and _has_glue_layout(path, task.glue_tsv, layout_split):
            return _read_glue_file(path, task, layout_split)
    return _read_table(path)


def _glue_layout_split(layout: GlueTsvLayout, split: str) -> str | None:
    """The split of the official layout that a user's `split` file follows (MNLI's `validation` is its matched dev)."""
    if split in layout.files:
        return split
    return next((name for name in layout.files if name.startswith(split)), None)


def _has_glue_layout(path: Path, layout: GlueTsvLayout, split: str) -> bool:
    rows = _table_rows(path, tsv=True)[:1]
    if not rows:
        return False
    first = [field.strip() for field in rows[0][1]]
    columns = layout.columns_for(split)
    if split in layout.headerless_splits:  # header-less unless the first row names the Hub columns
        return not set(columns) <= set(first)
    return all(col in first for col in columns.values())


def check_unique_ids(rows: datasets.Dataset, column: str, source: str) -> None:
    """Refuses a split whose `column` (the ids its predictions are written with) repeats a value, naming the row."""
    _refuse_duplicate_ids(rows[column], [f"{source} data row {i}" for i in range(1, rows.num_rows + 1)], repr(column))


# ------------------------------------------------------------------------------------------------ GLUE folders


def load_glue_tsv(
    data_dir: str | Path, task: str | TaskSpec, split: str, skip_bad_rows: bool = False
) -> datasets.Dataset:
    """Read one split of an official GLUE TSV folder into a `datasets.Dataset` with the Hub's column names.

    Fields are split on tabs with quoting off (`csv.QUOTE_NONE`: quotes inside sentences are literal) and a UTF-8
    BOM is ignored (MRPC has one). Labels become `ClassLabel` ids in the task's label order (regression: `float32`);
    test splits have no label column. An `idx` column carries the file's row id, which GLUE submissions use.

    Args:
        data_dir (`str` or `Path`): Either the GLUE root (holding `CoLA/`, `RTE/`, ...) or the task folder itself.
        task (`str` or `TaskSpec`): A GLUE task (see [`~hf_gpt1.data.tasks.get_task`]).
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
        raise ValueError(f"Task {spec.name!r} is not a GLUE task; GLUE TSV tasks: {glue_task_names()}.")
    split = _resolve_split(layout, split, spec.name)
    path = glue_file(data_dir, layout, split)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: expected the GLUE folder layout <data_dir>/{layout.folder}/.")
    return _read_glue_file(path, spec, split, skip_bad_rows=skip_bad_rows)


def glue_file(data_dir: str | Path, layout: GlueTsvLayout, split: str) -> Path:
    """The path of `split`'s file under `data_dir`, the GLUE root or the task's own folder."""
    return _layout_folder(Path(data_dir), layout) / layout.files[split]


def task_folder(data_dir: str | Path, task: TaskSpec) -> Path:
    """The folder of `task`'s files under `data_dir` (the GLUE root or the task's folder; any folder otherwise)."""
    return Path(data_dir) if task.glue_tsv is None else _layout_folder(Path(data_dir), task.glue_tsv)


def _layout_folder(root: Path, layout: GlueTsvLayout) -> Path:
    return root if root.name == layout.folder else root / layout.folder


def _resolve_split(layout: GlueTsvLayout, split: str, task: str) -> str:
    # GLUE's own files say "dev", the Hub says "validation": accept both.
    canonical = split.replace("dev", "validation")
    if canonical not in layout.files:
        raise ValueError(f"Task {task!r} has no split {split!r}; its GLUE TSV splits are {list(layout.files)}.")
    return canonical


def _read_glue_file(path: Path, spec: TaskSpec, split: str, skip_bad_rows: bool = False) -> datasets.Dataset:
    layout = spec.glue_tsv
    columns = layout.columns_for(split)
    rows = _table_rows(path, tsv=True)
    if not rows:
        raise ValueError(f"{path} is empty: an official GLUE file has rows (and a header, but CoLA's).")
    header = None if split in layout.headerless_splits else [field.strip() for field in rows.pop(0)[1]]
    if header is not None:
        missing = [col for col in columns.values() if col not in header]
        if missing:
            raise ValueError(f"{path}: header lacks column(s) {missing}; header is {header}.")
        positions = {name: header.index(col) for name, col in columns.items()}
        n_fields = len(header)
    else:
        positions = dict(columns)
        n_fields = len(rows[0][1]) if rows else 0
    if not rows:
        raise ValueError(f"{path} holds a header but no rows.")
    if header is not None:
        _refuse_repeated_header(header, rows, path)
    # Test rows keep the file's own id for the submission; other splits are numbered like the Hub's `idx`.
    has_index = split.startswith("test") and header is not None and layout.index_column in header
    index_pos = header.index(layout.index_column) if has_index else None

    out: dict[str, list] = {name: [] for name in columns}
    out["idx"] = []
    for row_number, (line, row) in enumerate(rows):
        where = f"{path}:{line}"
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
        if index_pos is None:
            out["idx"].append(row_number)
        else:
            try:
                out["idx"].append(int(row[index_pos]))
            except ValueError:
                raise ValueError(
                    f"{where}: the {layout.index_column!r} column holds {row[index_pos]!r}, not an integer row id; "
                    "GLUE submissions refer to rows by it. Restore the file's original ids."
                ) from None

    if index_pos is not None:
        places = [f"{path}:{line}" for line, row in rows if len(row) == n_fields]
        _refuse_duplicate_ids(out["idx"], places, repr(layout.index_column))
    features = {name: datasets.Value("string") for name in columns if name != "label"}
    if "label" in columns:
        features["label"] = spec.labels.feature(spec)  # ClassLabel ids, or float32 scores: the label kind's
    features["idx"] = datasets.Value("int64")
    ordered = {name: out[name] for name in features}
    return datasets.Dataset.from_dict(ordered, features=datasets.Features(features), split=split)


# ------------------------------------------------------------------------------------------------ a recipe's splits


def story_cloze_split(rows: datasets.Dataset, source: str = "the train file") -> datasets.DatasetDict:
    """The original split of the Story Cloze 2016 validation CSV: 1,497 training and 374 validation stories, by
    `sklearn.model_selection.train_test_split` with the original seed 3535999445 (the rows in its order)."""
    from sklearn.model_selection import train_test_split

    if rows.num_rows <= STORY_CLOZE_VALIDATION_ROWS:
        raise ValueError(
            f"{source} holds {rows.num_rows} stories; the paper's protocol holds out {STORY_CLOZE_VALIDATION_ROWS} "
            "of the 2016 validation CSV's 1,871 for validation and trains on the rest. Give the whole "
            "cloze_test_val__spring2016 CSV, or drop `story_cloze_protocol` and give a `validation_file`."
        )
    train_idx, valid_idx = train_test_split(
        np.arange(rows.num_rows), test_size=STORY_CLOZE_VALIDATION_ROWS, random_state=STORY_CLOZE_SEED
    )
    return datasets.DatasetDict({"train": rows.select(train_idx), "validation": rows.select(valid_idx)})


def load_hub_copy(spec: TaskSpec, split: str | None = None):
    """The task's Hub copy (`datasets.load_dataset(*spec.hub, split=split)`), read when no local files were given."""
    with hub_access(
        f"`task` {spec.name} reads {'/'.join(spec.hub)} from the Hub (no local files were given)",
        "give `data_dir` with the task's GLUE TSV files, or `train_file` / `validation_file` / `test_file`",
    ):
        return datasets.load_dataset(*spec.hub, split=split)


def load_task_splits(
    spec: TaskSpec,
    *,
    data_dir: str | None = None,
    train_file: str | None = None,
    validation_file: str | None = None,
    test_file: str | None = None,
    story_cloze_protocol: bool = False,
) -> tuple[datasets.DatasetDict, dict[str, str]]:
    """A task's raw splits for a recipe, and where each came from (for messages and the model card).

    Sources, in order: the Hub copy when neither `data_dir` nor a file is given; else the splits of the GLUE folder
    `data_dir` whose files exist (a folder with dev/test files only serves a prediction run), each overridden by
    `train_file`, `validation_file` or `test_file`. With `story_cloze_protocol`, the train file (the 2016 validation
    CSV) is split into train and validation as in the original. Errors name the file (path, line) or the argument
    (`data_dir`, ...): the command line's layer names them by its flags.

    Returns:
        `tuple[datasets.DatasetDict, dict[str, str]]`: The splits, and `{split: "path" | "path (train part of the
        protocol's split)" | "the Hub copy ..."}`.
    """
    files = {"train": train_file, "validation": validation_file, "test": test_file}
    files = {split: path for split, path in files.items() if path}
    if story_cloze_protocol and "train" not in files:
        raise ValueError("`story_cloze_protocol` needs a `train_file` (the 2016 Story Cloze validation CSV).")
    if story_cloze_protocol and "validation" in files:
        raise ValueError(
            "`story_cloze_protocol` takes its validation stories from the `train_file` (374 of the 2016 validation "
            "CSV); drop the `validation_file`, or drop `story_cloze_protocol` to use your own split."
        )
    raw: dict[str, datasets.Dataset] = {}
    sources: dict[str, str] = {}
    if data_dir:
        if spec.glue_tsv is None:
            raise ValueError(
                f"`data_dir` reads GLUE TSV folders; {spec.name!r} is not a GLUE task: give its `train_file`, ..."
            )
        root = Path(data_dir)
        if not root.is_dir():
            raise FileNotFoundError(f"{root} is not a folder; give the GLUE root or the task folder.")
        for split in spec.glue_tsv.files:
            if split not in files and glue_file(root, spec.glue_tsv, split).is_file():
                raw[split] = load_glue_tsv(root, spec, split)
                sources[split] = f"{glue_file(root, spec.glue_tsv, split)}"
        if not raw and not files:
            raise FileNotFoundError(
                f"{root} holds none of {spec.name}'s GLUE files "
                f"({', '.join(f'{spec.glue_tsv.folder}/{name}' for name in spec.glue_tsv.files.values())})."
            )
    read = each_file(files.items(), lambda file: read_data_file(file[1], task=spec, split=file[0]))
    for (split, path), rows in zip(files.items(), read):
        if story_cloze_protocol and split == "train":
            for name, part in story_cloze_split(rows, f"{path}").items():
                raw[name], sources[name] = part, f"{path} ({name} part of the protocol's split)"
        else:
            raw[split], sources[split] = rows, f"{path}"
    if not raw:
        if spec.hub is None:
            raise ValueError(
                f"{spec.name!r} has no Hub copy with its columns: give a `train_file` and a `validation_file`."
            )
        raw = dict(load_hub_copy(spec))
        sources = {split: f"the Hub copy {spec.hub[0]}" for split in raw}
    if spec.id_names_group:  # one id per row: RACE's example_id names the article, shared by its questions
        raw = {split: _named_rows(spec, rows) for split, rows in raw.items()}
    return datasets.DatasetDict(raw), sources


def _named_rows(spec: TaskSpec, rows: datasets.Dataset) -> datasets.Dataset:
    """`rows` with the id column replaced by [`TaskSpec.row_ids`] (a split without the column as it is)."""
    if spec.id_column not in rows.column_names:
        return rows
    ids = spec.row_ids(rows[spec.id_column])
    return rows.remove_columns(spec.id_column).add_column(spec.id_column, ids)


# ------------------------------------------------------------------------------------------------ text corpora

TEXT_BUILDERS = {"txt": "text", "text": "text", "json": "json", "jsonl": "json", "csv": "csv", "parquet": "parquet"}


def load_corpus(
    train_files: Sequence[str] | None,
    validation_files: Sequence[str] | None = None,
    *,
    dataset_name: str | None = None,
    dataset_config_name: str | None = None,
    text_column: str = "text",
    streaming: bool = False,
    validation_split_percentage: float = 5.0,
) -> tuple[datasets.Dataset | datasets.IterableDataset, datasets.Dataset | datasets.IterableDataset]:
    """(train, validation) documents with one `text` column, for language-model pre-training.

    From local files (`.txt`: one document per line; `.jsonl`, `.csv`, `.parquet`: a text column) or a Hub dataset
    (streamed when asked). Without validation files or split, `validation_split_percentage` of the training documents
    are held out for perplexity.
    """
    if bool(train_files) == bool(dataset_name):
        raise ValueError("Give exactly one text source: `train_files` (local) or `dataset_name` (Hub).")
    if train_files:
        refuse_repeated_inputs({"`train_files`": train_files, "`validation_files`": validation_files or []})
        train = _read_text_files(train_files, text_column, "`train_files`")
        validation = (
            _read_text_files(validation_files, text_column, "`validation_files`") if validation_files else None
        )
    else:
        with hub_access(f"`dataset_name` {dataset_name}", "give local text files (`train_files`) instead"):
            splits = datasets.load_dataset(dataset_name, dataset_config_name, streaming=streaming)
        if text_column not in splits["train"].column_names:
            raise ValueError(
                f"{dataset_name} has no column {text_column!r}; its columns are {splits['train'].column_names}: give "
                "the text's column as `text_column`."
            )
        _refuse_missing_text(splits["train"], text_column, f"`dataset_name` {dataset_name} (train)")
        train = _text_only(splits["train"], text_column)
        held = next((s for s in ("validation", "valid", "test") if s in splits), None)
        validation = None
        if held is not None:
            _refuse_missing_text(splits[held], text_column, f"`dataset_name` {dataset_name} ({held})")
            validation = _text_only(splits[held], text_column)
    if validation is None:
        if isinstance(train, datasets.IterableDataset):
            raise ValueError("A streamed corpus needs a validation split or `validation_files` for perplexity.")
        held_out_count(train.num_rows, validation_split_percentage)
        parts = train.train_test_split(test_size=validation_split_percentage / 100, seed=0, shuffle=False)
        train, validation = parts["train"], parts["test"]
    return train, validation


def held_out_count(documents: int, validation_split_percentage: float) -> int:
    """How many of a corpus's last documents are held out for perplexity when no validation text is given (as
    `train_test_split` counts them); refuses a percentage or a corpus that leaves nothing to train on."""
    if not 0 < validation_split_percentage < 100:
        raise ValueError(f"`validation_split_percentage` {validation_split_percentage} must be in (0, 100).")
    held_out = math.ceil(documents * validation_split_percentage / 100)
    if documents - held_out < 1:
        raise ValueError(
            f"The corpus has {documents} document(s) (lines, for .txt): too few to hold out "
            f"{validation_split_percentage}% for perplexity. Give `validation_files`, or add text."
        )
    return held_out


def _read_text_files(paths: Sequence[str], text_column: str, name: str) -> datasets.Dataset:
    """The text files given as the argument `name`, read as one dataset of documents."""
    suffixes = {Path(p).suffix.lower().lstrip(".") for p in paths}
    builders = {TEXT_BUILDERS.get(s) for s in suffixes}
    if None in builders or len(builders) != 1:
        raise ValueError(
            f"{name}: text files must share one type among {sorted(TEXT_BUILDERS)}; got {sorted(suffixes)}."
        )
    for path in map(Path, paths):
        check_text_file(path)
        if path.suffix.lower() != ".parquet":
            text = _read_text(path)  # a non-UTF-8 byte is named with its line here, not deep inside the arrow reader
            if TEXT_BUILDERS.get(path.suffix.lower().lstrip(".")) == "json":
                check_json_keys(text, path)
    source = f"{name} {list(map(str, paths))}"
    hint = "Fix the file (CSV: one header row, quoted fields holding commas)."
    dataset = _load_by_content(builders.pop(), paths, source, hint)
    if text_column not in dataset.column_names:
        raise ValueError(
            f"{name} {list(paths)}: no column {text_column!r}; the columns are {dataset.column_names}: give the "
            "text's column as `text_column`."
        )
    _refuse_missing_text(dataset, text_column, f"{name} {list(paths)}" if len(paths) > 1 else str(paths[0]))
    return _text_only(dataset, text_column)


def _load_by_content(builder: str, paths: Sequence[str | Path], source: str, hint: str) -> datasets.Dataset:
    """`datasets.load_dataset` of local files, cached under their content: a file changed while it was read leaves
    no cache under the digest of its earlier content, and is refused. A parse failure is one line naming `source`,
    the cause and `hint`."""
    before = [file_digest(p) for p in paths]
    cache = content_cache_dir(paths)
    try:
        dataset = datasets.load_dataset(
            builder, data_files={"train": [str(p) for p in paths]}, split="train", cache_dir=cache
        )
    except (datasets.exceptions.DatasetGenerationError, ValueError, TypeError) as err:
        cause = err.__cause__ or err.__context__ or err
        raise ValueError(
            f"{source}: cannot parse it as {builder.upper()} ({type(cause).__name__}: {cause}). {hint}"
        ) from None
    changed = [p for p, digest in zip(paths, before) if file_digest(p) != digest]
    if changed:
        shutil.rmtree(cache, ignore_errors=True)
        raise ValueError(
            f"{changed[0]} changed while this run was reading it: nothing was kept of it. Run the same command "
            "again once the file is final."
        )
    return dataset


def _refuse_missing_text(dataset, text_column: str, source: str) -> None:
    """A corpus row whose text cell is empty (null, as CSV and parquet readers give it) names its row."""
    if isinstance(dataset, datasets.IterableDataset):
        return  # streamed: checked as the documents are read (`hf_gpt1.data.packing.pack_windows`)
    nulls = pc.is_null(dataset.with_format("arrow")[:][text_column])
    if pc.any(nulls).as_py():
        row = pc.index(nulls, True).as_py()
        raise ValueError(
            f"{source}: data row {row + 1} has no text in {text_column!r} (an empty cell); fill it in or drop the row."
        )


def _text_only(dataset, text_column: str):
    dataset = dataset.select_columns([text_column])
    return dataset if text_column == "text" else dataset.rename_column(text_column, "text")
