# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Fine-tune GPT-1 on GLUE (plus SNLI and SciTail) with L3 = L2 + λ·L1, the paper's protocol as defaults.

    accelerate launch recipes/glue.py --task rte --output_dir runs/rte              # Hub data and weights
    python recipes/glue.py --task stsb --data_dir glue_data --output_dir runs/stsb  # an official GLUE folder
    python recipes/glue.py --task qnli --train_file QNLI/train.tsv --validation_file QNLI/dev.tsv \\
        --test_file QNLI/test.tsv --output_dir runs/qnli                            # official TSVs as files
    python recipes/glue.py --task cola --model_name_or_path runs/pretrain --lm_coef 0 --output_dir runs/cola-nolm
    python recipes/glue.py my_run.yaml --seed 3                                    # arguments from YAML/JSON
    # predict only, with a fine-tuned model (a folder with dev/test files is enough; files override its splits):
    python recipes/glue.py --task rte --model_name_or_path runs/rte --data_dir glue_data --do_train false \\
        --output_dir runs/rte-predict
    # GLUE's diagnostic set: an MNLI run on the GLUE root also writes AX.tsv; or afterwards, with the MNLI model:
    python recipes/glue.py --task ax --model_name_or_path runs/mnli --data_dir glue_data --do_train false \\
        --output_dir runs/ax

Tasks and their columns, formats, labels and metrics come from the table in `hf_gpt1/data/tasks.py`; `--help` lists
every argument (model, data, and transformers' TrainingArguments with the paper's defaults: lr 6.25e-5, batch 32,
3 epochs, 0.2% warm-up then linear decay, λ 0.5, weight decay 0.01 on matrices, uniform shuffling, the original's
embedding table, evaluation every epoch and test predictions from the best-validation checkpoint). Writes
`all_results.json`, GLUE submission TSVs for the test splits (in the test file's order, with its `index`), and the
fine-tuned model + tokenizer, which `pipeline("text-classification", model=output_dir)` serves.
"""

import sys

from hf_gpt1.commands import main

if __name__ == "__main__":  # the package's `hf-gpt1 glue` command
    main(["glue", *sys.argv[1:]])
