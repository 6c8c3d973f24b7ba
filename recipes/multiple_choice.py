# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Fine-tune GPT-1 for multiple choice (Story Cloze, RACE, SWAG) with L3: `<s> context <$> answer_k <e>` per answer.

    # Story Cloze as in the paper: train on the 2016 validation CSV (1,497 / 374 split, seed 3535999445), each
    # segment capped at n_ctx//2 - 2 tokens, test accuracy of the best-validation checkpoint on the 2016 test CSV:
    python recipes/multiple_choice.py --task story_cloze --story_cloze_protocol \\
        --train_file cloze_test_val__spring2016.csv --test_file cloze_test_test__spring2016.csv \\
        --output_dir runs/story_cloze
    accelerate launch recipes/multiple_choice.py --task race --output_dir runs/race      # Hub data
    python recipes/multiple_choice.py --task swag --train_file swag_train.csv --validation_file swag_val.csv \\
        --output_dir runs/swag

Test predictions go to `<task>_test_predictions.tsv`, one row per test row in its order, in the task's own convention
(Story Cloze: `InputStoryid` and `AnswerRightEnding`, 1 or 2); a test file with labels also gets its metrics in
`all_results.json` and in the summary.
"""

import sys

from hf_gpt1.commands import main

if __name__ == "__main__":  # the package's `hf-gpt1 multiple-choice` command
    main(["multiple-choice", *sys.argv[1:]])
