#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Set-up, idempotent: a local .venv with torch 2.13.0 and hf_gpt1 (editable, with its dev extras).
set -euo pipefail
cd "$(dirname "$0")/.."
# What the last complete install was made from: this checkout and its packaging (setup.py, pyproject.toml, the
# version). The same again skips pip, whose resolve of the dev extras takes ~20 s each time set-up runs (the demo and
# each tier run it); another checkout, an edited setup.py or a new version installs again.
stamp=.venv/.hf_gpt1-setup
made_from="$(pwd -P) $(cat setup.py pyproject.toml <(grep '^__version__ = ' hf_gpt1/__init__.py) | sha256sum)"
if [ ! -x .venv/bin/python ]; then
  rm -f "$stamp"  # a venv made again over an old folder holds none of what the stamp says
  "${PYTHON:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$made_from" ]; then
  exit 0
fi
# torch is pinned on its own line: an unpinned or open-ended torch requirement makes pip fetch a multi-GB CUDA build.
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev]"
# written whole (a stopped set-up leaves none, and the next one installs)
printf '%s\n' "$made_from" > "$stamp.tmp" && mv "$stamp.tmp" "$stamp"
