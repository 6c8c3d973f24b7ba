# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Zero-shot evaluation of a GPT-1 language model with the paper's heuristics (section 5, Fig. 2 right).

    python recipes/zero_shot.py --model_name_or_path runs/pretrain --task sst2 --data_dir ../shared/data/glue
    python recipes/zero_shot.py --model_name_or_path runs/pretrain --task cola --data_dir ../shared/data/glue \\
        --calibration_split train --max_calibration_samples 2000
    python recipes/zero_shot.py --model_name_or_path openai-community/openai-gpt --task race --split test  # Hub data
    python recipes/zero_shot.py --model_name_or_path runs/pretrain --task wnli --validation_file wnli_dev.tsv

Heuristics: CoLA thresholds the average token log-probability, SST-2 compares "positive" and "negative" after
"very", RACE picks the answer with the highest average log-probability, WNLI substitutes the pronoun's candidates
(see `hf_gpt1/tools/zero_shot.py`). Prints the metrics and writes them as JSON to `--output_file`.
"""

import sys

from hf_gpt1.commands import main

if __name__ == "__main__":  # the package's `hf-gpt1 zero-shot` command
    main(["zero-shot", *sys.argv[1:]])
