"""Fine-tuning with L3 = L2 + λ·L1 on any task of `hf_gpt1.tasks`: the machinery behind `recipes/glue.py` and
`recipes/multiple_choice.py`.

Data flow: raw rows (Hub, GLUE TSV folder, or CSV/JSON files) → `prepare_dataset` (tokenize once, cached) →
the task's collator (special tokens, padding, LM labels) → `GPT1ForSequenceClassification` /
`GPT1ForMultipleChoice` → `GPT1Trainer` → metrics from the local GLUE `evaluate` module, test predictions as TSV.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
from transformers import EvalPrediction, set_seed

from .metrics import load_metric
from .modeling_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification, GPT1PreTrainedModel
from .tasks import TaskSpec, get_task, load_glue_tsv, write_glue_submission
from .tokenization_gpt1 import add_gpt1_special_tokens, load_gpt1_tokenizer
from .training import (
    CompleteCheckpointCallback,
    GPT1Trainer,
    RecipeTrainingArguments,
    check_model_path,
    last_complete_checkpoint,
    load_checkpoint,
    parse_recipe_args,
    prepare_output_dir,
    write_json_atomic,
)
from .transforms import prepare_dataset

logger = logging.getLogger(__name__)

# The original code's seed for the Story Cloze train/validation split of the 2016 validation CSV.
STORY_CLOZE_SEED = 3535999445
STORY_CLOZE_VALID = 374


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
    transfer_layers: int | None = field(
        default=None,
        metadata={"help": "Keep the first k pre-trained blocks and re-initialise the rest (paper Fig. 2, left)."},
    )
    from_scratch: bool = field(
        default=False, metadata={"help": "Random initialisation: the paper's 'no pre-training' ablation."}
    )
    attn_implementation: str = field(default="sdpa", metadata={"help": "eager, sdpa or flash_attention_2."})


@dataclass
class DataArguments:
    task: str = field(metadata={"help": "Task name from hf_gpt1.tasks (rte, sst2, mnli, story_cloze, ...)."})
    data_dir: str | None = field(
        default=None, metadata={"help": "Official GLUE TSV folder (holding RTE/, CoLA/, ... or the task folder)."}
    )
    train_file: str | None = field(default=None, metadata={"help": "CSV/JSON(L)/parquet file with train rows."})
    validation_file: str | None = field(default=None, metadata={"help": "Validation rows, same format."})
    test_file: str | None = field(default=None, metadata={"help": "Test rows (labels optional)."})
    max_seq_length: int | None = field(
        default=None, metadata={"help": "Longest input after the special tokens; default: the model's n_positions."}
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Use the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use the first N rows of each eval split."})
    pad_to_multiple_of: int | None = field(default=None, metadata={"help": "Pad batches to a multiple of N."})
    segment_cap: int | None = field(
        default=None, metadata={"help": "Multiple choice: cap each segment at N tokens (original: n_ctx//2 - 2)."}
    )
    predict_test: bool = field(
        default=True, metadata={"help": "Predict the test split(s), when there are any, and write the TSVs."}
    )
    story_cloze_protocol: bool = field(
        default=False,
        metadata={
            "help": "Story Cloze as in the paper: --train_file is the 2016 validation CSV, split 1497/374 with seed "
            "3535999445 (train/validation); --test_file is the 2016 test CSV."
        },
    )


@dataclass
class GPT1TrainingArguments(RecipeTrainingArguments):
    """`TrainingArguments` with the paper's fine-tuning recipe as defaults."""

    learning_rate: float = field(default=6.25e-5, metadata={"help": "Peak learning rate (paper: 6.25e-5)."})
    per_device_train_batch_size: int = field(default=32, metadata={"help": "Batch size per device (paper: 32)."})
    per_device_eval_batch_size: int = field(default=32, metadata={"help": "Eval batch size per device."})
    num_train_epochs: float = field(default=3.0, metadata={"help": "Epochs (paper: 3)."})
    warmup_steps: float = field(default=0.002, metadata={"help": "Linear warm-up; a float < 1 is a ratio (0.2%)."})
    weight_decay: float = field(default=0.01, metadata={"help": "Decoupled L2 on matrices only (paper: 0.01)."})
    max_grad_norm: float = field(default=1.0, metadata={"help": "Global gradient-norm clip (paper: 1)."})
    adam_epsilon: float = field(default=1e-8, metadata={"help": "Adam epsilon (paper: 1e-8)."})
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: no, steps or epoch."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to checkpoint: no, steps or epoch."})
    train_sampling_strategy: str = field(
        default="group_by_length", metadata={"help": "'group_by_length' batches similar lengths: less padding."}
    )
    remove_unused_columns: bool = field(default=False, metadata={"help": "Must stay False: collators need segments."})
    label_names: list[str] | None = field(default_factory=lambda: ["labels"], metadata={"help": "Label keys."})


# ------------------------------------------------------------------------------------------------- data


def _read_files(files: dict[str, str]) -> datasets.DatasetDict:
    """Loads local CSV / JSON(L) / parquet / TSV files, one per split; parse failures name the file."""
    out = {}
    for split, path in files.items():
        suffix = Path(path).suffix.lower().lstrip(".")
        builder = {"csv": "csv", "tsv": "csv", "json": "json", "jsonl": "json", "parquet": "parquet"}.get(suffix)
        if builder is None:
            raise ValueError(f"{path}: unsupported file type {suffix!r}; use .csv, .tsv, .json, .jsonl or .parquet.")
        if not Path(path).is_file():
            raise FileNotFoundError(f"--{split}_file {path} does not exist.")
        if Path(path).stat().st_size == 0:
            raise ValueError(f"--{split}_file {path} is empty: it needs a header and at least one row.")
        kwargs = {}
        if builder == "csv":
            # Only an empty field is missing: pandas would also read the words "NA", "nan", "null" ... as missing,
            # silently dropping such labels and turning such texts into None.
            kwargs = {"keep_default_na": False, "na_values": [""], **({"delimiter": "\t"} if suffix == "tsv" else {})}
        try:
            out[split] = datasets.load_dataset(builder, data_files={split: path}, split=split, **kwargs)
        except Exception as err:  # datasets wraps parser errors in several types; the user needs file + cause
            cause = _root_cause(err)
            if "corresponds to no data" in cause:
                raise ValueError(f"--{split}_file {path} holds a header but no rows.") from err
            if "utf8" in cause.lower().replace("-", ""):
                raise ValueError(
                    f"{path} is not UTF-8 text ({cause}); re-save it as UTF-8, e.g. iconv -f latin1 -t utf-8."
                ) from err
            raise ValueError(
                f"Could not parse {path} as {suffix.upper()}: {cause}. Check the delimiter, quoting and "
                "encoding (UTF-8), and that every row has the header's number of fields."
            ) from err
        columns = out[split].column_names
        if builder == "csv" and len(columns) == 1:
            other = next((d for d in (",", "\t", ";", "|") if d in columns[0]), None)
            if other is not None:
                expected = "tab" if suffix == "tsv" else "comma"
                raise ValueError(
                    f"{path}: the header parsed as the single column {columns[0]!r}: the file is not {expected}-"
                    f"separated (it seems to use {other!r}). Save .csv files with commas and .tsv files with tabs."
                )
        if out[split].num_rows == 0:
            raise ValueError(f"--{split}_file {path} holds a header but no rows.")
    return datasets.DatasetDict(out)


def _root_cause(err: BaseException) -> str:
    """The innermost exception of a chain (pandas' or json's own message: it names the line), as text."""
    seen = []
    while err is not None and err not in seen:
        seen.append(err)
        err = err.__cause__ or err.__context__
    innermost = seen[-1]
    return f"{type(innermost).__name__}: {innermost}"


def _story_cloze_protocol(raw: datasets.DatasetDict) -> datasets.DatasetDict:
    """The original split: 1,497 train / 374 validation stories of the 2016 validation CSV, seed 3535999445."""
    from sklearn.model_selection import train_test_split

    if "train" not in raw:
        raise ValueError("--story_cloze_protocol needs --train_file (the 2016 Story Cloze validation CSV).")
    train_idx, valid_idx = train_test_split(
        np.arange(raw["train"].num_rows), test_size=STORY_CLOZE_VALID, random_state=STORY_CLOZE_SEED
    )
    out = {"train": raw["train"].select(train_idx), "validation": raw["train"].select(valid_idx)}
    if "test" in raw:
        out["test"] = raw["test"]
    return datasets.DatasetDict(out)


def load_raw_splits(spec: TaskSpec, data: DataArguments) -> datasets.DatasetDict:
    """The task's splits from local files, a GLUE TSV folder, or the Hub (in that order of preference)."""
    files = {s: f for s, f in (("train", data.train_file), ("validation", data.validation_file)) if f}
    if data.test_file:
        files["test"] = data.test_file
    if files:
        raw = _read_files(files)
        return _story_cloze_protocol(raw) if data.story_cloze_protocol else raw
    if data.story_cloze_protocol:
        raise ValueError("--story_cloze_protocol reads --train_file/--test_file (the ROCStories 2016 CSVs).")
    if data.data_dir:
        if spec.glue_tsv is None:
            raise ValueError(f"--data_dir reads GLUE TSV folders; {spec.name!r} is not a GLUE task: use --*_file.")
        return datasets.DatasetDict(
            {split: load_glue_tsv(data.data_dir, spec, split) for split in spec.glue_tsv.files}
        )
    if spec.hub is None:
        raise ValueError(f"{spec.name!r} has no Hub copy with its columns: pass --train_file/--validation_file.")
    return datasets.load_dataset(*spec.hub)


# ------------------------------------------------------------------------------------------------- model


def reinitialize_blocks(model: GPT1PreTrainedModel, keep: int) -> None:
    """Keeps the first `keep` transformer blocks and re-draws the others with GPT-1's init (paper Fig. 2, left)."""
    blocks = model.transformer.h
    if not 0 <= keep <= len(blocks):
        raise ValueError(f"--transfer_layers must be in [0, {len(blocks)}], got {keep}.")
    std = model.config.initializer_range
    with torch.no_grad():
        for block in blocks[keep:]:
            for name, param in block.named_parameters():
                if name.startswith(("ln_1", "ln_2")):
                    param.fill_(1.0 if name.endswith("weight") else 0.0)
                elif name.endswith("bias"):
                    param.zero_()
                else:
                    param.normal_(0.0, std)


def build_model(spec: TaskSpec, model_args: ModelArguments, tokenizer) -> GPT1PreTrainedModel:
    """The head for `spec`, from pre-trained weights (or random ones), with the special tokens and λ set."""
    head = GPT1ForMultipleChoice if spec.format == "multiple_choice" else GPT1ForSequenceClassification
    overrides: dict[str, Any] = {
        "lm_coef": model_args.lm_coef,
        "clf_pdrop": model_args.clf_pdrop,
        "similarity": spec.format == "similarity",
        "input_format": spec.format,
    }
    if spec.format != "multiple_choice":
        overrides["num_labels"] = spec.num_labels
        if spec.id2label:
            overrides["id2label"] = spec.id2label
            overrides["label2id"] = {v: k for k, v in spec.id2label.items()}
        overrides["problem_type"] = "regression" if spec.is_regression else "single_label_classification"
    if model_args.from_scratch:
        check_model_path(model_args.model_name_or_path)
        config = head.config_class.from_pretrained(model_args.model_name_or_path, **overrides)
        model = head(config)
    else:
        model = load_checkpoint(head, model_args.model_name_or_path, **overrides)
    model.set_attn_implementation(model_args.attn_implementation)
    add_gpt1_special_tokens(tokenizer, model)
    if model_args.transfer_layers is not None:
        reinitialize_blocks(model, model_args.transfer_layers)
    return model


# ------------------------------------------------------------------------------------------------- run


def _predictions(spec: TaskSpec, outputs: np.ndarray | tuple) -> np.ndarray:
    """Trainer's prediction outputs → one prediction per example: the score (regression) or the class / choice."""
    logits = outputs[0] if isinstance(outputs, tuple) else outputs
    return logits.squeeze(-1) if spec.is_regression else logits.argmax(-1)


def _metric_fn(spec: TaskSpec):
    metric = load_metric(spec)

    def compute(prediction: EvalPrediction) -> dict[str, float]:
        preds = _predictions(spec, prediction.predictions)
        return metric.compute(predictions=preds, references=prediction.label_ids)

    return compute


def _with_lengths(dataset: datasets.Dataset) -> datasets.Dataset:
    """Adds the `length` column that `group_by_length` batching sorts on (segment tokens, specials excluded)."""

    def length(batch: dict[str, list]) -> dict[str, list[int]]:
        if "choices" in batch:
            pairs = zip(batch["context"], batch["choices"])
            return {"length": [len(context) + max(map(len, choices), default=0) for context, choices in pairs]}
        b = batch.get("segment_b") or [[]] * len(batch["segment_a"])
        return {"length": [len(a) + len(bb) for a, bb in zip(batch["segment_a"], b)]}

    return dataset.map(length, batched=True, desc="Lengths")


def _check_arguments(model_args: ModelArguments, data_args: DataArguments) -> None:
    """Argument values that would otherwise fail deep inside a model config, or train silently on nonsense."""
    if model_args.lm_coef < 0 or model_args.lm_coef != model_args.lm_coef:
        raise ValueError(f"--lm_coef {model_args.lm_coef} must be >= 0 (λ of L3 = L2 + λ·L1; 0 disables L1).")
    if not 0 <= model_args.clf_pdrop < 1:
        raise ValueError(f"--clf_pdrop {model_args.clf_pdrop} must be in [0, 1).")
    if data_args.max_seq_length is not None and data_args.max_seq_length < 3:
        raise ValueError(
            f"--max_seq_length {data_args.max_seq_length} cannot hold GPT-1's start/delimiter/extract tokens; use "
            "at least 3, or leave it out for the model's n_positions."
        )
    for flag in ("max_train_samples", "max_eval_samples"):
        value = getattr(data_args, flag)
        if value is not None and value < 1:
            raise ValueError(f"--{flag} {value} must be >= 1 (leave it out to use every row).")


def _source(data: DataArguments, split: str) -> str:
    """Where a split's rows came from, for error messages."""
    files = {"train": data.train_file, "validation": data.validation_file, "test": data.test_file}
    if files.get(split):
        return f"--{split}_file {files[split]}"
    if data.story_cloze_protocol and split in ("train", "validation") and data.train_file:
        return f"--train_file {data.train_file} ({split} part)"
    return f"{data.data_dir or 'the Hub copy'} ({split} split)"


def run_finetuning(
    model_args: ModelArguments, data_args: DataArguments, training_args: GPT1TrainingArguments, recipe: str
) -> dict[str, Any]:
    """Fine-tunes, evaluates and predicts; returns (and writes to `output_dir/all_results.json`) the metrics.

    Every input problem (unknown task, bad columns or labels, unreadable files, an output dir of another run,
    `max_seq_length` beyond the model) is raised before the first training step.
    """
    spec = get_task(data_args.task)
    run_identity = {
        "recipe": recipe,
        "model": dataclasses.asdict(model_args),
        "data": dataclasses.asdict(data_args),
        "seed": training_args.seed,
    }
    output_dir = training_args.output_dir
    _check_arguments(model_args, data_args)
    if training_args.process_index == 0:  # refuse an occupied folder now; claim it once every input has passed
        prepare_output_dir(
            output_dir, run_identity, training_args.overwrite_output_dir, training_args.resume, claim=False
        )
    set_seed(training_args.seed)

    check_model_path(model_args.model_name_or_path)
    if model_args.tokenizer_name_or_path:
        check_model_path(model_args.tokenizer_name_or_path, "--tokenizer_name_or_path")
    tokenizer = load_gpt1_tokenizer(model_args.tokenizer_name_or_path or model_args.model_name_or_path)
    model = build_model(spec, model_args, tokenizer)
    n_positions = model.config.n_positions
    max_length = n_positions if data_args.max_seq_length is None else data_args.max_seq_length
    if max_length > n_positions:
        raise ValueError(
            f"--max_seq_length {max_length} exceeds the model's n_positions={n_positions} (learned positions); "
            f"use at most {n_positions}."
        )

    raw = load_raw_splits(spec, data_args)
    if not data_args.predict_test:
        raw = datasets.DatasetDict({split: rows for split, rows in raw.items() if not split.startswith("test")})
    with training_args.main_process_first(desc="tokenization"):
        processed = {}
        for split, rows in raw.items():
            limit = data_args.max_train_samples if split == "train" else data_args.max_eval_samples
            if limit is not None and not split.startswith("test"):
                rows = rows.select(range(min(limit, rows.num_rows)))
            try:
                processed[split], collator = prepare_dataset(
                    rows,
                    tokenizer,
                    spec,
                    drop_unlabeled=not split.startswith("test"),
                    max_length=max_length,
                    pad_to_multiple_of=data_args.pad_to_multiple_of,
                    **({"segment_cap": data_args.segment_cap} if spec.format == "multiple_choice" else {}),
                )
            except (KeyError, TypeError, ValueError) as err:  # name the file: the row/column alone is not enough
                message = err.args[0] if isinstance(err, KeyError) and err.args else err
                raise ValueError(f"{_source(data_args, split)}: {message}") from err
            if not split.startswith("test") and "labels" not in processed[split].column_names:
                raise ValueError(
                    f"{_source(data_args, split)}: no label column {spec.label_column!r} (columns: {rows.column_names}"
                    f"); {split} rows need gold labels. Rename the column, or pass unlabelled rows as --test_file."
                )
            dropped = rows.num_rows - processed[split].num_rows
            if dropped:
                logger.warning(
                    "%s: dropped %d of %d rows without a gold label (empty, '-' or -1 in %r).",
                    _source(data_args, split),
                    dropped,
                    rows.num_rows,
                    spec.label_column,
                )
            if processed[split].num_rows == 0 and not split.startswith("test"):
                raise ValueError(f"{_source(data_args, split)}: no row has a gold label in {spec.label_column!r}.")
    if "train" not in processed:
        raise ValueError(f"No train split for {spec.name!r}: give --train_file, --data_dir, or use the Hub copy.")
    if training_args.eval_strategy != "no" and not any(s != "train" and not s.startswith("test") for s in processed):
        raise ValueError(
            f"--eval_strategy {training_args.eval_strategy.value} needs validation rows, and there are none: pass "
            "--validation_file, or --eval_strategy no to train without evaluating."
        )
    if training_args.process_index == 0:
        prepare_output_dir(output_dir, run_identity, training_args.overwrite_output_dir, training_args.resume)
    processed = {split: _with_lengths(dataset) for split, dataset in processed.items()}
    train = processed["train"]
    eval_splits = {s: processed[s] for s in processed if s != "train" and not s.startswith("test")}
    test_splits = {s: processed[s] for s in processed if s.startswith("test")}

    trainer = GPT1Trainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=eval_splits or None,
        data_collator=collator,
        processing_class=tokenizer,
        compute_metrics=_metric_fn(spec),
        callbacks=[CompleteCheckpointCallback()],
    )
    resume_from = last_complete_checkpoint(output_dir) if training_args.resume else None
    if training_args.resume:
        logger.info("Resuming from %s", resume_from or "the start (no complete checkpoint yet)")
    train_result = trainer.train(resume_from_checkpoint=resume_from)
    trainer.save_model()

    results: dict[str, Any] = {"task": spec.name, "train": train_result.metrics}
    for split, dataset in eval_splits.items():
        results[split] = trainer.evaluate(dataset, metric_key_prefix=f"eval_{split}")
    for split, dataset in test_splits.items():
        if "labels" in dataset.column_names:
            dataset = dataset.remove_columns(["labels"])
        preds = _predictions(spec, trainer.predict(dataset).predictions)
        if spec.glue_tsv is not None and split in spec.glue_tsv.submission_files:
            path = write_glue_submission(spec, preds.tolist(), output_dir, split)
        else:
            path = Path(output_dir) / f"{spec.name}_{split}_predictions.tsv"
            path.write_text("index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in enumerate(preds.tolist())))
        results[f"{split}_predictions"] = str(path)
    results["log_history"] = trainer.state.log_history
    if trainer.is_world_process_zero():
        # Pipelines then truncate long inputs to the length the model was fine-tuned with.
        tokenizer.model_max_length = max_length
        tokenizer.save_pretrained(output_dir)
        write_json_atomic(Path(output_dir) / "all_results.json", results)
    return results


def finetune_main(recipe: str, multiple_choice: bool, argv: list[str] | None = None) -> dict[str, Any]:
    """Command-line entry of `recipes/glue.py` (`multiple_choice=False`) and `recipes/multiple_choice.py`."""
    model_args, data_args, training_args = parse_recipe_args(
        (ModelArguments, DataArguments, GPT1TrainingArguments), argv
    )
    spec = get_task(data_args.task)
    if (spec.format == "multiple_choice") != multiple_choice:
        kind, other = (
            ("not multiple choice", "glue.py") if multiple_choice else ("multiple choice", "multiple_choice.py")
        )
        raise ValueError(f"--task {data_args.task!r} is {kind}: run it with recipes/{other}.")
    return run_finetuning(model_args, data_args, training_args, recipe=recipe)


__all__ = [
    "DataArguments",
    "GPT1TrainingArguments",
    "ModelArguments",
    "build_model",
    "finetune_main",
    "load_raw_splits",
    "reinitialize_blocks",
    "run_finetuning",
]
