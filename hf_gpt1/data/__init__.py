# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The data layer: the task table (`tasks`), reading task files, GLUE folders and corpora (`files`), the input
transforms and collators (`transforms`), pre-training windows (`packing`), metrics (`metrics`), prediction files
(`submissions`), and the two guarantees every file passes through: written whole or not at all (`atomic`), identified
by content (`fingerprint`)."""
