"""Fine-tune GPT-1 on GLUE (plus SNLI and SciTail) with L3 = L2 + λ·L1, the paper's recipe as defaults.

    accelerate launch recipes/glue.py --task rte --output_dir runs/rte              # Hub data and weights
    python recipes/glue.py --task stsb --data_dir ../shared/data/glue --output_dir runs/stsb
    python recipes/glue.py --task cola --model_name_or_path runs/pretrain --lm_coef 0 --output_dir runs/cola-nolm
    python recipes/glue.py my_run.yaml                                               # every argument from YAML/JSON

Tasks and their columns, formats, labels and metrics come from the table in `hf_gpt1/tasks.py`; `--help` lists every
argument (model, data, and transformers' TrainingArguments with the paper's defaults: lr 6.25e-5, batch 32,
3 epochs, 0.2% warm-up then linear decay, λ 0.5, weight decay 0.01 on matrices). Writes `all_results.json`, GLUE
submission TSVs for the test splits, and the fine-tuned model + tokenizer, which
`pipeline("text-classification", model=output_dir)` serves.
"""

from hf_gpt1.finetuning import finetune_main
from hf_gpt1.runs import run_recipe

if __name__ == "__main__":
    run_recipe(lambda: finetune_main("glue", multiple_choice=False))
