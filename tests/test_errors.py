# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The package's own errors (hf_gpt1.errors): argument problems said together, and training errors that callers
catch by their kind."""

from __future__ import annotations

import signal

from hf_gpt1.errors import ArgumentProblems, PackingError, TrainingError, TrainingInterrupted


def test_one_argument_problem_is_the_problem_itself():
    err = ArgumentProblems(["--seed is given twice on the command line: keep one of them."])
    assert str(err) == "--seed is given twice on the command line: keep one of them."
    assert isinstance(err, ValueError) and err.problems == [str(err)]


def test_several_argument_problems_are_counted_one_line_each():
    err = ArgumentProblems(("--a is wrong.", "--b is wrong."))
    assert str(err) == "2 problems with the arguments:\n  - --a is wrong.\n  - --b is wrong."
    assert err.problems == ["--a is wrong.", "--b is wrong."]


def test_a_training_interruption_is_a_training_error_carrying_its_signal():
    err = TrainingInterrupted("stopped on SIGTERM", signal.SIGTERM)
    assert isinstance(err, TrainingError) and isinstance(err, RuntimeError)
    assert (str(err), err.signum) == ("stopped on SIGTERM", signal.SIGTERM)
    assert issubclass(PackingError, RuntimeError) and not issubclass(PackingError, TrainingError)
