"""The training layer: arguments, `GPT1Trainer` and its callbacks, checkpoints, the output folder, and the two runs a
recipe calls (`finetune.run_finetuning`, `pretrain.run_pretraining`)."""
