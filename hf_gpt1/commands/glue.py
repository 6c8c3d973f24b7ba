# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 glue`: fine-tune with L3 = L2 + λ·L1 on a GLUE task (also SNLI and SciTail)."""

from __future__ import annotations

from collections.abc import Sequence

from ..training.arguments import DataArguments, GPT1TrainingArguments, ModelArguments
from ..training.finetune import run_finetuning
from .command_line import parse_recipe_args

ARGUMENTS = (ModelArguments, DataArguments, GPT1TrainingArguments)
"""The fine-tuning commands' arguments: the model, the data, transformers' TrainingArguments with the paper's
defaults."""


def main(argv: Sequence[str] | None = None) -> dict:
    """Parses the arguments, then [`run_finetuning`]; returns its results."""
    return run_finetuning(*parse_recipe_args(ARGUMENTS, argv, prog="hf-gpt1 glue"), recipe="glue")


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
