# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""hf_gpt1: GPT-1 (Radford et al. 2018) as a first-class Hugging Face transformers model.

Importing the package registers the `gpt1` model type with transformers' Auto classes (config, models, tokenizer),
the `"multiple-choice"` pipeline and PEFT's default LoRA targets (without importing PEFT). Everything else
(datasets-based data and collators, training) is imported on first
use, so `import hf_gpt1` costs little more than `import torch, transformers`.
"""

import transformers
from transformers import AutoConfig, AutoTokenizer

from .configuration_gpt1 import GPT1Config
from .data.tasks import TASKS, TaskSpec, get_task, register_task, task_from_file
from .modeling_gpt1 import (
    HEADS,
    GPT1ClassifierOutput,
    GPT1ForMultipleChoice,
    GPT1ForSequenceClassification,
    GPT1LMHeadModel,
    GPT1Model,
    GPT1PreTrainedModel,
)
from .module_names import lazy_names
from .pipelines import GPT1MultipleChoicePipeline, register_pipelines
from .tokenization_gpt1 import (
    GPT1Tokenizer,
    add_gpt1_special_tokens,
    from_openai_gpt_files,
    load_gpt1_tokenizer,
    original_tokenizer,
    train_gpt1_tokenizer,
)
from .tools.peft_targets import register as register_peft_targets

AutoConfig.register(GPT1Config.model_type, GPT1Config, exist_ok=True)
AutoTokenizer.register(GPT1Config, fast_tokenizer_class=GPT1Tokenizer, exist_ok=True)
for _head in HEADS:
    getattr(transformers, _head.auto_class).register(GPT1Config, _head.model, exist_ok=True)
    # save_pretrained then copies the modeling code beside the weights (trust_remote_code loading).
    _head.model.register_for_auto_class(_head.auto_class)
GPT1Config.register_for_auto_class()
GPT1Tokenizer.register_for_auto_class("AutoTokenizer")
register_pipelines()  # pipeline("multiple-choice", model=...)
register_peft_targets()  # get_peft_model(model, LoraConfig()) without target_modules

__version__ = "0.6.0"

# Public names whose modules import datasets (and the training stack): loaded on first access.
_LAZY = {
    "data.transforms": (
        "GPT1ClassificationCollator", "GPT1MultipleChoiceCollator", "GPT1Preprocessor", "GPT1SimilarityCollator",
        "prepare_dataset",
    ),
    "data.files": ("load_glue_tsv", "read_data_file"),
}  # fmt: skip


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "TASKS",
    "GPT1ClassificationCollator",
    "GPT1ClassifierOutput",
    "GPT1Config",
    "GPT1ForMultipleChoice",
    "GPT1ForSequenceClassification",
    "GPT1LMHeadModel",
    "GPT1Model",
    "GPT1MultipleChoiceCollator",
    "GPT1MultipleChoicePipeline",
    "GPT1PreTrainedModel",
    "GPT1Preprocessor",
    "GPT1SimilarityCollator",
    "GPT1Tokenizer",
    "TaskSpec",
    "add_gpt1_special_tokens",
    "from_openai_gpt_files",
    "get_task",
    "load_glue_tsv",
    "load_gpt1_tokenizer",
    "original_tokenizer",
    "prepare_dataset",
    "read_data_file",
    "register_task",
    "task_from_file",
    "train_gpt1_tokenizer",
]
