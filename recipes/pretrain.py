# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-train GPT-1 with the language-model objective L1 on contiguous text, from scratch or continued.

    # From scratch on local text: trains a GPT-1 BPE on the corpus, packs 512-token windows (Adam, max lr 2.5e-4,
    # 2000 warm-up updates then cosine to 0, weight decay 0.01 on matrices, dropout 0.1, the original's table):
    python recipes/pretrain.py --train_files books/*.txt --output_dir runs/pretrain
    # The paper's settings (a 40,478-symbol BPE, 64 windows per update, 100 epochs): a preset, flags override it
    python recipes/pretrain.py recipes/configs/presets/pretrain_paper.yaml --train_files books/*.txt \\
        --output_dir runs/gpt1
    # A small model, a Hub corpus streamed, 2 processes:
    accelerate launch recipes/pretrain.py --dataset_name Salesforce/wikitext --dataset_config_name \\
        wikitext-103-raw-v1 --streaming --max_steps 20000 --n_layer 6 --n_embd 384 --n_head 6 --output_dir runs/wt103
    # Continue pre-training a checkpoint (its tokenizer is kept), resume after a crash:
    python recipes/pretrain.py --model_name_or_path openai-community/openai-gpt --train_files domain.txt \\
        --output_dir runs/continued [--resume]

Held-out perplexity is logged at every evaluation (`eval_perplexity`); `all_results.json` has the final figures.
The defaults differ from the paper where a small corpus or a short run needs it (a BPE sized to the corpus, the
warm-up capped at 10% of the run, 3 epochs); README ("Paper settings") says why.
"""

import sys

from hf_gpt1.commands import main

if __name__ == "__main__":  # the package's `hf-gpt1 pretrain` command
    main(["pretrain", *sys.argv[1:]])
