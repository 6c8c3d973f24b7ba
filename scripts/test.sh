#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Set-up + tests, in two tiers (README "Tests"); extra arguments go to pytest.
#   bash scripts/test.sh          the fast tier: every unit and contract test (after each change)
#   bash scripts/test.sh --all    everything: end-to-end runs, real processes and signals, the demo, the GPU check's
#                                 dry run, the README as written (CI: .ci/run)
# Both run on every core (pytest-xdist, one worker per core) and print the 25 slowest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/cpu_env.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
tier=(-m "not slow")
if [ "${1:-}" = "--all" ]; then tier=(); shift; fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "${tier[@]}" -n "${HF_GPT1_TEST_WORKERS:-auto}" --durations=25 -q "$@"
