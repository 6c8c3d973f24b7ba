# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The arguments of the recipes: what every run shares (`RecipeTrainingArguments`), then fine-tuning's and
pre-training's model, data and training arguments with the paper's settings as defaults.

Each dataclass checks its own fields when it is built (so a bad flag fails at parse time, before anything loads);
the rules of the model's shape are GPT1Config's, reused here with the flags' names.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

import torch
from huggingface_hub.errors import StrictDataclassClassValidationError
from transformers import TrainingArguments
from transformers.integrations import get_available_reporting_integrations

from ..configuration_gpt1 import GPT1Config
from ..errors import ArgumentProblems
from . import launch

__all__ = [
    "ArgumentProblems",
    "DataArguments",
    "GPT1TrainingArguments",
    "ModelArguments",
    "PretrainDataArguments",
    "PretrainModelArguments",
    "PretrainTrainingArguments",
    "RecipeTrainingArguments",
    "MODEL_DTYPES",
    "check_config_fields",
    "new_model_dtype",
    "check_finite_floats",
    "check_planned_steps",
    "final_arguments",
]


def check_finite_floats(args: object) -> None:
    """Refuses NaN and infinite values in every float field of an argument dataclass (`--lm_coef inf` would train an
    all-NaN model to the end and save it)."""
    for item in dataclasses.fields(args):
        value = getattr(args, item.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"--{item.name} {value} is not a finite number.")


MODEL_DTYPE_HELP = (
    "The dtype the weights are loaded and trained in: float32 (--bf16/--fp16 then compute in mixed precision), "
    "bfloat16 (with fp32 master weights in the optimizer), float16 (pure low-precision training), or auto (the "
    "checkpoint's own). Default: bfloat16 under --bf16 on a CUDA GPU (no per-step casts of fp32 weights), else "
    "float32."
)
MODEL_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": "auto"}
"""`--model_dtype` values and what `from_pretrained(dtype=...)` gets."""


def new_model_dtype(name: str) -> torch.dtype:
    """The dtype of a model built from random weights for `--model_dtype name` ("auto": no checkpoint, so fp32)."""
    return torch.float32 if name == "auto" else MODEL_DTYPES[name]


def check_model_dtype(name: str | None) -> None:
    if name is not None and name not in MODEL_DTYPES:
        raise ValueError(f"--model_dtype {name!r} is not one of {list(MODEL_DTYPES)}.")


def check_config_fields(flags: dict[str, str], **fields: object) -> None:
    """Checks recipe flags against GPT1Config's own rules (one place for them); the error names the flags.

    Args:
        flags: Config field -> the flag that sets it (`{"resid_pdrop": "--dropout"}`).
        fields: The config fields to check, with the flags' values.
    """
    try:
        GPT1Config(**fields)
    except StrictDataclassClassValidationError as err:
        message = str(err.__cause__ or err).removeprefix("GPT1Config: ")
        raise ValueError(re.sub(r"\b\w+\b", lambda word: flags.get(word[0], word[0]), message)) from None


@dataclass
class RecipeTrainingArguments(TrainingArguments):
    """`TrainingArguments` plus what every hf_gpt1 recipe adds: run ownership, resume, `--bf16` on CPU, TF32 on
    CUDA and the CPU allocator switch."""

    logging_steps: float = field(default=10, metadata={"help": "Log every N steps."})
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Empty an output dir holding another run first (not with --resume)."}
    )
    resume: bool = field(default=False, metadata={"help": "Continue from the newest complete checkpoint."})
    logging_nan_inf_filter: bool = field(
        default=False,
        metadata={"help": "Hide NaN/inf losses from the logs (transformers' default); off: a non-finite loss stops."},
    )
    do_train: bool = field(default=True, metadata={"help": "Train (false: evaluate/predict a trained model only)."})
    tf32: bool | None = field(
        default_factory=launch.tf32_default,
        metadata={"help": "CUDA fp32 matmuls in TF32 (default: on with a CUDA GPU; --tf32 false keeps full fp32)."},
    )
    use_cpu: bool = field(
        default_factory=launch.cpu_only,
        metadata={"help": "Train on the CPU (default: true on a machine without an accelerator)."},
    )
    accelerator_config: dict | str | None = field(
        default_factory=launch.accelerator_config_default,
        metadata={
            "help": "Accelerate's AcceleratorConfig, a dict or a JSON file (default on a CUDA GPU: non-blocking batch "
            "copies)."
        },
    )
    dataloader_num_workers: int = field(
        default_factory=launch.loader_workers_default,
        metadata={"help": "Processes that prepare batches (default: 2 on a CUDA GPU, pinned memory; 0 elsewhere)."},
    )
    dataloader_persistent_workers: bool = field(
        default_factory=launch.on_cuda,
        metadata={"help": "Keep the loader's workers between epochs and evaluations (default: on with a CUDA GPU)."},
    )
    log_level_replica: str = field(
        default="error", metadata={"help": "Log level of the processes other than the main one (they log once)."}
    )
    ddp_find_unused_parameters: bool | None = field(
        default=False,
        metadata={"help": "DDP: look for parameters without gradients each step (GPT-1 has none; off is faster)."},
    )
    save_total_limit: int | None = field(
        default=3,
        metadata={
            "help": "Keep at most N checkpoints in all, as transformers does (so a long run cannot fill the disk): "
            "the newest ones, and the best one counts among them (N 2 with an early best keeps the best and the "
            "newest); the newest complete one is never deleted, so N 1 may keep two; 0 keeps every checkpoint."
        },
    )
    dry_run: bool = field(
        default=False,
        metadata={
            "help": "Print the run's plan (its data and sizes, updates, warm-up, evaluation, compile, precision, "
            "processes, output folder) and exit, writing nothing."
        },
    )
    retain_cpu_memory: bool = field(
        default=False,
        metadata={
            "help": "CPU training: keep freed memory in the process (glibc mallopt, process-wide) so the next step "
            "reuses it instead of page-faulting it in again; best where every batch has one shape."
        },
    )

    def __post_init__(self):
        check_finite_floats(self)
        problems = [
            f"--{name} {getattr(self, name)} must be a positive integer."
            for name in ("per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps")
            if getattr(self, name) < 1
        ]
        problems += [
            f"--{name} {getattr(self, name)} must be >= 0."
            for name in ("learning_rate", "weight_decay", "warmup_steps", "num_train_epochs", "max_grad_norm")
            if getattr(self, name) < 0
        ]
        problems += [
            f"--{name} {getattr(self, name)}: NumPy takes seeds in [0, 2**32), as every seeded generator here does."
            for name in ("seed", "data_seed")
            if getattr(self, name) is not None and not 0 <= getattr(self, name) < 2**32
        ]
        if self.save_total_limit is not None and self.save_total_limit < 0:
            problems.append(f"--save_total_limit {self.save_total_limit} must be >= 0 (0 keeps every checkpoint).")
        if self.resume and self.overwrite_output_dir:
            problems.append(
                "--resume continues the run in the output dir and --overwrite_output_dir deletes it: pass one of them."
            )
        engine = launch.engine_problem(self)  # before transformers' checks, which end in its traceback
        if engine:
            problems.append(engine)
        if problems:
            raise ArgumentProblems(problems)
        super().__post_init__()
        missing = sorted(set(self.report_to) - set(get_available_reporting_integrations()))
        if missing:
            raise ValueError(
                f"--report_to {' '.join(missing)}: not installed here (pip install {' '.join(missing)}), or pass "
                "--report_to none."
            )


def check_planned_steps(args: RecipeTrainingArguments, train_dataset: Any) -> None:
    """Refuses a training run that would take no optimizer step (a corpus without a length is not checked)."""
    if not hasattr(train_dataset, "__len__"):
        return
    rows, per_step, batches = _batches_per_epoch(args, train_dataset)
    if batches == 0 and args.dataloader_drop_last and rows:
        raise ValueError(
            f"This run would take 0 optimizer steps: {rows} training rows are fewer than one global batch of "
            f"{per_step}, and --dataloader_drop_last drops a partial batch: lower --per_device_train_batch_size or "
            "pass --dataloader_drop_last false."
        )
    if batches == 0 or (args.max_steps <= 0 and args.num_train_epochs == 0):
        raise ValueError(
            f"This run would take 0 optimizer steps ({rows} training rows, --num_train_epochs "
            f"{args.num_train_epochs}, a global batch of {per_step}): raise --num_train_epochs or --max_steps, or "
            "lower the batch size."
        )


def _batches_per_epoch(args: RecipeTrainingArguments, train_dataset: Any) -> tuple[int, int, int]:
    """(rows, rows per global batch, global batches per epoch) of a dataset with a length."""
    rows, per_step = len(train_dataset), args.per_device_train_batch_size * max(args.world_size, 1)
    return rows, per_step, rows // per_step if args.dataloader_drop_last else math.ceil(rows / per_step)


def planned_updates(args: RecipeTrainingArguments, train_dataset: Any) -> int | None:
    """The optimizer steps Trainer will take (None for a corpus without a length and no --max_steps)."""
    if args.max_steps > 0:
        return args.max_steps
    if not hasattr(train_dataset, "__len__"):
        return None
    _, _, batches = _batches_per_epoch(args, train_dataset)
    # as `Trainer.set_initial_training_values`: an epoch's last, partial accumulation is an update too
    return math.ceil(args.num_train_epochs * max(math.ceil(batches / args.gradient_accumulation_steps), 1))


def final_arguments(args: RecipeTrainingArguments, **changes: Any) -> RecipeTrainingArguments:
    """`args` with what the run decided from its data (`changes`), built again with `dataclasses.replace`, so that
    every check (ours and transformers' `TrainingArguments.__post_init__`) sees the values the run uses. The only
    place a run changes its arguments: every other field holds what was given (or its documented default)."""
    return dataclasses.replace(args, **changes) if changes else args


def plan_warmup(args: PretrainTrainingArguments, updates: int | None) -> tuple[list[str], dict[str, Any]]:
    """Caps the warm-up at `--warmup_cap` of the run; returns the start lines that say the plan (with a warning
    when the learning rate could never reach its peak) and the argument to change: `warmup_steps`, in updates."""
    if updates is None:
        return [], {}
    asked = args.warmup_steps
    warmup = int(asked) if asked >= 1 else math.ceil(asked * updates)
    cap = math.ceil(args.warmup_cap * updates)
    lines = []
    if warmup > cap and args.warmup_cap < 1:
        lines.append(
            f"warm-up: {cap} of {updates} updates (--warmup_steps {asked:g}, capped at {args.warmup_cap:.0%} of the "
            f"run by --warmup_cap {args.warmup_cap:g})"
        )
        warmup = cap
    else:
        lines.append(f"warm-up: {warmup} of {updates} updates")
    if warmup >= updates:
        lines.append(
            f"warning: the warm-up ({warmup} updates) is as long as the run ({updates}): the learning rate never "
            "reaches its peak; lower --warmup_steps or --warmup_cap."
        )
    return lines, {"warmup_steps": warmup}


# ------------------------------------------------------------------------------------------------ fine-tuning


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        default="openai-community/openai-gpt",
        metadata={"help": "Pre-trained GPT-1: a Hub id or a folder (hf_gpt1 or transformers openai-gpt checkpoint)."},
    )
    tokenizer_name_or_path: str | None = field(
        default=None, metadata={"help": "Tokenizer folder or Hub id; default: the model's."}
    )
    lm_coef: float = field(default=0.5, metadata={"help": "λ of L3 = L2 + λ·L1; 0 disables the auxiliary LM loss."})
    clf_pdrop: float = field(default=0.1, metadata={"help": "Dropout before the classifier."})
    clf_label_smoothing: float = field(
        default=0.0, metadata={"help": "Label smoothing of L2 inside L3 = L2 + λ·L1 (classification tasks; paper: 0)."}
    )
    original_embedding_table: bool = field(
        default=True,
        metadata={
            "help": "The original's single embedding table: dropout on the table (one mask per token row, shared by "
            "its occurrences) and L1 normalised over tokens, special tokens and positions. false: transformers' "
            "openai-gpt convention (dropout on the summed embedding, L1 over tokens)."
        },
    )
    transfer_layers: int | None = field(
        default=None,
        metadata={"help": "Keep the first k pre-trained blocks and re-initialise the rest (paper Fig. 2, left)."},
    )
    from_scratch: bool = field(
        default=False, metadata={"help": "Random initialisation: the paper's 'no pre-training' ablation."}
    )
    attn_implementation: str = field(default="sdpa", metadata={"help": "eager, sdpa or flash_attention_2."})
    model_dtype: str | None = field(default=None, metadata={"help": MODEL_DTYPE_HELP})
    ignore_head_checks: bool = field(
        default=False,
        metadata={
            "help": "Prediction only (--do_train false): predict even with a head that was never fine-tuned for this "
            "task (missing or newly initialised weights, another task's labels or format). For experiments."
        },
    )

    def __post_init__(self):
        check_finite_floats(self)
        flags = {name: f"--{name}" for name in ("lm_coef", "clf_pdrop", "clf_label_smoothing")}
        check_config_fields(flags, **{name: getattr(self, name) for name in flags})
        check_model_dtype(self.model_dtype)
        if self.transfer_layers is not None and self.transfer_layers < 0:
            raise ValueError(f"--transfer_layers {self.transfer_layers} must be >= 0.")


@dataclass
class DataArguments:
    task: str = field(
        metadata={
            "help": "Task name from hf_gpt1.data.tasks (rte, sst2, mnli, ax, story_cloze, ...), or a task file: a "
            ".json or .yaml object of TaskSpec fields, for a task of your own."
        }
    )
    data_dir: str | None = field(
        default=None,
        metadata={"help": "Official GLUE TSV folder (the GLUE root or the task folder); --*_file override splits."},
    )
    train_file: str | None = field(default=None, metadata={"help": "CSV/TSV/JSON(L)/parquet file with train rows."})
    validation_file: str | None = field(default=None, metadata={"help": "Validation rows, same format."})
    test_file: str | None = field(default=None, metadata={"help": "Test rows (labels optional)."})
    max_seq_length: int | None = field(
        default=None, metadata={"help": "Longest input after the special tokens; default: the model's n_positions."}
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Use the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use the first N rows of each eval split."})
    pad_to_multiple_of: int | None = field(default=None, metadata={"help": "Pad batches to a multiple of N."})
    segment_cap: int | None = field(
        default=None,
        metadata={
            "help": "Multiple choice: cap the context and each answer at N tokens each (the original's Story Cloze "
            "rule, n_ctx//2 - 2, is the default under --story_cloze_protocol)."
        },
    )
    story_cloze_protocol: bool = field(
        default=False,
        metadata={
            "help": "Story Cloze as in the paper: --train_file is the 2016 validation CSV, split 1497/374 with seed "
            "3535999445 (train/validation); --test_file is the 2016 test CSV, whose accuracy is reported."
        },
    )

    def __post_init__(self):
        if self.max_seq_length is not None and self.max_seq_length < 3:
            raise ValueError(
                f"--max_seq_length {self.max_seq_length} cannot hold GPT-1's start/delimiter/extract tokens; use at "
                "least 3, or leave it out for the model's n_positions."
            )
        for flag in ("max_train_samples", "max_eval_samples", "pad_to_multiple_of"):
            value = getattr(self, flag)
            if value is not None and value < 1:
                raise ValueError(f"--{flag} {value} must be >= 1 (leave it out for the default).")
        if self.segment_cap is not None and self.segment_cap < 0:
            raise ValueError(f"--segment_cap {self.segment_cap} must be >= 0 (tokens kept per segment).")


@dataclass
class GPT1TrainingArguments(RecipeTrainingArguments):
    """`TrainingArguments` with the paper's fine-tuning recipe as defaults."""

    learning_rate: float = field(default=6.25e-5, metadata={"help": "Peak learning rate (paper: 6.25e-5)."})
    per_device_train_batch_size: int = field(default=32, metadata={"help": "Batch size per device (paper: 32)."})
    per_device_eval_batch_size: int = field(default=32, metadata={"help": "Eval batch size per device."})
    num_train_epochs: float = field(default=3.0, metadata={"help": "Epochs (paper: 3)."})
    warmup_steps: float = field(
        default=0.002, metadata={"help": "Linear warm-up; a value below 1 is a fraction of the steps (paper: 0.002)."}
    )
    weight_decay: float = field(default=0.01, metadata={"help": "Decoupled L2 on matrices only (paper: 0.01)."})
    max_grad_norm: float = field(default=1.0, metadata={"help": "Global gradient-norm clip (paper: 1)."})
    adam_epsilon: float = field(default=1e-8, metadata={"help": "Adam epsilon (paper: 1e-8)."})
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: no, steps or epoch."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to checkpoint: no, steps or epoch."})
    train_sampling_strategy: str = field(
        default="random",
        metadata={
            "help": "random: a uniform shuffle every epoch (the original); group_by_length batches similar lengths "
            "(less padding, faster, not the paper's)."
        },
    )
    dataloader_drop_last: bool = field(
        default=True, metadata={"help": "Drop the last partial training batch (the original); never eval rows."}
    )
    do_eval: bool = field(default=True, metadata={"help": "Evaluate the validation split(s)."})
    do_predict: bool = field(default=True, metadata={"help": "Predict the test split(s) and write the files."})
    load_best_model_at_end: bool | None = field(
        default=None,
        metadata={
            "help": "Predict test with the best-validation checkpoint (the original). Default: on when there is a "
            "validation split and evaluation runs during training."
        },
    )
    remove_unused_columns: bool = field(default=False, metadata={"help": "Must stay False: collators need segments."})
    torch_compile: bool | None = field(
        default=None,
        metadata={
            "help": "torch.compile the training step. Default: on with a CUDA GPU under --bf16 for a run of at least "
            f"{launch.COMPILE_PAYS_OFF_UPDATES:,} updates (each length bucket compiles once, at its first step), "
            "off otherwise; the start screen says which."
        },
    )

    def __post_init__(self):
        if self.label_smoothing_factor:
            raise ValueError(
                f"--label_smoothing_factor {self.label_smoothing_factor} would replace L3 with a smoothed "
                "classification loss alone (λ·L1 dropped): pass --clf_label_smoothing instead, which smooths L2 "
                "inside L3."
            )
        super().__post_init__()

    label_names: list[str] | None = field(default_factory=lambda: ["labels"], metadata={"help": "Label keys."})


# ------------------------------------------------------------------------------------------------ pre-training


@dataclass
class PretrainModelArguments:
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "Continue pre-training this checkpoint; default: a new model (sizes below)."}
    )
    tokenizer_name_or_path: str | None = field(
        default=None, metadata={"help": "Tokenizer to use; default: the model's, or one trained on the corpus."}
    )
    vocab_size: int | None = field(
        default=None,
        metadata={
            "help": "Size of the BPE trained when no tokenizer is given (paper: 40,478 = 40,000 merges); default: one "
            "entry per 100 tokens of training text, from 1,000 to 40,000."
        },
    )
    bpe_sample_mb: float = field(
        default=32.0,
        metadata={
            "help": "Train that BPE on the first N MB of the training text (bounded, so its time and memory do not "
            "grow with the corpus)."
        },
    )
    n_layer: int = field(default=12, metadata={"help": "Blocks of a new model (paper: 12)."})
    n_embd: int = field(default=768, metadata={"help": "Width of a new model (paper: 768)."})
    n_head: int = field(default=12, metadata={"help": "Heads of a new model (paper: 12)."})
    n_positions: int = field(default=512, metadata={"help": "Context of a new model and window length (paper: 512)."})
    dropout: float = field(default=0.1, metadata={"help": "Residual, embedding and attention dropout (paper: 0.1)."})
    original_embedding_table: bool = field(
        default=True,
        metadata={"help": "The original's single embedding table (dropout on the table, L1 over all its rows)."},
    )
    attn_implementation: str = field(default="sdpa", metadata={"help": "eager, sdpa or flash_attention_2."})
    model_dtype: str | None = field(default=None, metadata={"help": MODEL_DTYPE_HELP})

    def __post_init__(self):
        check_finite_floats(self)
        check_model_dtype(self.model_dtype)
        if self.bpe_sample_mb <= 0:
            raise ValueError(f"--bpe_sample_mb {self.bpe_sample_mb} must be > 0 (the paper-size BPE reads ~32 MB).")
        if self.model_name_or_path:  # the checkpoint's sizes apply
            return
        if self.n_positions < 2:
            raise ValueError(
                f"--n_positions {self.n_positions}: a window needs at least 2 tokens (one to predict from, one to "
                "predict); the paper's is 512."
            )
        sized = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head")
        flags = {name: f"--{name}" for name in sized if getattr(self, name) is not None}
        dropouts = dict.fromkeys(("resid_pdrop", "embd_pdrop", "attn_pdrop"), self.dropout)
        sizes = {name: getattr(self, name) for name in flags}
        check_config_fields({**flags, **dict.fromkeys(dropouts, "--dropout")}, **sizes, **dropouts)


@dataclass
class PretrainDataArguments:
    train_files: list[str] | None = field(
        default=None, metadata={"help": "Local text files (.txt one document per line, .jsonl, .csv, .parquet)."}
    )
    validation_files: list[str] | None = field(default=None, metadata={"help": "Held-out files for perplexity."})
    dataset_name: str | None = field(default=None, metadata={"help": "A Hub dataset instead of local files."})
    dataset_config_name: str | None = field(default=None, metadata={"help": "Its config."})
    text_column: str = field(default="text", metadata={"help": "Column holding the text."})
    streaming: bool = field(
        default=False,
        metadata={
            "help": "Tokenize the corpus as training reads it, writing nothing (corpora larger than the disk's spare "
            "room): every epoch tokenizes again and the window count is unknown, so it needs --max_steps."
        },
    )
    preprocessing_num_workers: int | None = field(
        default=None,
        metadata={
            "help": "Processes that tokenize and pack the corpus; default: one per available core, at most one per "
            "4 MB of text."
        },
    )
    validation_split_percentage: float = field(
        default=5.0, metadata={"help": "Without validation files: hold out this percentage of the documents."}
    )
    max_train_windows: int | None = field(default=None, metadata={"help": "Use at most N training windows."})
    max_eval_windows: int | None = field(
        default=200,
        metadata={"help": "Score at most N held-out windows at each evaluation (the first N); 0: every window."},
    )

    def __post_init__(self):
        check_finite_floats(self)
        if self.max_train_windows is not None and self.max_train_windows < 1:
            raise ValueError(
                f"--max_train_windows {self.max_train_windows} must be >= 1 (leave it out to use every window)."
            )
        if self.max_eval_windows is not None and self.max_eval_windows < 0:
            raise ValueError(f"--max_eval_windows {self.max_eval_windows} must be >= 0 (0: every window).")
        if self.preprocessing_num_workers is not None and self.preprocessing_num_workers < 1:
            raise ValueError(
                f"--preprocessing_num_workers {self.preprocessing_num_workers} must be >= 1 (leave it out for one per "
                "core)."
            )


@dataclass
class PretrainTrainingArguments(RecipeTrainingArguments):
    """`TrainingArguments` with the paper's pre-training recipe as defaults (but the epochs: README, "Paper
    settings")."""

    learning_rate: float = field(default=2.5e-4, metadata={"help": "Peak learning rate (paper: 2.5e-4)."})
    lr_scheduler_type: str = field(default="cosine", metadata={"help": "Cosine to 0 after warm-up (paper)."})
    warmup_steps: float = field(
        default=2000, metadata={"help": "Linear warm-up updates (paper: 2000), or a fraction of the run if < 1."}
    )
    warmup_cap: float = field(
        default=0.1,
        metadata={
            "help": "The warm-up is at most this fraction of the run's updates, so a short run still reaches its peak "
            "learning rate (the paper's 2000 were a tiny fraction of its run); 1: no cap."
        },
    )
    per_device_train_batch_size: int = field(default=64, metadata={"help": "Windows per batch (paper: 64)."})
    per_device_eval_batch_size: int = field(default=16, metadata={"help": "Eval windows per batch."})
    weight_decay: float = field(default=0.01, metadata={"help": "Decoupled L2 on matrices only (paper: 0.01)."})
    eval_strategy: str = field(default="steps", metadata={"help": "Perplexity every eval_steps."})
    eval_steps: float | None = field(default=500, metadata={"help": "Updates between held-out evaluations."})
    save_strategy: str = field(default="steps", metadata={"help": "Checkpoint every save_steps."})
    save_steps: float = field(default=500, metadata={"help": "Updates between checkpoints."})
    prediction_loss_only: bool = field(
        default=True, metadata={"help": "Evaluation needs the loss only (no (batch, 512, vocab) logits are kept)."}
    )
    retain_cpu_memory: bool = field(
        default=True,
        metadata={"help": "CPU: keep freed memory in the process (every batch has one shape here; see README)."},
    )
    dataloader_drop_last: bool = field(
        default=True,
        metadata={
            "help": "Drop each epoch's last partial batch, as the original code does: every step has one shape, so "
            "a compiled model never recompiles mid-run."
        },
    )
    torch_compile: bool = field(
        default_factory=launch.on_cuda,
        metadata={
            "help": "torch.compile the model (default: on with a CUDA GPU, off on the CPU). One-time cost: compiling "
            "the training step at the first step; evaluation runs uncompiled."
        },
    )

    def __post_init__(self):
        if not 0 < self.warmup_cap <= 1:
            raise ValueError(f"--warmup_cap {self.warmup_cap} must be in (0, 1] (1: no cap).")
        super().__post_init__()
