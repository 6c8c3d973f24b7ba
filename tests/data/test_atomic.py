# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Whole-or-nothing writes (hf_gpt1.data.atomic): a file appears complete or not at all."""

from __future__ import annotations

import json
from pathlib import Path

from hf_gpt1.data.atomic import write_json_atomic


def test_write_json_atomic(tmp_path):
    path = tmp_path / "results.json"
    write_json_atomic(path, {"b": 1, "a": Path("x")})
    assert json.loads(path.read_text()) == {"a": "x", "b": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
