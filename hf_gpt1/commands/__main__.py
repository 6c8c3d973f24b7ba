# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`python -m hf_gpt1.commands <command> ...`: the same as `python -m hf_gpt1`."""

from . import main

main()
