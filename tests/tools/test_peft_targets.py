# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""GPT-1's default LoRA targets in PEFT's table (hf_gpt1.tools.peft_targets): added when the table is there, else
once when it is imported, whatever the order of the imports (PEFT itself: tests/test_clients.py)."""

from __future__ import annotations

import sys
import types

from hf_gpt1.tools import peft_targets


def test_a_loaded_table_gets_gpt1s_targets_as_a_copy(monkeypatch):
    table = types.ModuleType("peft.utils.constants")
    table.TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING = {"gpt2": ["c_attn"]}
    monkeypatch.setitem(sys.modules, "peft.utils.constants", table)
    peft_targets.register()
    mapping = table.TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
    assert mapping["gpt1"] == ["c_attn"] and mapping["gpt1"] is not peft_targets.LORA_TARGET_MODULES


def test_before_the_table_is_imported_one_finder_waits_for_it(monkeypatch):
    monkeypatch.delitem(sys.modules, "peft.utils.constants", raising=False)
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, peft_targets._AfterLoading)])
    peft_targets.register()
    peft_targets.register()  # registering twice waits once
    assert sum(isinstance(f, peft_targets._AfterLoading) for f in sys.meta_path) == 1
    assert sys.meta_path[0].find_spec("json", None) is None  # any other module is left to the other finders
