# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`python -m hf_gpt1 <command> ...`, also `accelerate launch -m hf_gpt1 <command> ...`: the `hf-gpt1` command."""

from .commands import main

main()
