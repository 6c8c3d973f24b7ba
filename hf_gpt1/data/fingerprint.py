# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Local inputs identified by their content, not their path and modification time.

`datasets` keys its cache of a local file by path and modification time, so a file replaced by another of the same size
and time would be read from the old cache; a run's record of its inputs would likewise not notice. Here every local
input gets a SHA-256 of its bytes ([`file_digest`]), computed once per version of the file: the digest is kept beside
the datasets cache, keyed by the file's size, modification time, change time and inode (any write changes the change
time, which no tool can set back). The `datasets` cache of a file then lives under its digest
([`content_cache_dir`]), and a run records the digests of its inputs ([`input_digests`]).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .atomic import write_json_atomic

if TYPE_CHECKING:
    import datasets

__all__ = [
    "PATH_FLAGS",
    "changed_input",
    "comparable_path",
    "comparable_paths",
    "content_cache_dir",
    "file_digest",
    "file_version",
    "input_digests",
    "refuse_repeated_inputs",
    "rows_digest",
]

_CHUNK = 1 << 22


# The arguments that name local files or folders: their spellings (`glue/`, `./glue`, `glue`) are one input.
PATH_FLAGS = (
    "data_dir", "train_file", "validation_file", "test_file", "train_files", "validation_files", "story_cloze_dir",
    "model_name_or_path", "tokenizer_name_or_path",
)  # fmt: skip


def comparable_path(value: object) -> object:
    """An existing local path (or a list of them) spelt one way: absolute and normalised (`glue/`, `./glue` and
    `glue` are one folder). Anything else, a Hub id or a path that does not exist, is kept as given."""
    if isinstance(value, list):
        return [comparable_path(item) for item in value]
    return os.path.abspath(value) if isinstance(value, str) and value and os.path.exists(value) else value


def comparable_paths(values: Mapping[str, object]) -> dict[str, object]:
    """`values` (arguments by name) with each [`PATH_FLAGS`] argument's value through [`comparable_path`]."""
    return {name: comparable_path(value) if name in PATH_FLAGS else value for name, value in values.items()}


def _datasets_cache() -> Path:
    import datasets  # when a cache path is needed: the run records' digests need no `datasets`

    return Path(datasets.config.HF_DATASETS_CACHE)


def _digest_store() -> Path:
    return _datasets_cache() / "hf_gpt1" / "digests"


def file_version(file: str | os.PathLike | int) -> tuple[int, int, int, int]:
    """(size, modification time, change time, inode) of a path or an open file descriptor: any write changes it."""
    stat = os.fstat(file) if isinstance(file, int) else os.stat(file)
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), reused while the file is unchanged."""
    path = Path(path).resolve()
    version = list(file_version(path))
    record = _digest_store() / f"{hashlib.sha256(str(path).encode()).hexdigest()[:32]}.json"
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
        if saved.get("path") == str(path) and saved.get("version") == version:
            return saved["sha256"]
    except (OSError, ValueError, AttributeError):
        pass  # no record yet, or a damaged one: computed again below
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            sha.update(chunk)
    digest = sha.hexdigest()
    try:
        write_json_atomic(record, {"path": str(path), "version": version, "sha256": digest})
    except OSError:  # a read-only cache: the digest is simply computed again next time
        pass
    return digest


def content_cache_dir(paths: Iterable[str | os.PathLike]) -> str:
    """A `datasets` cache folder for data read from `paths`, named by their contents (and their order)."""
    combined = hashlib.sha256("\n".join(file_digest(p) for p in paths).encode()).hexdigest()[:32]
    return str(_datasets_cache() / "hf_gpt1" / "by_content" / combined)


def input_digests(
    inputs: Mapping[str, str | os.PathLike | Iterable[str | os.PathLike] | None], ignore: Iterable[str] = ()
) -> dict[str, dict]:
    """`{flag: {path: sha256}}` of a run's local inputs (paths absolute: one spelling per file): files, and the
    files directly inside folders (a model or a GLUE task folder) but hidden ones and those named in `ignore` (a
    run's own records); names that are not local paths (Hub ids) and absent ones are left out."""
    ignore = set(ignore)
    digests = {}
    for flag, value in inputs.items():
        if value is None:
            continue
        paths = [value] if isinstance(value, (str, os.PathLike)) else list(value)
        files = {}
        for path in map(Path, paths):
            if path.is_file():
                files[os.path.abspath(path)] = file_digest(path)
            elif path.is_dir():
                for child in sorted(path.iterdir()):
                    if child.is_file() and not child.name.startswith(".") and child.name not in ignore:
                        files[os.path.abspath(child)] = file_digest(child)
        if files:
            digests[flag] = files
    return digests


def changed_input(inputs: Mapping[str, Mapping[str, str]]) -> str | None:
    """The first file of a run's recorded inputs ([`input_digests`]: `{flag: {path: sha256}}`) that is gone or now
    differs, or None."""
    for files in inputs.values():
        for path, digest in files.items():
            if not Path(path).is_file() or file_digest(path) != digest:
                return path
    return None


def refuse_repeated_inputs(inputs: Mapping[str, Iterable[str | os.PathLike]]) -> None:
    """Refuses a file named twice among a run's inputs (`{flag: paths}`), by path or by content: a corpus file given
    twice would be trained on twice, and a held-out file that is also a training file measures training data."""
    seen: dict[tuple[str, str], str] = {}  # (kind, key) -> "flag path"
    for flag, paths in inputs.items():
        for path in paths or ():
            if not Path(path).is_file():
                continue  # a missing file is the reader's to name
            here = f"{flag} {path}"
            for kind, key in (("path", str(Path(path).resolve())), ("content", file_digest(path))):
                if (kind, key) in seen:
                    same = "is the same file as" if kind == "path" else "has the same content as"
                    raise ValueError(
                        f"{here} {same} {seen[kind, key]}: its text would be read twice (and held-out text would be "
                        "trained on). Name each file once."
                    )
                seen[kind, key] = here


def rows_digest(splits: Mapping[str, datasets.Dataset], batch_size: int = 10_000) -> str:
    """The SHA-256 (hex) of a dataset's splits as rows: their names, columns and values, in order, whatever their
    source or Arrow chunking. Two copies digest alike only when a run would read the same rows from them."""
    sha = hashlib.sha256()
    for name in sorted(splits):
        rows = splits[name]
        sha.update(json.dumps([name, rows.column_names]).encode())
        for batch in rows.iter(batch_size=batch_size):
            sha.update(json.dumps(batch, sort_keys=True, default=str, ensure_ascii=False).encode())
    return sha.hexdigest()
