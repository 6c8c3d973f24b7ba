# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The errors a command turns into one line (`hf_gpt1.commands.command_line.command_errors`), declared apart from the
code that raises them so that catching them imports nothing heavy."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ArgumentProblems", "PackingError", "TrainingError", "TrainingInterrupted"]


class ArgumentProblems(ValueError):
    """Every problem found with a run's arguments, in one error: the problem itself, or "N problems with the
    arguments:" and one line each."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        lines = [f"{len(self.problems)} problems with the arguments:", *(f"  - {p}" for p in self.problems)]
        super().__init__(self.problems[0] if len(self.problems) == 1 else "\n".join(lines))


class PackingError(RuntimeError):
    """A packing worker died, hung or failed: the packing stopped and nothing of it was cached."""


class TrainingError(RuntimeError):
    """Training cannot go on (a non-finite loss, a full disk); the message says why and how to continue."""


class TrainingInterrupted(TrainingError):
    """Training stopped on a signal, after saving a complete checkpoint; `signum` is the signal."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum
