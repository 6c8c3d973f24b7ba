# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The one parse: a command's words become values here, by the parser that defines them (HfArgumentParser over the
command's argument dataclasses, `hf_gpt1.training.arguments`), and every check compares those values, never words.

Whatever the parser accepts is one argument, however it is spelt: `--name value`, `--name=value`, `--name-with-dashes`,
the `--no_name` twin of a bool, a line of an argument file. Whatever it would only half accept is refused here, in one
line, before anything runs: one argument given twice in one place (`--original_embedding_table true` beside
`--no-original-embedding-table`, which argparse would settle silently by the last), and a word it does not know
(`-max_steps`, with one dash).

    given = given_arguments(FINETUNE_ARGUMENTS, ["--max_train_samples=32", "--no-original-embedding-table"])
    given.values == {"max_train_samples": 32, "original_embedding_table": False}
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import enum
import functools
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from transformers import HfArgumentParser

from ..data.fingerprint import PATH_FLAGS
from ..errors import ArgumentProblems

__all__ = [
    "ARGUMENT_FILE_SUFFIXES",
    "FINETUNE_ARGUMENTS",
    "GivenArguments",
    "argument_parser",
    "as_words",
    "canonical_argv",
    "canonical_name",
    "defaults",
    "given_arguments",
    "recorded_paths",
    "unknown_problem",
    "without_arguments",
]

ARGUMENT_FILE_SUFFIXES = (".yaml", ".yml", ".json")  # a command line's first word read as its arguments


def _finetune_arguments() -> tuple[type, ...]:
    from .arguments import DataArguments, GPT1TrainingArguments, ModelArguments

    return ModelArguments, DataArguments, GPT1TrainingArguments


FINETUNE_ARGUMENTS: tuple[type, ...] = _finetune_arguments()
"""The arguments of `hf-gpt1 glue` and `multiple-choice` (the runs of `hf-gpt1 reproduce`)."""


def canonical_name(name: str) -> str:
    """An argument's one name: `per-device-train-batch-size` and `per_device_train_batch_size` are both
    `per_device_train_batch_size` (the dataclass field's name), so that every check sees every spelling."""
    return name.replace("-", "_")


def canonical_argv(argv: Sequence[str], source: str = "command line") -> list[str]:
    """`argv` with every `--name` (and `--name=value`) spelt with underscores ([`canonical_name`]); the same argument
    under two spellings in one place is refused, as a duplicate key in a file is."""
    words, spellings = [], {}
    for word in argv:
        if word.startswith("--") and len(word) > 2 and word[2] != "-":
            flag, equals, value = word.partition("=")
            name = "--" + canonical_name(flag[2:])
            if name in spellings and spellings[name] != flag:
                raise ArgumentProblems(
                    [f"{spellings[name]} and {flag} are one argument, given twice on the {source}: keep one of them."]
                )
            spellings.setdefault(name, flag)
            word = name + equals + value
        words.append(word)
    return words


def _factory_defaults(parser: HfArgumentParser, dataclass_types: Sequence[type]) -> None:
    """A field whose default is computed (`default_factory`, such as `--use_cpu` from the machine) gets it when not
    given: HfArgumentParser gives a bool field False instead."""
    factories = {
        item.name: item.default_factory
        for cls in dataclass_types
        for item in dataclasses.fields(cls)
        if item.default_factory is not dataclasses.MISSING
    }
    for action in parser._actions:
        if action.dest in factories and action.default is not argparse.SUPPRESS:
            action.default = factories[action.dest]()


def argument_parser(dataclass_types: Sequence[type], **kwargs: Any) -> HfArgumentParser:
    """The parser of a command's argument dataclasses: HfArgumentParser with exact names (no prefix of a name
    stands for it) and computed defaults. A list argument takes its values as separate words (`--seeds 0 1`)."""
    parser = HfArgumentParser(dataclass_types, allow_abbrev=False, **kwargs)
    _factory_defaults(parser, dataclass_types)
    return parser


@functools.cache
def _counted(base: type) -> type:
    """`base` (an argparse action class) that records each use: `(dest, option string)` in the action's `seen`."""

    def __call__(self, parser, namespace, values, option_string=None):
        self.seen.append((self.dest, option_string))
        base.__call__(self, parser, namespace, values, option_string)

    return type(f"Counted{base.__name__}", (base,), {"__call__": __call__})


@dataclass(frozen=True)
class GivenArguments:
    """The arguments given in one place, as parsed: `values` by field name (only those given), `spellings` the
    option each was given as, and `unknown` the words the parser does not take, in order."""

    values: dict[str, Any] = field(default_factory=dict)
    spellings: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


def given_arguments(
    dataclass_types: Sequence[type],
    words: Sequence[str],
    source: str = "command line",
) -> GivenArguments:
    """Parses the words of one place (the command line, or one argument file) with the parser of `dataclass_types`,
    keeping the arguments given there and their parsed values.

    Raises:
        `ArgumentProblems`: One argument given twice in that place, under any spelling (`--x true --no_x`, `--seed 1
            --seed 2`): the parser would keep the last silently. A value the parser refuses, in its words.
    """
    parser = argument_parser(dataclass_types)
    seen: list[tuple[str, str]] = []
    for action in parser._actions:
        action.required, action.default = False, argparse.SUPPRESS  # only what is given
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            action.__class__ = _counted(type(action))
            action.seen = seen

    def refuse(message: str) -> None:
        raise ArgumentProblems([f"{source}: {message}"])

    parser.error = refuse
    namespace, unknown = parser.parse_known_args(canonical_argv(words, source))
    spellings: dict[str, str] = {}
    for dest, option in seen:
        if dest in spellings:  # argparse would keep the last value silently
            first = spellings[dest]
            said = (
                f"{first} and {option} are one argument, given twice"
                if first != option
                else f"{option} is given twice"
            )
            raise ArgumentProblems([f"{said} on the {source}: keep one of them."])
        spellings[dest] = option
    return GivenArguments(vars(namespace), spellings, list(unknown))


def unknown_problem(
    dataclass_types: Sequence[type], unknown: Sequence[str], source: str, help_hint: str = "the recipe's arguments"
) -> str:
    """The line that refuses words the parser does not take, with the closest argument for each (`-max_steps`, one
    dash: did you mean --max_steps?)."""
    parser = argument_parser(dataclass_types)
    known = [option for action in parser._actions for option in action.option_strings]
    names = [word for word in unknown if word.startswith("-")] or list(unknown)
    hints = []
    for name in names:
        close = difflib.get_close_matches(name.split("=")[0], known, n=1)
        if not close and name.startswith("-") and not name.startswith("--"):
            close = difflib.get_close_matches("-" + name.split("=")[0], known, n=1)
        hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return f"Unknown argument(s) in the {source}: {', '.join(hints)}; `--help` lists {help_hint}."


def without_arguments(words: Sequence[str], names: Collection[str], dataclass_types: Sequence[type]) -> list[str]:
    """`words` without the arguments `names` (fields of `dataclass_types`), in any spelling the parser takes
    (`--overwrite_output_dir=true`, `--overwrite-output-dir true`, `--no_resume`): the rest, in order."""
    fields = [item for cls in dataclass_types for item in dataclasses.fields(cls) if item.name in names]
    only = dataclasses.make_dataclass("Only", [(item.name, item.type, item) for item in fields])
    parser = HfArgumentParser(only, allow_abbrev=False)
    parser.error = lambda message: None  # a malformed value stays among the rest, for the command to refuse
    _, rest = parser.parse_known_args(canonical_argv(words))
    return rest


def _word(value: Any) -> list[str]:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return [str(value).lower()]
    if isinstance(value, (list, tuple)):
        return [word for item in value for word in _word(item)]
    if isinstance(value, dict):
        return [json.dumps(value)]
    return [str(value)]


def as_words(values: Mapping[str, Any]) -> list[str]:
    """Parsed values as the words that give them again (`--name value`), one spelling per argument."""
    words = []
    for name, value in values.items():
        if value is not None:
            words += [f"--{name}", *_word(value)]
    return words


def recorded_paths(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` with each local path argument ([`PATH_FLAGS`]) as what it names, absolute, and `output_dir` too
    (created by the run): a record read from another working folder names the same files. A Hub id, or a path that
    does not exist, is kept as given."""

    def absolute(value: Any) -> Any:
        if isinstance(value, list):
            return [absolute(item) for item in value]
        return os.path.abspath(value) if isinstance(value, str) and value and os.path.exists(value) else value

    paths = {name: absolute(value) if name in PATH_FLAGS else value for name, value in values.items()}
    if isinstance(paths.get("output_dir"), str):  # a folder a run creates: what it will name
        paths["output_dir"] = os.path.abspath(paths["output_dir"])
    return paths


def defaults(dataclass_types: Sequence[type]) -> dict[str, Any]:
    """Every argument's value when it is not given (a computed default as computed here)."""
    parser = argument_parser(dataclass_types)
    return {action.dest: action.default for action in parser._actions if action.default is not argparse.SUPPRESS}
