# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""PEFT's default LoRA targets for GPT-1: `get_peft_model(model, LoraConfig())` works without `target_modules`.

PEFT looks default targets up in a table keyed by model type (`peft.utils.constants`), which has no entry for
`gpt1`. [`register`] adds one (the fused QKV projection `c_attn`, as PEFT's default for GPT-2) when that table is
loaded: at once if PEFT is already imported, else when it is, so the order of the two imports does not matter and
`import hf_gpt1` never imports PEFT itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

__all__ = ["LORA_TARGET_MODULES", "register"]

LORA_TARGET_MODULES = ["c_attn"]
_TABLE_MODULE = "peft.utils.constants"


def _add_entry(module) -> None:
    module.TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING.setdefault("gpt1", list(LORA_TARGET_MODULES))


class _AfterLoading(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when PEFT's table module is imported, lets the normal finders load it, then adds the
    entry once the module has run."""

    def find_spec(self, name, path, target=None):
        if name != _TABLE_MODULE:
            return None
        sys.meta_path.remove(self)  # one use: the spec below comes from the other finders
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def exec_then_register(module):
                exec_module(module)
                _add_entry(module)

            spec.loader.exec_module = exec_then_register
        return spec


def register() -> None:
    """Gives model type `gpt1` its default LoRA targets in PEFT, now or when PEFT's table is first imported."""
    if _TABLE_MODULE in sys.modules:
        _add_entry(sys.modules[_TABLE_MODULE])
    elif not any(isinstance(finder, _AfterLoading) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterLoading())
