# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The training layer: arguments, `GPT1Trainer` and its callbacks, checkpoints, the output folder, and the two runs a
recipe calls (`finetune.run_finetuning`, `pretrain.run_pretraining`)."""
