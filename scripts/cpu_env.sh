#!/usr/bin/env bash
# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Sourced by demo.sh and test.sh after set-up. Some virtual machines report AMX in their CPU flags without enabling it
# for processes: oneDNN then picks AMX for bf16 matmuls and the process dies with SIGILL ("Illegal instruction").
# One probe detects that and caps oneDNN at AVX-512 BF16 for this shell (bf16 stays correct, only slower), saying so.
probe='import torch; x = torch.ones(64, 64, dtype=torch.bfloat16); x @ x'
if [ -z "${ONEDNN_MAX_CPU_ISA:-}" ] && ! bash -c ".venv/bin/python -c '$probe'; exit \$?" >/dev/null 2>&1; then
  export ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16
  echo "note: this CPU reports AMX but a bf16 matmul with it failed: running with ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA" >&2
fi
