#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Set-up, idempotent: a local .venv with torch 2.13.0 and hf_gpt1 (editable, with its dev extras).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
# torch is pinned on its own line: an unpinned or open-ended torch requirement makes pip fetch a multi-GB CUDA build.
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev]"
