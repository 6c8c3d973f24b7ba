# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
