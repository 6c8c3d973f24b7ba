# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Files that appear whole or not at all: every file a run writes goes through here.

A file is written to a new temporary name in its own folder (created exclusively, never through a symbolic link),
flushed to disk, then renamed over the final name: a reader, or a run killed at any moment, sees the old file or the
complete new one. A rename replaces a symbolic link at the final name instead of writing through it, so nothing is
ever written outside the folder through a link planted there. Writers that produce several files
(`save_pretrained`) write into a temporary folder beside the target, and each file is then renamed into place.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import logging
import math
import numbers
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "TEMP_PREFIX",
    "finite_values",
    "WRITE_FAILURES",
    "atomic_save",
    "remove_temporaries",
    "write_bytes_atomic",
    "write_figure_atomic",
    "write_json_atomic",
    "write_failure",
    "write_text_atomic",
]

TEMP_PREFIX = ".hf_gpt1-tmp-"
"""Temporary files and folders start with this; a run removes those a killed run left in its folder."""


WRITE_FAILURES = {
    errno.ENOSPC: "no space is left on its disk",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "its file system is read-only",
}
"""The errors of a write that no retry fixes, and what they mean."""


def write_failure(err: BaseException, path: str | os.PathLike) -> OSError | None:
    """`err` as an `OSError` naming `path` when it is a failed write of [`WRITE_FAILURES`] (raised by Python, or by a
    Rust or C++ writer that says `os error N`, or any error with less than 1 MiB left on the disk), else None."""
    seen: list[BaseException] = []
    while err is not None and err not in seen:
        seen.append(err)
        err = err.__cause__ or err.__context__
    for cause in seen:
        code = getattr(cause, "errno", None)
        match = re.search(r"os error (\d+)", str(cause))
        code = code if code in WRITE_FAILURES else int(match[1]) if match else None
        if code in WRITE_FAILURES:
            return OSError(code, os.strerror(code), str(path))
    existing = next((p for p in (Path(path), *Path(path).absolute().parents) if p.exists()), Path.cwd())
    if shutil.disk_usage(existing).free < 1 << 20:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return None


def _temporary_name(folder: Path, name: str) -> Path:
    return folder / f"{TEMP_PREFIX}{secrets.token_hex(4)}-{name}"


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened for fsync
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Writes `data` to `path` through a temporary file, an fsync and a rename; returns `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary_name(path.parent, path.name)
    try:
        with open(tmp, "xb") as f:  # created exclusively: never an existing file or a link
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        tmp.unlink(missing_ok=True)
        failure = write_failure(err, path) if isinstance(err, Exception) else None
        if failure is not None:
            raise failure from err
        raise
    _fsync_folder(path.parent)
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """`write_bytes_atomic` for UTF-8 text."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def finite_values(data: Any, where: str = "") -> tuple[Any, list[str]]:
    """`data` with every non-finite number (NaN, ±inf: not JSON, and read as `.nan` strings by YAML) replaced by None,
    and the dotted names of those replaced."""
    if isinstance(data, dict):
        pairs = [(key, finite_values(value, f"{where}.{key}".lstrip("."))) for key, value in data.items()]
        return {key: value for key, (value, _) in pairs}, [name for _, (_, names) in pairs for name in names]
    if isinstance(data, (list, tuple)):
        items = [finite_values(value, f"{where}[{i}]") for i, value in enumerate(data)]
        return [value for value, _ in items], [name for _, names in items for name in names]
    if isinstance(data, numbers.Real) and not isinstance(data, numbers.Integral) and not math.isfinite(data):
        return None, [where]
    return data, []


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    """Writes `data` as indented, key-sorted JSON, atomically; a non-finite number is written as null, with a warning
    naming it (bare `NaN` is not JSON: strict readers fail on it)."""
    data, replaced = finite_values(data)
    if replaced:
        names = ", ".join(replaced[:5]) + (f" and {len(replaced) - 5} more" if len(replaced) > 5 else "")
        logger.warning("%s: not a finite number, written as null: %s.", path, names)
    return write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str, allow_nan=False) + "\n")


def write_figure_atomic(figure: Any, path: str | os.PathLike, **savefig_kwargs: Any) -> Path:
    """A matplotlib figure saved to `path` (format from its suffix), atomically."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=Path(path).suffix.lstrip(".") or "png", **savefig_kwargs)
    return write_bytes_atomic(path, buffer.getvalue())


@contextlib.contextmanager
def atomic_save(folder: str | os.PathLike) -> Iterator[Path]:
    """A temporary folder beside `folder` for a writer of several files (`save_pretrained`); when the body ends
    normally, each file written there is fsynced and renamed into `folder` (which is created when missing).

        with atomic_save(output_dir) as staging:
            model.save_pretrained(staging)
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    staging = _temporary_name(folder, "save")
    staging.mkdir()
    try:
        yield staging
        for source in sorted(staging.rglob("*")):
            if source.is_file() and not source.is_symlink():
                with open(source, "rb") as f:
                    os.fsync(f.fileno())
                target = folder / source.relative_to(staging)
                if target.parent != folder:
                    target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
        _fsync_folder(folder)
    except Exception as err:
        failure = write_failure(err, folder)
        if failure is not None:
            raise failure from err
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_temporaries(folder: str | os.PathLike) -> None:
    """Removes the temporary files and folders a killed writer left directly in `folder`."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    for path in folder.glob(f"{TEMP_PREFIX}*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
