# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Moved: a run's folder has one owner, `hf_gpt1.training.run_folder` (`RunFolder`). The old names warn, and are
removed in hf_gpt1 0.7."""

from ..module_names import moved_names

__getattr__ = moved_names(__name__, ("hf_gpt1.training.run_folder",))
