"""The recipes' command line: arguments from flags and YAML/JSON files, and every input problem as one line.

python recipes/glue.py my_run.yaml --seed 3     # a file of arguments, overridden by the flags after it
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import HfArgumentParser

from ..data.atomic import WRITE_FAILURES
from .trainer import TrainingError

__all__ = ["load_yaml", "parse_recipe_args", "run_recipe"]


def load_yaml(path: str | os.PathLike) -> Any:
    """Reads a YAML file; a syntax error is one line naming the file and the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist.")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML ({getattr(err, 'problem', None) or err}).") from None


def _config_to_argv(path: Path) -> list[str]:
    """A YAML/JSON argument file as command-line words, so it gets the command line's type checks."""
    if path.suffix == ".json":
        try:
            values = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: not valid JSON ({err}).") from None
    else:
        values = load_yaml(path)
    if not isinstance(values, dict) or not values:
        raise ValueError(f"{path} holds no arguments: write one `name: value` line per argument.")
    argv = []
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            argv += [f"--{name}", *map(str, value)]
        elif isinstance(value, dict):
            argv += [f"--{name}", json.dumps(value)]
        else:
            argv += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return argv


def parse_recipe_args(dataclass_types: Sequence[type], argv: Sequence[str] | None = None) -> tuple:
    """Parses a recipe's argument dataclasses from the command line; a first argument ending in `.yaml`/`.yml`/
    `.json` is a file of arguments, which the following command-line arguments may override."""
    parser = HfArgumentParser(dataclass_types)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].endswith((".yaml", ".yml", ".json")):
        argv = _config_to_argv(Path(argv[0])) + argv[1:]
    *parsed, unknown = parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
    if unknown:
        raise ValueError(f"Unknown argument(s) {' '.join(unknown)}: `--help` lists the recipe's arguments.")
    return tuple(parsed)


def _write_failure_line(err: OSError) -> str:
    where = f"Could not write {err.filename}" if err.filename else "A write failed"
    if err.errno == errno.EROFS:
        return f"{where}: {WRITE_FAILURES[err.errno]}. Choose an --output_dir on a writable disk."
    return (
        f"{where}: {WRITE_FAILURES[err.errno]}. Free space (or choose an --output_dir on another disk), then run the "
        "same command again, with --resume if it had started."
    )


def run_recipe(main: Callable[[], Any]) -> Any:
    """Runs a recipe's `main`, turning every input or environment problem into one readable line and exit status 2.

    Input problems (unknown task, bad columns, labels or files, an occupied output dir) are raised by hf_gpt1 as
    `ValueError` / `KeyError` with the cause and the fix in the message; file-system problems as `OSError`s that name
    the path; a stopped training as `TrainingError`. A traceback through Trainer and torch would only hide them.
    `HF_GPT1_TRACEBACK=1` shows the traceback anyway.
    """
    try:
        result = main()
    except (ValueError, KeyError, OSError, TrainingError) as err:
        if os.environ.get("HF_GPT1_TRACEBACK"):
            raise
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        if isinstance(err, OSError) and err.errno in WRITE_FAILURES:
            message = _write_failure_line(err)
        print(f"error: {message}\n(HF_GPT1_TRACEBACK=1 shows where it was raised)", file=sys.stderr)
        raise SystemExit(2) from None
    # Trainer leaves the process group of a multi-process launch open: wait for every rank, then close it cleanly.
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return result
