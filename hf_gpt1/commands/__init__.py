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

Each command is a module of this package with its argument dataclasses and its `main(argv)` (TRL's layout), parsed
one way (`command_line.parse_recipe_args`); the library functions a command calls live in the layers below
(`hf_gpt1.training`, `hf_gpt1.tools`, `hf_gpt1.data`). `python -m hf_gpt1 <command>` is the same;
`accelerate launch -m hf_gpt1 glue ...` runs a recipe on several processes, as `accelerate launch recipes/glue.py
...` does from a checkout.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module

from .command_line import command_errors, load_yaml, parse_recipe_args, run_recipe

__all__ = ["COMMANDS", "command_errors", "load_yaml", "main", "module_main", "parse_recipe_args", "run_recipe"]

COMMANDS: dict[str, tuple[str, str]] = {
    "pretrain": ("hf_gpt1.commands.pretrain", "pre-train (or continue pre-training) with L1 on text or a Hub corpus"),
    "glue": ("hf_gpt1.commands.glue", "fine-tune with L3 = L2 + λ·L1 on a GLUE task (or SNLI, SciTail), predict test"),
    "multiple-choice": ("hf_gpt1.commands.multiple_choice", "fine-tune on Story Cloze, RACE or SWAG"),
    "zero-shot": ("hf_gpt1.commands.zero_shot", "score a language model with the paper's zero-shot heuristics"),
    "convert": ("hf_gpt1.commands.convert", "convert the original openai/finetune-transformer-lm checkpoint"),
    "push": ("hf_gpt1.commands.push", "push a fine-tuned model to the Hub with its card, loadable without hf_gpt1"),
    "reproduce": ("hf_gpt1.commands.reproduce", "the paper's Tables 2-5: plan, prefetch, run, report, submit-pack"),
}  # fmt: skip
"""Each command's module (which holds its `main(argv)`, imported when the command runs) and its line of help."""


def main(argv: Sequence[str] | None = None) -> None:
    """`hf-gpt1 <command> [arguments]`: the command's `main` inside [`command_errors`]."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        from .. import __version__

        print(f"hf-gpt1 {__version__}")
        return
    if argv and argv[0] in COMMANDS:
        command = import_module(COMMANDS[argv[0]][0]).main
        with command_errors():  # a context, not a wrapper: main > glue.main > run_finetuning > Trainer.train
            command(argv[1:])
        return
    if argv and argv[0] not in ("-h", "--help"):
        sys.exit(f"error: unknown command {argv[0]!r}; the commands are {', '.join(COMMANDS)}.")
    print("usage: hf-gpt1 <command> [arguments]   (hf-gpt1 <command> --help: its arguments)\n\ncommands:")
    print("\n".join(f"  {name:<16} {text}" for name, (_, text) in COMMANDS.items()))
    sys.exit(0 if argv else 2)


def module_main(module: str) -> None:
    """`python -m <module>` for a command's module: the same as `hf-gpt1 <command>` with the arguments given."""
    name = next(name for name, (path, _) in COMMANDS.items() if path == module)
    main([name, *sys.argv[1:]])
