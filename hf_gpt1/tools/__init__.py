# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The library under the tool commands (`hf_gpt1.commands`): converting the original release (`convert`), pushing to
the Hub with a model card (`hub`), zero-shot evaluation (`zero_shot`), the paper's results (`paper_results`) and the
reproduction's matrix and report (`reproduce`, `reproduce_report`)."""

from ..module_names import lazy_names

# The tools' public functions, each imported from its module on first use.
_PUBLIC = {
    "convert": ("convert_openai_checkpoint",),
    "zero_shot": ("evaluate_zero_shot",),
    "hub": ("model_card", "push_finetuned"),
}

__all__ = sorted(name for names in _PUBLIC.values() for name in names)

__getattr__ = lazy_names(__name__, _PUBLIC)
