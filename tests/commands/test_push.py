# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 push` (hf_gpt1.commands.push): a run that did not finish is refused with the resume hint."""

from __future__ import annotations

from tests.utils import run_command


def test_a_push_of_an_unfinished_run_is_refused_with_the_resume_hint(finished_run, capsys):
    (finished_run / "all_results.json").unlink()
    refused = run_command(capsys, "push", finished_run, "me/gpt1-rte")
    error = refused.error
    assert "this run did not finish" in error and "--resume" in error, error
    assert "Unrecognized model" not in refused.stderr, refused.stderr
