# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1`: the recipes and tools as one console command, from any folder once hf_gpt1 is installed.

    hf-gpt1 pretrain --train_files books.txt --output_dir runs/pretrain
    hf-gpt1 glue --task rte --model_name_or_path runs/pretrain --data_dir glue_data --output_dir runs/rte
    hf-gpt1 multiple-choice --task story_cloze --story_cloze_protocol --train_file val.csv --output_dir runs/sc
    hf-gpt1 zero-shot --model_name_or_path runs/pretrain --task sst2 --data_dir glue_data
    hf-gpt1 convert --checkpoint_dir model/ --output_dir runs/openai-gpt
    hf-gpt1 push runs/rte me/gpt1-rte
    hf-gpt1 reproduce report --output_dir runs/reproduce
    hf-gpt1 <command> --help        # the command's own arguments; --help_all adds all of TrainingArguments

`python -m hf_gpt1 <command>` is the same; `accelerate launch -m hf_gpt1 glue ...` runs a recipe on several
processes, as `accelerate launch recipes/glue.py ...` does from a checkout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from .training.arguments import (
    DataArguments,
    GPT1TrainingArguments,
    ModelArguments,
    PretrainDataArguments,
    PretrainModelArguments,
    PretrainTrainingArguments,
)
from .training.cli import command_errors, parse_recipe_args

__all__ = ["COMMANDS", "glue", "main", "multiple_choice", "pretrain"]


FINETUNE_ARGUMENTS = (ModelArguments, DataArguments, GPT1TrainingArguments)


def glue(argv: Sequence[str] | None = None) -> dict:
    """Fine-tunes on a GLUE task (recipes/glue.py): parse the arguments, then `run_finetuning`."""
    from .training.finetune import run_finetuning

    return run_finetuning(*parse_recipe_args(FINETUNE_ARGUMENTS, argv, prog="hf-gpt1 glue"), recipe="glue")


def multiple_choice(argv: Sequence[str] | None = None) -> dict:
    """Fine-tunes on Story Cloze, RACE or SWAG (recipes/multiple_choice.py)."""
    from .training.finetune import run_finetuning

    arguments = parse_recipe_args(FINETUNE_ARGUMENTS, argv, prog="hf-gpt1 multiple-choice")
    return run_finetuning(*arguments, recipe="multiple_choice")


def pretrain(argv: Sequence[str] | None = None) -> dict:
    """Pre-trains with L1 (recipes/pretrain.py)."""
    from .training.pretrain import run_pretraining

    classes = (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments)
    return run_pretraining(*parse_recipe_args(classes, argv, prog="hf-gpt1 pretrain"))


def _zero_shot(argv: Sequence[str] | None) -> Any:
    from .tools.zero_shot import main as zero_shot

    return zero_shot(argv)


def _convert(argv: Sequence[str] | None) -> Any:
    from .tools.convert import main as convert

    return convert(argv)


def _push(argv: Sequence[str] | None) -> Any:
    from .tools.hub import main as push

    return push(argv)


def _reproduce(argv: Sequence[str] | None) -> Any:
    from .tools.reproduce import main as reproduce

    return reproduce(argv)


COMMANDS: dict[str, tuple[Callable[[Sequence[str] | None], Any], str]] = {
    "pretrain": (pretrain, "pre-train (or continue pre-training) with L1 on local text or a Hub corpus"),
    "glue": (glue, "fine-tune with L3 = L2 + λ·L1 on a GLUE task (also SNLI, SciTail), predict its test files"),
    "multiple-choice": (multiple_choice, "fine-tune on Story Cloze, RACE or SWAG"),
    "zero-shot": (_zero_shot, "score a language model with the paper's zero-shot heuristics"),
    "convert": (_convert, "convert the original openai/finetune-transformer-lm checkpoint"),
    "push": (_push, "push a fine-tuned model to the Hub with its card, loadable without hf_gpt1"),
    "reproduce": (_reproduce, "the paper's Tables 2-5 beside the runs that reproduce them (report)"),
}


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        command, _ = COMMANDS[argv[0]]
        with command_errors():  # a context, not a wrapper: main > glue > run_finetuning > Trainer.train
            command(argv[1:])
        return
    if argv and argv[0] not in ("-h", "--help"):
        sys.exit(f"error: unknown command {argv[0]!r}; the commands are {', '.join(COMMANDS)}.")
    print("usage: hf-gpt1 <command> [arguments]   (hf-gpt1 <command> --help: its arguments)\n\ncommands:")
    print("\n".join(f"  {name:<16} {text}" for name, (_, text) in COMMANDS.items()))
    sys.exit(0 if argv else 2)


if __name__ == "__main__":
    main()
