# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 push` (hf_gpt1.commands.push): a run that did not finish is refused with the resume hint."""

from __future__ import annotations

import pytest


def test_a_push_of_an_unfinished_run_is_refused_with_the_resume_hint(finished_run, capsys):
    from hf_gpt1.commands.command_line import run_recipe
    from hf_gpt1.commands.push import main as push_main

    (finished_run / "all_results.json").unlink()
    with pytest.raises(SystemExit):
        run_recipe(lambda: push_main([str(finished_run), "me/gpt1-rte"]))
    error = capsys.readouterr().err
    assert "this run did not finish" in error and "--resume" in error and "Unrecognized model" not in error, error
