# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Tools around a model: converting the original release (`convert`), pushing to the Hub with a model card (`hub`),
zero-shot evaluation (`zero_shot`)."""
