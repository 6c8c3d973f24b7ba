# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Moved: the commands' machinery is `hf_gpt1.commands.command_line`, the flag names of a run's messages
`hf_gpt1.training.flags`. The old names warn, and are removed in hf_gpt1 0.6."""

from ..module_names import moved_names

__getattr__ = moved_names(__name__, ("hf_gpt1.commands.command_line", "hf_gpt1.training.flags"))
