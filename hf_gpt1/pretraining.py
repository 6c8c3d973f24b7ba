"""L1 pre-training (from scratch or continued) on packed windows of contiguous text: the machinery behind
`recipes/pretrain.py`.

Data flow: text (local txt / jsonl / csv / parquet files, or any Hub dataset, streamed when asked) → a GPT-1 BPE
(trained on the corpus when none is given) → token ids joined into one stream → `n_positions`-token windows →
`GPT1LMHeadModel` with the token-mean L1 → `GPT1Trainer` (Adam, linear warm-up then cosine to 0) with held-out
perplexity at every evaluation.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
from transformers import default_data_collator, set_seed

from .configuration_gpt1 import GPT1Config
from .modeling_gpt1 import GPT1LMHeadModel
from .tokenization_gpt1 import add_gpt1_special_tokens, load_gpt1_tokenizer, train_gpt1_tokenizer
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

TEXT_BUILDERS = {"txt": "text", "text": "text", "json": "json", "jsonl": "json", "csv": "csv", "parquet": "parquet"}


@dataclass
class PretrainModelArguments:
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "Continue pre-training this checkpoint; default: a new model (sizes below)."}
    )
    tokenizer_name_or_path: str | None = field(
        default=None, metadata={"help": "Tokenizer to use; default: the model's, or one trained on the corpus."}
    )
    vocab_size: int = field(default=8000, metadata={"help": "Size of the BPE trained when no tokenizer is given."})
    n_layer: int = field(default=12, metadata={"help": "Blocks of a new model (paper: 12)."})
    n_embd: int = field(default=768, metadata={"help": "Width of a new model (paper: 768)."})
    n_head: int = field(default=12, metadata={"help": "Heads of a new model (paper: 12)."})
    n_positions: int = field(default=512, metadata={"help": "Context of a new model and window length (paper: 512)."})
    dropout: float = field(default=0.1, metadata={"help": "Residual, embedding and attention dropout (paper: 0.1)."})
    attn_implementation: str = field(default="sdpa", metadata={"help": "eager, sdpa or flash_attention_2."})


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
        default=False, metadata={"help": "Stream the Hub dataset (corpora larger than disk or RAM; needs max_steps)."}
    )
    validation_split_percentage: float = field(
        default=5.0, metadata={"help": "Without validation files: hold out this % of the training documents."}
    )
    max_train_windows: int | None = field(default=None, metadata={"help": "Use at most N training windows."})
    max_eval_windows: int | None = field(default=None, metadata={"help": "Use at most N held-out windows."})


@dataclass
class PretrainTrainingArguments(RecipeTrainingArguments):
    """`TrainingArguments` with the paper's pre-training recipe as defaults."""

    learning_rate: float = field(default=2.5e-4, metadata={"help": "Peak learning rate (paper: 2.5e-4)."})
    lr_scheduler_type: str = field(default="cosine", metadata={"help": "Cosine to 0 after warm-up (paper)."})
    warmup_steps: float = field(default=2000, metadata={"help": "Linear warm-up updates (paper: 2000)."})
    per_device_train_batch_size: int = field(default=64, metadata={"help": "Windows per batch (paper: 64)."})
    per_device_eval_batch_size: int = field(default=16, metadata={"help": "Eval windows per batch."})
    weight_decay: float = field(default=0.01, metadata={"help": "Decoupled L2 on matrices only (paper: 0.01)."})
    eval_strategy: str = field(default="steps", metadata={"help": "Perplexity every eval_steps."})
    eval_steps: float | None = field(default=500, metadata={"help": "Updates between held-out evaluations."})
    save_strategy: str = field(default="steps", metadata={"help": "Checkpoint every save_steps."})
    save_steps: float = field(default=500, metadata={"help": "Updates between checkpoints."})


class PretrainTrainer(GPT1Trainer):
    """Adds `perplexity` = exp(mean token L1) to every evaluation."""

    fixed_batch_shape = True  # packed windows: every training batch is (batch, n_positions)

    def evaluation_loop(self, *args, **kwargs):
        output = super().evaluation_loop(*args, **kwargs)
        prefix = kwargs.get("metric_key_prefix", args[4] if len(args) > 4 else "eval")
        loss = output.metrics.get(f"{prefix}_loss")
        if loss is not None:
            output.metrics[f"{prefix}_perplexity"] = math.exp(min(loss, 50.0))
        return output


def load_text(data: PretrainDataArguments) -> tuple[datasets.Dataset | datasets.IterableDataset, Any]:
    """(train, validation-or-None) documents with one `text` column, from local files or the Hub."""
    if bool(data.train_files) == bool(data.dataset_name):
        raise ValueError("Give exactly one text source: --train_files (local) or --dataset_name (Hub).")
    if data.train_files:
        train = _read_text_files(data.train_files, data.text_column)
        validation = _read_text_files(data.validation_files, data.text_column) if data.validation_files else None
    else:
        splits = datasets.load_dataset(data.dataset_name, data.dataset_config_name, streaming=data.streaming)
        if data.text_column not in splits["train"].column_names:
            raise ValueError(
                f"{data.dataset_name} has no column {data.text_column!r}; its columns are "
                f"{splits['train'].column_names}: pass --text_column."
            )
        train = _text_only(splits["train"], data.text_column)
        validation = next((splits[s] for s in ("validation", "valid", "test") if s in splits), None)
        if validation is not None:
            validation = _text_only(validation, data.text_column)
    if validation is None:
        if isinstance(train, datasets.IterableDataset):
            raise ValueError("A streamed corpus needs a validation split or --validation_files for perplexity.")
        if not 0 < data.validation_split_percentage < 100:
            raise ValueError(f"--validation_split_percentage {data.validation_split_percentage} must be in (0, 100).")
        held_out = math.ceil(train.num_rows * data.validation_split_percentage / 100)
        if train.num_rows - held_out < 1:
            raise ValueError(
                f"The corpus has {train.num_rows} document(s) (lines, for .txt): too few to hold out "
                f"{data.validation_split_percentage}% for perplexity. Pass --validation_files, or add text."
            )
        held_out = train.train_test_split(test_size=data.validation_split_percentage / 100, seed=0, shuffle=False)
        train, validation = held_out["train"], held_out["test"]
    return train, validation


def _read_text_files(paths: list[str], text_column: str) -> datasets.Dataset:
    suffixes = {Path(p).suffix.lower().lstrip(".") for p in paths}
    builders = {TEXT_BUILDERS.get(s) for s in suffixes}
    if None in builders or len(builders) != 1:
        raise ValueError(f"Text files must share one type among {sorted(TEXT_BUILDERS)}; got {sorted(suffixes)}.")
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(f"Text file {path} does not exist.")
        if Path(path).stat().st_size == 0:
            raise ValueError(f"Text file {path} is empty.")
    builder = builders.pop()
    dataset = datasets.load_dataset(builder, data_files={"train": paths}, split="train")
    if text_column not in dataset.column_names:
        raise ValueError(
            f"{paths}: no column {text_column!r}; the columns are {dataset.column_names}: pass --text_column."
        )
    return _text_only(dataset, text_column)


def _text_only(dataset, text_column: str):
    dataset = dataset.select_columns([text_column])
    return dataset if text_column == "text" else dataset.rename_column(text_column, "text")


def pack_windows(documents, tokenizer, window: int, limit: int | None = None):
    """Tokenizes documents and cuts the joined id stream into `window`-token training examples (the tail that does
    not fill a window is dropped, as in transformers' run_clm)."""

    def tokenize_and_pack(batch: dict[str, list]) -> dict[str, list]:
        ids = tokenizer(batch["text"], add_special_tokens=False)["input_ids"]
        stream = list(itertools.chain.from_iterable(ids))
        n = len(stream) // window * window
        blocks = [stream[i : i + window] for i in range(0, n, window)]
        return {"input_ids": blocks, "labels": blocks}

    kwargs = {} if isinstance(documents, datasets.IterableDataset) else {"desc": "Tokenizing and packing"}
    packed = documents.map(tokenize_and_pack, batched=True, batch_size=1000, remove_columns=["text"], **kwargs)
    if limit is not None:
        packed = (
            packed.take(limit)
            if isinstance(packed, datasets.IterableDataset)
            else packed.select(range(min(limit, packed.num_rows)))
        )
    return packed


def _texts(documents, limit_chars: int = 200_000_000):
    """Yields the corpus text for tokenizer training (a bounded prefix for streamed corpora)."""
    seen = 0
    for row in documents:
        seen += len(row["text"])
        yield row["text"]
        if seen >= limit_chars:
            return


def _check_arguments(model_args: PretrainModelArguments) -> None:
    """Sizes a new model cannot be built with, reported as the flags the user typed."""
    if model_args.model_name_or_path:
        return
    for flag in ("vocab_size", "n_layer", "n_embd", "n_head", "n_positions"):
        if getattr(model_args, flag) < 1:
            raise ValueError(f"--{flag} {getattr(model_args, flag)} must be a positive integer.")
    if model_args.n_embd % model_args.n_head:
        divisors = [d for d in range(1, model_args.n_embd + 1) if model_args.n_embd % d == 0]
        raise ValueError(
            f"--n_embd {model_args.n_embd} is not divisible by --n_head {model_args.n_head}; choose --n_head among "
            f"{divisors[:12]}."
        )
    if not 0 <= model_args.dropout < 1:
        raise ValueError(f"--dropout {model_args.dropout} must be in [0, 1).")


def _share_tokenizer(tokenizer, process_index: int):
    """The main process's tokenizer on every process (its files broadcast over the process group, no shared disk)."""
    from accelerate.utils import broadcast_object_list

    files = [None]
    if process_index == 0:
        with tempfile.TemporaryDirectory() as folder:
            tokenizer.save_pretrained(folder)
            files = [{path.name: path.read_bytes() for path in Path(folder).iterdir() if path.is_file()}]
    broadcast_object_list(files, from_process=0)
    if process_index == 0:
        return tokenizer
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files[0].items():
            Path(folder, name).write_bytes(data)
        return load_gpt1_tokenizer(folder)


def run_pretraining(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, training_args: PretrainTrainingArguments
) -> dict[str, Any]:
    run_identity = {
        "recipe": "pretrain",
        "model": dataclasses.asdict(model_args),
        "data": dataclasses.asdict(data_args),
    }
    _check_arguments(model_args)
    claim = {"overwrite": training_args.overwrite_output_dir, "resume": training_args.resume}
    if training_args.process_index == 0:  # refuse an occupied folder now; claim it once every input has passed
        prepare_output_dir(training_args.output_dir, run_identity, **claim, claim=False)
    set_seed(training_args.seed)
    train_docs, eval_docs = load_text(data_args)
    if isinstance(train_docs, datasets.IterableDataset) and training_args.max_steps <= 0:
        raise ValueError("A streamed corpus has no length: set --max_steps.")

    source = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if source:
        flag = "--tokenizer_name_or_path" if model_args.tokenizer_name_or_path else "--model_name_or_path"
        check_model_path(source, flag)
    resumed = last_complete_checkpoint(training_args.output_dir) if training_args.resume else None
    if not source and resumed:
        source = resumed  # the BPE this run trained before it stopped: a re-trained one would differ (see below)
    tokenizer = load_gpt1_tokenizer(source) if source else None
    if tokenizer is None:
        # BPE training breaks ties between equally frequent pairs in a per-process random (hash) order, so two
        # processes train different vocabularies from the same text: train once, on the main process, and share it.
        if training_args.process_index == 0:
            tokenizer = train_gpt1_tokenizer(_texts(train_docs), vocab_size=model_args.vocab_size)
            add_gpt1_special_tokens(tokenizer)
        if training_args.world_size > 1:
            tokenizer = _share_tokenizer(tokenizer, training_args.process_index)
    if model_args.model_name_or_path:
        model = load_checkpoint(GPT1LMHeadModel, model_args.model_name_or_path)
        add_gpt1_special_tokens(tokenizer, model)
    else:
        ids = add_gpt1_special_tokens(tokenizer)
        config = GPT1Config(
            vocab_size=len(tokenizer),
            n_positions=model_args.n_positions,
            n_embd=model_args.n_embd,
            n_layer=model_args.n_layer,
            n_head=model_args.n_head,
            resid_pdrop=model_args.dropout,
            embd_pdrop=model_args.dropout,
            attn_pdrop=model_args.dropout,
            start_token_id=ids["start"],
            delimiter_token_id=ids["delimiter"],
            extract_token_id=ids["extract"],
            pad_token_id=ids["pad"],
        )
        model = GPT1LMHeadModel(config)
    model.set_attn_implementation(model_args.attn_implementation)
    # A language model's tokenizer encodes raw text: `tokenizer(text)` must not wrap it in the task template, or
    # pipeline("text-generation") and the zero-shot heuristics would see `_start_ … _classify_`. The special tokens
    # stay in the vocabulary; fine-tuning re-installs the template (hf_gpt1.finetuning.build_model).
    tokenizer.backend_tokenizer.post_processor = None

    window = model.config.n_positions
    with training_args.main_process_first(desc="packing"):
        train = pack_windows(train_docs, tokenizer, window, data_args.max_train_windows)
        evaluation = pack_windows(eval_docs, tokenizer, window, data_args.max_eval_windows)
    if not isinstance(train, datasets.IterableDataset) and train.num_rows == 0:
        raise ValueError(f"The corpus is shorter than one {window}-token window: add text or lower --n_positions.")
    if not isinstance(evaluation, datasets.IterableDataset) and evaluation.num_rows == 0:
        raise ValueError(
            f"The held-out text is shorter than one {window}-token window, so perplexity cannot be measured: add "
            "--validation_files with more text, raise --validation_split_percentage, or lower --n_positions."
        )
    if training_args.process_index == 0:
        prepare_output_dir(training_args.output_dir, run_identity, **claim)

    trainer = PretrainTrainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=evaluation,
        data_collator=default_data_collator,
        processing_class=tokenizer,
        callbacks=[CompleteCheckpointCallback()],
    )
    train_result = trainer.train(resume_from_checkpoint=resumed)
    trainer.save_model()
    results = {"train": train_result.metrics, "validation": trainer.evaluate()}
    results["log_history"] = trainer.state.log_history
    if trainer.is_world_process_zero():
        tokenizer.save_pretrained(training_args.output_dir)
        write_json_atomic(Path(training_args.output_dir) / "all_results.json", results)
    return results


def pretrain_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command-line entry of `recipes/pretrain.py`."""
    model_args, data_args, training_args = parse_recipe_args(
        (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments), argv
    )
    return run_pretraining(model_args, data_args, training_args)


__all__ = [
    "PretrainDataArguments",
    "PretrainModelArguments",
    "PretrainTrainingArguments",
    "load_text",
    "pack_windows",
    "pretrain_main",
    "run_pretraining",
]
