# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 multiple-choice`: fine-tune on Story Cloze, RACE or SWAG."""

from __future__ import annotations

from collections.abc import Sequence

from ..training.finetune import run_finetuning
from .command_line import parse_recipe_args
from .glue import ARGUMENTS


def main(argv: Sequence[str] | None = None) -> dict:
    """Parses the arguments (the GLUE command's), then [`run_finetuning`]; returns its results."""
    arguments = parse_recipe_args(ARGUMENTS, argv, prog="hf-gpt1 multiple-choice")
    return run_finetuning(*arguments, recipe="multiple_choice")


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
