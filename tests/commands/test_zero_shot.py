# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 zero-shot` (`hf_gpt1.commands.zero_shot`): its arguments are checked before anything is scored."""

from __future__ import annotations

import pytest

from tests.utils import run_command


def test_zero_shot_refuses_an_output_file_in_a_missing_folder_before_scoring(tiny_lm, tmp_path, capsys, monkeypatch):
    from hf_gpt1.commands import zero_shot

    monkeypatch.setattr(zero_shot, "load_checkpoint", lambda *a: pytest.fail("the model was loaded"))
    argv = ["--model_name_or_path", str(tiny_lm), "--task", "sst2", "--output_file", str(tmp_path / "no" / "r.json")]
    error = run_command(capsys, "zero-shot", *argv).error
    assert f"--output_file {tmp_path / 'no' / 'r.json'}: the folder" in error and "does not exist" in error, error
