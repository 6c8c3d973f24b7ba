#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Set-up + the embedded default run (recipes/demo.py): GPT-1's pre-train-then-fine-tune method on BBC News, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/cpu_env.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python recipes/demo.py "$@"
