#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Set-up + tests. The fast suite by default (what CI runs); `--slow` adds the long tests; extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/cpu_env.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
marker=(-m "not slow")
if [ "${1:-}" = "--slow" ]; then marker=(); shift; fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "${marker[@]}" -q "$@"
