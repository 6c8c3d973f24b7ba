# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The training layer: arguments, `GPT1Trainer` and its callbacks, checkpoints, the output folder, and the two runs a
recipe calls (`finetune.run_finetuning`, `pretrain.run_pretraining`)."""

from importlib import import_module
from typing import Any

# The training layer's public names, each imported from its module on first use (they load the training stack).
_PUBLIC = {
    "DataArguments": "arguments",
    "GPT1TrainingArguments": "arguments",
    "ModelArguments": "arguments",
    "PretrainDataArguments": "arguments",
    "PretrainModelArguments": "arguments",
    "PretrainTrainingArguments": "arguments",
    "RecipeTrainingArguments": "arguments",
    "final_arguments": "arguments",
    "GPT1Trainer": "trainer",
    "PretrainTrainer": "trainer",
    "run_finetuning": "finetune",
    "run_pretraining": "pretrain",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
