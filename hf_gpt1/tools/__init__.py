# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The library under the tool commands (`hf_gpt1.commands`): converting the original release (`convert`), pushing to
the Hub with a model card (`hub`), zero-shot evaluation (`zero_shot`), the paper's results (`paper_results`) and the
reproduction's matrix and report (`reproduce`, `reproduce_report`)."""

from importlib import import_module
from typing import Any

# The tools' public functions, each imported from its module on first use.
_PUBLIC = {
    "convert_openai_checkpoint": "convert",
    "evaluate_zero_shot": "zero_shot",
    "model_card": "hub",
    "push_finetuned": "hub",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
