# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The data layer: the task table (`tasks`), reading task files, GLUE folders and corpora (`files`), the input
transforms and collators (`transforms`), pre-training windows (`packing`), metrics (`metrics`), prediction files
(`submissions`), and the two guarantees every file passes through: written whole or not at all (`atomic`), identified
by content (`fingerprint`)."""

from .atomic import atomic_save, write_bytes_atomic, write_figure_atomic, write_json_atomic, write_text_atomic
from .scores import METRIC_OUTPUTS, SCORES, Score

__all__ = [
    "METRIC_OUTPUTS",
    "SCORES",
    "Score",
    "atomic_save",
    "write_bytes_atomic",
    "write_figure_atomic",
    "write_json_atomic",
    "write_text_atomic",
]
