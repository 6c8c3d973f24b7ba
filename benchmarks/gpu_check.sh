#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Every GPU target in one command (benchmarks/gpu_check.py; at most 8 minutes on one H100 or H200), from a machine
# that has torch with CUDA and nothing of this project: the wheels ../shared/gpu/prepare.sh put into .whl/ are installed
# beside that torch first (.gpu/device_env.sh). Writes <--out>/gpu_check.json and gpu_check.md.
#   bash benchmarks/gpu_check.sh [--out DIR] [--stages bench,profile,...]
#   bash benchmarks/gpu_check.sh --dry-run    # the same stages at toy sizes on the CPU (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ " $* " != *" --dry-run "* ]] && command -v nvidia-smi >/dev/null && [ -f .gpu/device_env.sh ] && [ -d .whl ]; then
  # shellcheck disable=SC1091
  source .gpu/device_env.sh
fi
python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python
exec "$python" benchmarks/gpu_check.py "$@"
