# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The training layer: arguments, `GPT1Trainer` and its callbacks, checkpoints, the output folder, and the two runs a
recipe calls (`finetune.run_finetuning`, `pretrain.run_pretraining`)."""

from ..module_names import lazy_names

# The training layer's public names, each imported from its module on first use (they load the training stack).
_PUBLIC = {
    "arguments": (
        "DataArguments", "GPT1TrainingArguments", "ModelArguments", "PretrainDataArguments", "PretrainModelArguments",
        "PretrainTrainingArguments", "RecipeTrainingArguments", "final_arguments",
    ),
    "trainer": ("GPT1Trainer", "PretrainTrainer"),
    "finetune": ("FinetunePlan", "execute_finetuning", "plan_finetuning", "run_finetuning"),
    "pretrain": ("run_pretraining",),
}  # fmt: skip

__all__ = sorted(name for names in _PUBLIC.values() for name in names)

__getattr__ = lazy_names(__name__, _PUBLIC)
