"""L1 pre-training (from scratch or continued) on packed windows of contiguous text: the machinery behind
`recipes/pretrain.py`.

Data flow: text (`hf_gpt1.data.load_corpus`: local txt / jsonl / csv / parquet files, or any Hub dataset, streamed
when asked) → a GPT-1 BPE (trained on the corpus when none is given) → token ids joined into one stream →
`n_positions`-token windows → `GPT1LMHeadModel` with the token-mean L1 → `GPT1Trainer` (Adam, linear warm-up then
cosine to 0) with held-out perplexity at every evaluation. The run's stages are `hf_gpt1.runs.run_training`'s.

The paper's full settings (100 epochs, a 40,000-merge BPE, 64 × 512-token windows) are the preset
`recipes/configs/pretrain_paper.yaml`; the defaults here are smaller where a small corpus needs it (README: "Paper
settings").
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
import torch
from transformers import default_data_collator

from .checkpoints import check_model_path, last_complete_checkpoint, load_checkpoint
from .configuration_gpt1 import GPT1Config
from .data import load_corpus
from .modeling_gpt1 import GPT1LMHeadModel
from .runs import Prepared, logged_metrics, parse_recipe_args, run_training
from .tokenization_gpt1 import add_gpt1_special_tokens, load_gpt1_tokenizer, train_gpt1_tokenizer
from .trainer import GPT1Trainer, RecipeTrainingArguments, check_finite_floats


@dataclass
class PretrainModelArguments:
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "Continue pre-training this checkpoint; default: a new model (sizes below)."}
    )
    tokenizer_name_or_path: str | None = field(
        default=None, metadata={"help": "Tokenizer to use; default: the model's, or one trained on the corpus."}
    )
    vocab_size: int = field(
        default=8000,
        metadata={"help": "Size of the BPE trained when no tokenizer is given (paper: 40,478 = 40,000 merges)."},
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
        default=5.0, metadata={"help": "Without validation files: hold out this percentage of the documents."}
    )
    max_train_windows: int | None = field(default=None, metadata={"help": "Use at most N training windows."})
    max_eval_windows: int | None = field(default=None, metadata={"help": "Use at most N held-out windows."})


@dataclass
class PretrainTrainingArguments(RecipeTrainingArguments):
    """`TrainingArguments` with the paper's pre-training recipe as defaults (but the epochs: see the module doc)."""

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
    torch_compile: bool | None = field(
        default=None,
        metadata={
            "help": "torch.compile the model (default: on with a CUDA GPU, where it doubled the speed of an H100 "
            "pre-training step; off on the CPU). One-time cost: compiling the training step at the first step "
            "(~60 s on an H100); evaluation runs uncompiled."
        },
    )

    def __post_init__(self):
        if self.torch_compile is None:
            self.torch_compile = torch.cuda.is_available() and not self.use_cpu
        super().__post_init__()


class PretrainTrainer(GPT1Trainer):
    """Adds `perplexity` = exp(mean token L1) to every evaluation, which never builds the logits."""

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        if prediction_loss_only:  # the fused loss alone: no (batch, seq, vocab) logits
            inputs = {**inputs, "skip_logits": True}
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)

    def evaluation_loop(
        self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"
    ):
        output = super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix)
        loss = output.metrics.get(f"{metric_key_prefix}_loss")
        if loss is not None:
            output.metrics[f"{metric_key_prefix}_perplexity"] = math.exp(min(loss, 50.0))
        return output


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


class _Texts:
    """The corpus text for tokenizer training, a bounded prefix of it for large or streamed corpora; iterable more
    than once (the BPE trainer reads it twice)."""

    def __init__(self, documents, limit_chars: int = 200_000_000):
        self.documents, self.limit_chars = documents, limit_chars

    def __iter__(self):
        seen = 0
        for row in self.documents:
            seen += len(row["text"])
            yield row["text"]
            if seen >= self.limit_chars:
                return


def _check_arguments(model_args: PretrainModelArguments, data_args: PretrainDataArguments) -> None:
    """Values a new model cannot be built with, or that would train on nothing, reported as the flags typed."""
    check_finite_floats(model_args)
    check_finite_floats(data_args)
    for flag in ("max_train_windows", "max_eval_windows"):
        if getattr(data_args, flag) is not None and getattr(data_args, flag) < 1:
            raise ValueError(f"--{flag} {getattr(data_args, flag)} must be >= 1 (leave it out to use every window).")
    if model_args.model_name_or_path:
        return
    for flag in ("vocab_size", "n_layer", "n_embd", "n_head"):
        if getattr(model_args, flag) < 1:
            raise ValueError(f"--{flag} {getattr(model_args, flag)} must be a positive integer.")
    if model_args.n_positions < 2:
        raise ValueError(
            f"--n_positions {model_args.n_positions}: a window needs at least 2 tokens (one to predict from, one to "
            "predict); the paper's is 512."
        )
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


class _Pretraining:
    """One pre-training run: `prepare` builds its parts, `finish` measures held-out perplexity."""

    def __init__(self, model_args, data_args, args):
        self.model_args, self.data_args, self.args = model_args, data_args, args

    def identity(self) -> dict[str, Any]:
        return {
            "recipe": "pretrain",
            "model": dataclasses.asdict(self.model_args),
            "data": dataclasses.asdict(self.data_args),
            "seed": self.args.seed,
        }

    def prepare(self) -> Prepared:
        model_args, data_args, args = self.model_args, self.data_args, self.args
        _check_arguments(model_args, data_args)
        if not args.do_train:
            raise ValueError("The pre-training recipe trains: --do_train false leaves it nothing to do.")
        train_docs, eval_docs = load_corpus(
            data_args.train_files,
            data_args.validation_files,
            dataset_name=data_args.dataset_name,
            dataset_config_name=data_args.dataset_config_name,
            text_column=data_args.text_column,
            streaming=data_args.streaming,
            validation_split_percentage=data_args.validation_split_percentage,
        )
        if isinstance(train_docs, datasets.IterableDataset) and args.max_steps <= 0:
            raise ValueError("A streamed corpus has no length: set --max_steps.")
        tokenizer = self._tokenizer(train_docs)
        model = self._model(tokenizer)
        # A language model's tokenizer encodes raw text: `tokenizer(text)` must not wrap it in the task template, or
        # pipeline("text-generation") and the zero-shot heuristics would see `_start_ … _classify_`. The special
        # tokens stay in the vocabulary; fine-tuning re-installs the template (hf_gpt1.finetuning.build_model).
        tokenizer.backend_tokenizer.post_processor = None

        window = model.config.n_positions
        with args.main_process_first(desc="packing"):
            train = pack_windows(train_docs, tokenizer, window, data_args.max_train_windows)
            evaluation = pack_windows(eval_docs, tokenizer, window, data_args.max_eval_windows)
        if not isinstance(train, datasets.IterableDataset) and train.num_rows == 0:
            raise ValueError(f"The corpus is shorter than one {window}-token window: add text or lower --n_positions.")
        if not isinstance(evaluation, datasets.IterableDataset) and evaluation.num_rows == 0:
            raise ValueError(
                f"The held-out text is shorter than one {window}-token window, so perplexity cannot be measured: add "
                "--validation_files with more text, raise --validation_split_percentage, or lower --n_positions."
            )
        return Prepared(
            model=model,
            tokenizer=tokenizer,
            train_dataset=train,
            eval_dataset=evaluation,
            data_collator=default_data_collator,
            trainer_class=PretrainTrainer,
        )

    def _tokenizer(self, train_docs):
        model_args, args = self.model_args, self.args
        source = model_args.tokenizer_name_or_path or model_args.model_name_or_path
        if source:
            flag = "--tokenizer_name_or_path" if model_args.tokenizer_name_or_path else "--model_name_or_path"
            check_model_path(source, flag)
        resumed = last_complete_checkpoint(args.output_dir) if args.resume else None
        if not source and resumed:
            source = resumed  # the BPE this run trained before it stopped (not trained again)
        if source:
            return load_gpt1_tokenizer(source)
        # Trained once, on the main process, and shared over the process group (no shared disk needed).
        tokenizer = None
        if args.process_index == 0:
            tokenizer = train_gpt1_tokenizer(_Texts(train_docs), vocab_size=model_args.vocab_size)
            add_gpt1_special_tokens(tokenizer)
        if args.world_size > 1:
            tokenizer = _share_tokenizer(tokenizer, args.process_index)
        return tokenizer

    def _model(self, tokenizer) -> GPT1LMHeadModel:
        model_args = self.model_args
        if model_args.model_name_or_path:
            model = load_checkpoint(
                GPT1LMHeadModel,
                model_args.model_name_or_path,
                original_embedding_table=model_args.original_embedding_table,
            )
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
                original_embedding_table=model_args.original_embedding_table,
                start_token_id=ids["start"],
                delimiter_token_id=ids["delimiter"],
                extract_token_id=ids["extract"],
                pad_token_id=ids["pad"],
            )
            model = GPT1LMHeadModel(config)
        model.set_attn_implementation(model_args.attn_implementation)
        return model

    def finish(self, trainer: GPT1Trainer, prepared: Prepared) -> tuple[dict[str, Any], list[str]]:
        metrics = logged_metrics(trainer, "eval_", trainer.state.global_step) or trainer.evaluate()
        line = f"held-out: loss {metrics['eval_loss']:.4f}, perplexity {metrics['eval_perplexity']:.2f}"
        return {"validation": metrics}, [line]

    def run(self) -> dict[str, Any]:
        return run_training(self.args, self.identity(), self.prepare, self.finish, "pretrain")


def run_pretraining(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, training_args: PretrainTrainingArguments
) -> dict[str, Any]:
    """Pre-trains (or continues pre-training) a GPT-1 with L1; returns (and writes to `all_results.json`) the
    training metrics and the held-out perplexity."""
    return _Pretraining(model_args, data_args, training_args).run()


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
    "pack_windows",
    "pretrain_main",
    "run_pretraining",
]
