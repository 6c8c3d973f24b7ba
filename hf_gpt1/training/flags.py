# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The data layer names its inputs by path and its arguments as `name`; a run's messages name them as the command
line does (`--train_file runs/train.csv: ...`). The one place a path is mapped to the flag that gave it."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ArgumentProblems, PackingError

__all__ = ["flags_for_inputs", "flags_of", "in_flags"]


def flags_of(arguments: Any) -> dict[str, Any]:
    """An argument dataclass as the command line names it: `{--name: value}` ([`flags_for_inputs`])."""
    return {f"--{name}": value for name, value in dataclasses.asdict(arguments).items()}


def in_flags(text: str, flags: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """`text` (a message or a source named by the data layer) in the command line's words: an argument the data
    layer names `name` becomes the flag `--name` (or `names[name]`, for a flag named otherwise), and a text that
    starts with a path given as a flag's value gets that flag before it (`--train_file runs/train.csv: ...`).
    `flags` maps each flag to its value (a path, a list of paths, or anything)."""
    for flag in flags:
        text = text.replace(f"`{flag.removeprefix('--')}`", flag)
    for name, flag in (names or {}).items():
        text = text.replace(f"`{name}`", flag)
    for flag, value in flags.items():
        values = value if isinstance(value, list | tuple) else [value]
        for path in {str(v) for given in values if isinstance(given, str | os.PathLike) for v in (given, Path(given))}:
            if text.startswith(path) and text[len(path) : len(path) + 1] in ("", " ", ":"):
                return f"{flag} {text}"
    return text


@contextlib.contextmanager
def flags_for_inputs(flags: Mapping[str, Any], names: Mapping[str, str] | None = None) -> Iterator[None]:
    """Re-raises an error of the block (the data layer's: it names its inputs by path and its arguments as `name`)
    in the command line's words ([`in_flags`]): the one place a path is mapped to the flag that gave it."""
    try:
        yield
    except ArgumentProblems as err:  # every problem renamed, one line each
        renamed = ArgumentProblems([in_flags(problem, flags, names) for problem in err.problems])
        raise renamed.with_traceback(err.__traceback__) from err.__cause__
    except (ValueError, OSError, PackingError) as err:
        if len(err.args) != 1 or not isinstance(err.args[0], str):
            raise
        message = in_flags(err.args[0], flags, names)
        if message == err.args[0]:
            raise
        try:
            renamed = type(err)(message)
        except TypeError:  # an exception class with other arguments: the message alone, as a ValueError
            renamed = ValueError(message)
        raise renamed.with_traceback(err.__traceback__) from err.__cause__
