# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The commands' command line: arguments from flags and YAML/JSON files, and every input problem as one line.

hf-gpt1 glue my_run.yaml --seed 3     # a file of arguments, overridden by the flags after it
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import HfArgumentParser

from ..data.atomic import WRITE_FAILURES
from ..data.strict_files import load_strict
from ..errors import ArgumentProblems, PackingError, TrainingError, TrainingInterrupted
from ..process_control import controlled
from ..training.parse import (
    ARGUMENT_FILE_SUFFIXES,
    GivenArguments,
    argument_parser,
    canonical_argv,
    canonical_name,
    given_arguments,
    unknown_problem,
)

__all__ = [
    "argument_file_argv",
    "canonical_argv",
    "canonical_name",
    "command_errors",
    "load_yaml",
    "parse_recipe_args",
    "run_recipe",
]


def load_yaml(path: str | os.PathLike) -> Any:
    """Reads a YAML file strictly ([`load_strict`]); a problem is one line naming the file and the line."""
    path = Path(path)
    check_regular_file(path)
    return load_strict(path)


def check_regular_file(path: Path) -> None:
    """Refuses a path that is not a regular file, saying what it is instead."""
    if path.is_file():
        return
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a file of arguments: name the .yaml or .json file in it.")
    if path.exists():
        raise ValueError(f"{path} is not a regular file (a pipe, socket or device): write the arguments to a file.")
    raise FileNotFoundError(f"{path} does not exist.")


def argument_file_argv(path: Path) -> list[str]:
    """A YAML/JSON argument file as command-line words, so it gets the command line's type checks."""
    check_regular_file(path)
    try:
        values = load_strict(path)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a text file ({err}).") from None
    if not isinstance(values, dict) or not values:
        raise ValueError(f"{path} holds no arguments: write one `name: value` line per argument.")
    spellings: dict[str, str] = {}
    for name in values:
        one = canonical_name(str(name))
        if one in spellings:
            raise ValueError(
                f"{path}: {spellings[one]!r} and {name!r} are one argument, given twice: keep one of them."
            )
        spellings[one] = str(name)
    argv = []
    for name, value in values.items():
        name = canonical_name(str(name))
        if value is None:
            continue
        if value is True and name.startswith("no_"):  # `no_x: true`: the flag as a command line gives it
            argv.append(f"--{name}")
        elif isinstance(value, (list, tuple)):
            argv += [f"--{name}", *map(str, value)]
        elif isinstance(value, dict):
            argv += [f"--{name}", json.dumps(value)]
        else:
            argv += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return argv


def parse_recipe_args(
    dataclass_types: Sequence[type],
    argv: Sequence[str] | None = None,
    prog: str | None = None,
    passed_on: str | None = None,
    passed_on_to: Sequence[type] = (),
) -> tuple:
    """Parses a command's argument dataclasses from the command line; a first argument ending in `.yaml`/`.yml`/
    `.json` is a file of arguments, which the following command-line arguments may override. Names are exact (no
    prefix of a name stands for it: `learning_rat` is refused, naming `learning_rate`). `--help` lists the command's
    own arguments (transformers' other TrainingArguments are counted, and listed by `--help_all`). One argument given
    twice in one place (the file, or the command line), under any spelling the parser takes (`--x true --no_x`), is
    refused: argparse would keep the last silently (`hf_gpt1.training.parse`, the one parse).

    Args:
        passed_on: For a command that passes the words it does not know on to other commands (what `--help` says
            of them): they are returned, after the dataclasses, instead of refused: as a list of words, or, with
            `passed_on_to` (those commands' argument dataclasses), parsed by them ([`GivenArguments`]: the command
            line's values override the file's; the words they do not take either are its `unknown`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    file_first = bool(argv) and argv[0].endswith(ARGUMENT_FILE_SUFFIXES)
    argv = argv[:1] + canonical_argv(argv[1:]) if file_first else canonical_argv(argv)
    help_all = "--help_all" in argv
    if help_all:
        argv = [word for word in argv if word != "--help_all"] + ["--help"]
    usage = "%(prog)s [ARGS.yaml] [--help | --help_all] [--NAME VALUE ...]"
    parser = argument_parser(dataclass_types, prog=prog, usage=usage)
    _tidy_help(parser, dataclass_types, hide_library=not help_all)
    source, from_file = "command line", []
    if argv and argv[0].endswith(ARGUMENT_FILE_SUFFIXES):
        source = f"{argv[0]} or the command line"
        from_file = argument_file_argv(Path(argv[0]))
        _refuse_late_argument_file(parser, argv[1:], prog)
        places = [(from_file, f"argument file {argv[0]}"), (argv[1:], "command line")]
        argv = from_file + argv[1:]
    else:
        _refuse_late_argument_file(parser, argv, prog)
        places = [(argv, "command line")]
    parser.error = functools.partial(_parse_error, parser.error, from_file=from_file, argv=argv, source=source)
    if passed_on:
        parser.epilog = f"{parser.epilog or ''} {passed_on}".strip()
    namespace, unknown = parser.parse_known_args(argv)
    given = [given_arguments(dataclass_types, words, where) for words, where in places]
    if unknown and not passed_on:
        raise ArgumentProblems([unknown_problem(dataclass_types, unknown, source)])
    # each dataclass checks its values when built: every problem is reported, in one error
    parsed, problems = [], []
    for dtype in dataclass_types:
        names = {f.name for f in dataclasses.fields(dtype) if f.init}
        try:
            parsed.append(dtype(**{k: v for k, v in vars(namespace).items() if k in names}))
        except ArgumentProblems as err:
            problems += err.problems
        except ValueError as err:
            problems.append(str(err))
    if problems:
        raise ArgumentProblems(problems)
    if not passed_on:
        return tuple(parsed)
    if not passed_on_to:
        return (*parsed, unknown)
    values, rest = {}, []
    for place, (_, where) in zip(given, places):  # the command line's values override the file's
        passed = given_arguments(passed_on_to, place.unknown, where)
        values.update(passed.values)
        rest += passed.unknown
    return (*parsed, GivenArguments(values, {}, rest))


def _refuse_late_argument_file(parser: argparse.ArgumentParser, argv: Sequence[str], prog: str | None) -> None:
    """An argument file given after a flag would be read as a stray word (and its arguments as missing): it is one
    when it is a mapping whose names are all the recipe's arguments."""
    names = {action.dest for action in parser._actions}
    for word in argv:
        if not word.endswith(ARGUMENT_FILE_SUFFIXES) or not Path(word).is_file():
            continue
        try:
            values = argument_file_argv(Path(word))
        except ValueError:
            continue  # not an argument file (a data file, say)
        keys = {value.removeprefix("--") for value in values if value.startswith("--")}
        if keys and keys <= names:
            rest = " ".join(w for w in argv if w != word)
            raise ValueError(
                f"{word} is an argument file: it must come first, before any flag, so that the flags after it "
                f"override it: {prog or 'the recipe'} {word} {rest}".rstrip()
                + "."
            )


def _parse_error(
    error: Callable[[str], None], message: str, *, from_file: Sequence[str], argv: Sequence[str], source: str
) -> None:
    """argparse's `error` (usage, the message, exit status 2), naming the argument file when the value came from it."""
    flag = re.match(r"argument (--\w+)", message)
    given_on_line = argv[len(from_file) :]
    if flag and flag[1] in from_file and flag[1] not in given_on_line:
        message = f"{source.removesuffix(' or the command line')}: {message}"
    error(message)


# transformers' TrainingArguments that every run uses: `--help` lists them beside the recipe's own.
ESSENTIAL_TRAINING_ARGUMENTS = {
    "output_dir", "num_train_epochs", "max_steps", "per_device_train_batch_size", "per_device_eval_batch_size",
    "gradient_accumulation_steps", "learning_rate", "lr_scheduler_type", "warmup_steps", "weight_decay",
    "activation_checkpointing",
    "max_grad_norm", "optim", "seed", "data_seed", "full_determinism", "bf16", "fp16", "use_cpu", "torch_compile",
    "gradient_checkpointing", "eval_strategy", "eval_steps", "save_strategy", "save_steps", "logging_steps",
    "load_best_model_at_end", "metric_for_best_model", "report_to", "run_name", "dataloader_num_workers",
    "push_to_hub", "hub_model_id",
}  # fmt: skip


def _tidy_help(parser: HfArgumentParser, dataclass_types: Sequence[type], hide_library: bool) -> None:
    """`--help` as a newcomer reads it: transformers' TrainingArguments fields that are neither redeclared by a recipe
    nor essential are left out (they still parse; `--help_all` lists them), and so are deprecated aliases; a required
    argument says so; a `--no_X` flag has its own text, not `--X`'s."""
    hidden = set()
    for cls in dataclass_types if hide_library else ():
        for field in dataclasses.fields(cls):
            owner = next(k for k in cls.__mro__ if field.name in k.__dict__.get("__annotations__", {}))
            if owner.__module__.startswith("transformers") and field.name not in ESSENTIAL_TRAINING_ARGUMENTS:
                hidden.add(field.name)
    for action in parser._actions:  # argparse's list of options (no public accessor); SUPPRESS is its public API
        if action.dest in hidden or (hide_library and (action.help or "").lower().startswith("deprecated")):
            action.help = argparse.SUPPRESS
        elif isinstance(action, argparse._StoreFalseAction):  # HfArgumentParser's --no_X of a bool field
            action.help, action.default = f"The same as --{action.dest} false.", argparse.SUPPRESS
        elif action.required:
            action.help, action.default = f"{action.help or ''} (required)".strip(), argparse.SUPPRESS
    if hidden:
        parser.epilog = f"transformers' TrainingArguments take {len(hidden)} more arguments: --help_all lists them."


def _write_failure_line(err: OSError) -> str:
    where = f"Could not write {err.filename}" if err.filename else "A write failed"
    if err.errno == errno.EROFS:
        return f"{where}: {WRITE_FAILURES[err.errno]}. Choose an --output_dir on a writable disk."
    return (
        f"{where}: {WRITE_FAILURES[err.errno]}. Free space (or choose an --output_dir on another disk), then run the "
        "same command again, with --resume if it had started."
    )


@contextlib.contextmanager
def command_errors() -> Iterator[None]:
    """Runs the block (a command's `main`) so that every problem is one readable line: `with command_errors():
    main()`. A context, not a wrapper, so the command's own frames stay the only ones between the entry point and
    `Trainer.train`. `HF_GPT1_TRACEBACK=1` shows the traceback instead. Signals, the console and the driver or
    launcher watch follow the one policy of [`hf_gpt1.process_control.controlled`].

    Raises:
        `SystemExit`: 2 after printing `error: <message>` for an input problem (`ValueError` / `KeyError` with the
            cause and the fix, an `OSError` naming the path, a stopped training's `TrainingError`, a dead packing
            worker's `PackingError`; argument problems of a multi-process launch are printed by its main process
            only); 128 + the signal's number for a stop signal (`controlled`).
    """
    with controlled():
        try:
            yield
        except TrainingInterrupted:
            raise  # `controlled` says how to continue
        except (ValueError, KeyError, OSError, TrainingError, PackingError) as err:
            if os.environ.get("HF_GPT1_TRACEBACK"):
                raise
            if isinstance(err, ArgumentProblems) and int(os.environ.get("RANK", "0")) > 0:
                raise SystemExit(2) from None  # every process of a launch parses alike: the main one says it, once
            message = err.args[0] if isinstance(err, KeyError) and err.args else err
            if isinstance(err, OSError) and err.errno in WRITE_FAILURES:
                message = _write_failure_line(err)
            print(f"error: {message}\n(HF_GPT1_TRACEBACK=1 shows where it was raised)", file=sys.stderr)
            raise SystemExit(2) from None
    # Trainer leaves the process group of a multi-process launch open: wait for every rank, then close it cleanly.
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def run_recipe(main: Callable[[], Any]) -> Any:
    """`main()` inside [`command_errors`]; returns its result."""
    with command_errors():
        return main()
