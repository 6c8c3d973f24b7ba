# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 pretrain`: pre-train, or continue pre-training, with L1."""

from __future__ import annotations

from collections.abc import Sequence

from ..training.arguments import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments
from ..training.pretrain import run_pretraining
from .command_line import parse_recipe_args

ARGUMENTS = (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments)


def main(argv: Sequence[str] | None = None) -> dict:
    """Parses the arguments, then [`run_pretraining`]; returns its results."""
    return run_pretraining(*parse_recipe_args(ARGUMENTS, argv, prog="hf-gpt1 pretrain"))


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
