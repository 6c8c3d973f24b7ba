# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""L1 pre-training (from scratch or continued) on packed windows of contiguous text: [`run_pretraining`], behind
`hf-gpt1 pretrain` (`hf_gpt1.commands.pretrain`).

Data flow: text, whatever its source, through one corpus interface (`hf_gpt1.data.packing.open_corpus`: local .txt /
.jsonl files read as a stream by `TextCorpus`; csv / parquet files or any Hub dataset through `DatasetCorpus`) → a
GPT-1 BPE (trained on a bounded sample of the corpus when none is given) → token ids joined into one stream →
`n_positions`-token windows, packed once by every core into a cache keyed by the corpus's and the tokenizer's content
(`hf_gpt1.data.packing`) → `GPT1LMHeadModel` with the token-mean L1 → `PretrainTrainer` (Adam, linear warm-up then
cosine to 0) with held-out perplexity at every evaluation.

The paper's full settings (100 epochs, a 40,000-merge BPE, 64 × 512-token windows) are the preset
`recipes/configs/presets/pretrain_paper.yaml`; the defaults here are smaller where a small corpus needs it (README:
"Paper settings").
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
from transformers import set_seed
from transformers.trainer_utils import IntervalStrategy

from ..configuration_gpt1 import GPT1Config
from ..data.files import check_text_file, each_file
from ..data.packing import (
    open_corpus,
    unknown_share,
    window_collator,
)
from ..modeling_gpt1 import GPT1LMHeadModel
from ..tokenization_gpt1 import UNK_TOKEN, add_gpt1_special_tokens, load_gpt1_tokenizer, train_gpt1_tokenizer
from .arguments import (
    MODEL_DTYPES,
    PretrainDataArguments,
    PretrainModelArguments,
    PretrainTrainingArguments,
    check_planned_steps,
    final_arguments,
    new_model_dtype,
    plan_warmup,
    planned_updates,
)
from .callbacks import TimeEstimate
from .checkpoints import (
    check_model_path,
    load_checkpoint,
    load_config,
    model_hub_access,
)
from .flags import flags_for_inputs, flags_of
from .launch import machine_by_machine, precision_engine, settle_launch
from .memory import apply_memory_arguments
from .pinned import PinnedModel, pinned_arguments, pins_record, plan_model_inputs
from .plans import Problems, check_trainer_arguments, print_plan, run_lines
from .precision import weights_dtype
from .results import logged_metrics, print_start, save_results
from .run_folder import RunFolder, check_output_dir, check_planned_inputs, check_recorded_digests, run_identity
from .trainer import PretrainTrainer

__all__ = ["PretrainPlan", "execute_pretraining", "plan_pretraining", "run_pretraining", "schedule"]


def run_pretraining(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, args: PretrainTrainingArguments
) -> dict[str, Any]:
    """Pre-trains (or continues pre-training) a GPT-1 with L1; returns (and writes to `all_results.json`) the
    training metrics and the held-out perplexity: the launch settled ([`settle_launch`]), then [`plan_pretraining`],
    then [`execute_pretraining`]. Every input problem is raised before the output folder is claimed."""
    notes = settle_launch(args)
    plan = plan_pretraining(model_args, data_args, args)
    if plan.args.dry_run:  # the plan printed instead of carried out: nothing written
        return print_plan(plan, notes)
    return execute_pretraining(plan, notes)


@dataclass(frozen=True)
class PretrainPlan:
    """What a pre-training run will do, decided from its arguments and its corpus before a tokenizer is trained or a
    model loaded, and before any file of the run is written ([`plan_pretraining`]); [`execute_pretraining`] carries it
    out. `str(plan)` says it.

    Args:
        model_args, data_args: The run's model and data arguments, as given.
        args (`PretrainTrainingArguments`): The training arguments with the plan's decisions applied
            ([`~hf_gpt1.training.arguments.final_arguments`]: the warm-up in updates, capped by `--warmup_cap`, when
            the updates are known).
        identity (`dict`): The run's identity, which the output folder is claimed with (`run_identity`).
        corpus: The corpus, opened and checked (`hf_gpt1.data.packing.open_corpus`).
        started (`float`): When planning began (the run's duration counts from it).
        pins (`tuple[PinnedModel, ...]`): The model and tokenizer as they will be read (`hf_gpt1.training.pinned`).
        window (`int`): The window in tokens: the continued model's `n_positions` (its config.json), else
            `--n_positions`.
        updates (`int | None`): The optimizer steps (`--max_steps`); None when the epochs and the packed windows
            decide them, which execute does once the corpus is tokenized ([`schedule`]).
        schedule (`tuple[str, ...]`): The start screen's lines for the warm-up the plan decided.
    """

    model_args: PretrainModelArguments
    data_args: PretrainDataArguments
    args: PretrainTrainingArguments
    identity: dict[str, Any]
    corpus: Any
    started: float
    pins: tuple[PinnedModel, ...] = ()
    window: int = 0
    updates: int | None = None
    schedule: tuple[str, ...] = ()

    def __str__(self) -> str:
        data, args = self.data_args, self.args
        source = data.dataset_name or ", ".join(data.train_files or [])
        tokenizer = self.model_args.tokenizer_name_or_path or self.model_args.model_name_or_path
        sizes, windows = _corpus_sizes(self.corpus, self.window, data.max_train_windows)
        warmup = list(self.schedule)
        if self.updates is None and windows is not None:  # the epochs decide: estimated from the corpus's bytes
            estimate = planned_updates(args, range(windows))
            warmup = [
                f"about {estimate:,} updates (from the estimated windows; exact once the corpus is tokenized)",
                _warmup_bound(args),
            ]
        elif self.updates is None:
            warmup = [_warmup_bound(args)]
        return "\n".join(
            [
                f"pretrain: corpus {source}{' (streamed)' if data.streaming else ''}",
                *(f"  {line}" for line in sizes),
                f"  tokenizer {tokenizer or 'a BPE trained on the corpus'}; model "
                f"{self.model_args.model_name_or_path or 'new, from the size arguments'}",
                *run_lines(args, self.model_args.model_dtype, self.updates, warmup),
                *RunFolder(args.output_dir).plan_lines(args),
            ]
        )


def _warmup_bound(args: PretrainTrainingArguments) -> str:
    """The warm-up of a run whose updates are not known yet: as asked, with the cap that will bound it."""
    asked = f"{args.warmup_steps:g} updates" if args.warmup_steps >= 1 else f"{args.warmup_steps:.1%} of the updates"
    cap = f", at most {args.warmup_cap:.0%} of the run (--warmup_cap)" if args.warmup_cap < 1 else ""
    return f"warm-up: {asked}{cap}"


def schedule(args: PretrainTrainingArguments, updates: int | None) -> tuple[PretrainTrainingArguments, list[str]]:
    """The arguments with the warm-up decided for `updates` ([`plan_warmup`]: `--warmup_cap` applied; None: not
    known yet, nothing decided), and the start screen's lines that say it."""
    lines, warmup = plan_warmup(args, updates)
    return final_arguments(args, **warmup), lines


def plan_pretraining(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, args: PretrainTrainingArguments
) -> PretrainPlan:
    """Checks the arguments, the output folder (changing nothing) and the corpus (opened, its files' digests taken);
    no tokenizer is trained, no model loaded and nothing of the run written. Raises every input problem found, at
    once (`ArgumentProblems`), in the command line's words."""
    started = time.time()
    inputs = {
        "--model_name_or_path": model_args.model_name_or_path,
        "--tokenizer_name_or_path": model_args.tokenizer_name_or_path,
        "--train_files": data_args.train_files,
        "--validation_files": data_args.validation_files,
    }
    identity = run_identity("pretrain", model_args, data_args, args.seed, inputs)
    problems = Problems()  # each check below runs, and one error says every problem found
    if args.process_index == 0:  # an unusable folder is refused before anything loads; it is claimed by execute
        with problems.collect():
            check_output_dir(args.output_dir, identity, args.overwrite_output_dir, args.resume)
    if not args.do_train:
        problems.add("The pre-training recipe trains: --do_train false leaves it nothing to do.")
    if data_args.streaming and args.max_steps <= 0:
        problems.add("A streamed corpus has no length: set --max_steps.")
    with problems.collect():
        weights_dtype(model_args.model_dtype, args.bf16, precision_engine(args))  # a dtype the engine refuses
    updates = args.max_steps if args.max_steps > 0 else None  # else: the epochs and the packed windows decide
    with problems.collect():
        check_trainer_arguments(args, updates)
    with problems.collect(), flags_for_inputs(flags_of(data_args)):  # every corpus file there, with the rest
        each_file([*(data_args.train_files or []), *(data_args.validation_files or [])], check_text_file)
    found = len(problems.found)
    for flag, path in (("--model_name_or_path", model_args.model_name_or_path),
                       ("--tokenizer_name_or_path", model_args.tokenizer_name_or_path)):  # fmt: skip
        if path:
            with problems.collect():
                check_model_path(path, flag)
    window = model_args.n_positions
    if model_args.model_name_or_path and len(problems.found) == found:  # a continued model's window: its config's
        with problems.collect(), model_hub_access(model_args):
            window = load_config(GPT1Config, model_args.model_name_or_path).n_positions
    problems.raise_any()  # the corpus is read only for a run that can start
    pins = plan_model_inputs(model_args)  # the commit and files that will be read (`pinned`)
    args, lines = schedule(args, updates)
    if hub := pins_record(pins):
        identity = {**identity, "pinned": hub}
        if args.process_index == 0:
            check_output_dir(args.output_dir, identity, args.overwrite_output_dir, args.resume)

    # data: the corpus, whatever its source (one interface: `data.packing.open_corpus`), held-out documents apart
    with flags_for_inputs(flags_of(data_args)):  # the data layer names paths and arguments; the command line, flags
        corpus = open_corpus(
            data_args.train_files,
            data_args.validation_files,
            dataset_name=data_args.dataset_name,
            dataset_config_name=data_args.dataset_config_name,
            text_column=data_args.text_column,
            streaming=data_args.streaming,
            validation_split_percentage=data_args.validation_split_percentage,
        )
        check_recorded_digests(identity, corpus.digests)
    return PretrainPlan(model_args, data_args, args, identity, corpus, started, pins, window, updates, tuple(lines))


def execute_pretraining(plan: PretrainPlan, notes: Sequence[str] = ()) -> dict[str, Any]:
    """Carries out a [`PretrainPlan`]: the tokenizer (trained on the corpus when none is given) and the model, the
    windows packed once, the Trainer; then, in the claimed output folder, training and the held-out perplexity;
    returns the results (`all_results.json`). `notes`: the launch's, for the start screen ([`settle_launch`])."""
    model_args, data_args, args, identity = plan.model_args, plan.data_args, plan.args, plan.identity
    corpus = plan.corpus
    check_planned_inputs(identity)  # what was planned is what runs
    for pin in plan.pins:  # and is read: the planned commit, weights and tokenizer files
        pin.check()
    model_args = pinned_arguments(model_args, plan.pins)
    set_seed(args.seed)
    flags = flags_of(data_args)

    # tokenizer and model
    with model_hub_access(model_args):
        tokenizer = _tokenizer(model_args, args, corpus.documents)
        model = _model(model_args, tokenizer, weights_dtype(model_args.model_dtype, args.bf16, precision_engine(args)))
    # A language model's tokenizer encodes raw text: `tokenizer(text)` must not wrap it in the task template, or
    # pipeline("text-generation") and the zero-shot heuristics would see `_start_ … _classify_`. The special tokens
    # stay in the vocabulary; fine-tuning re-installs the template (hf_gpt1.training.finetune.build_model).
    tokenizer.backend_tokenizer.post_processor = None

    # windows of the model's context, packed once per cache folder (machine 0 first; the others read or pack theirs)
    window, workers = plan.window, data_args.preprocessing_num_workers
    workers_flag = {"num_workers": "--preprocessing_num_workers"}
    eval_limit = data_args.max_eval_windows or None  # 0: every window
    with flags_for_inputs(flags, workers_flag), machine_by_machine(args, "packing"):
        train, all_evaluation = corpus.windows(tokenizer, window, workers, eval_limit)
        train = _first(train, data_args.max_train_windows)
        evaluation = _first(all_evaluation, eval_limit)
    if not isinstance(train, datasets.IterableDataset) and train.num_rows == 0:
        raise ValueError(f"The corpus is shorter than one {window}-token window: add text or lower --n_positions.")
    if not isinstance(evaluation, datasets.IterableDataset) and evaluation.num_rows == 0:
        raise ValueError(
            f"The held-out text is shorter than one {window}-token window, so perplexity cannot be measured: add "
            "--validation_files with more text, raise --validation_split_percentage, or lower --n_positions."
        )
    check_planned_steps(args, train)
    lines = _coverage_warning(model_args, tokenizer, train, corpus, window)
    if data_args.streaming:
        lines.append(
            "streaming: windows are tokenized as they are read; nothing is written to the datasets cache but the "
            "corpus files' digests (hf_gpt1/digests), and the held-out windows scored are held in memory"
        )
    updates, warmup_lines = plan.updates, list(plan.schedule)
    if updates is None:  # the epochs decide: the packed windows give the updates, and the warm-up follows
        updates = planned_updates(args, train)
        args, warmup_lines = schedule(args, updates)
    lines += warmup_lines + _token_plan(args, updates, window)
    lines += _evaluation_plan(args, evaluation, all_evaluation, window)
    if not (model_args.tokenizer_name_or_path or model_args.model_name_or_path):
        lines += _vocabulary_warning(model_args, len(tokenizer), train, window)

    # the Trainer may still refuse its arguments: built before the folder is claimed, so a failed start changes nothing
    apply_memory_arguments(args)
    trainer = PretrainTrainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=evaluation,
        data_collator=window_collator,
        processing_class=tokenizer,
    )
    trainer.add_callback(TimeEstimate(trainer.speed, after=TIME_ESTIMATE_AFTER))
    # a resume's checkpoint, compared with this launch's batching (it may refuse): before the folder is claimed
    run = RunFolder(args.output_dir)
    resumed = run.resume_checkpoint(args, train, unit="windows")
    with run.claimed(args, identity):
        print_start(trainer, "pretrain", lines, notes)
        train_result = trainer.train(resume_from_checkpoint=resumed)
        trainer.save_model()

        # held-out perplexity of the final model (logged when it was evaluated at the last step)
        metrics = logged_metrics(trainer, "eval_", trainer.state.global_step) or trainer.evaluate()
        line = f"held-out: loss {metrics['eval_loss']:.4f}, perplexity {metrics['eval_perplexity']:.2f}"
        return save_results(trainer, "pretrain", {"validation": metrics}, [line], train_result, plan.started)


# Above this share of `<unk>` among the training tokens the start warns: a character the BPE never saw is lost text.
TIME_ESTIMATE_AFTER = 10  # updates timed (the first one left out) before the expected time is printed
UNKNOWN_WARNING_SHARE = 0.005
STREAMED_COVERAGE_WINDOWS = 1_000  # a streamed corpus's coverage is measured on its first windows


BYTES_PER_TOKEN = 4  # the plan's estimate of a BPE's tokens before one is trained (English text: about 4 bytes each)


def _corpus_sizes(corpus, window: int, limit: int | None = None) -> tuple[list[str], int | None]:
    """The plan's lines for the corpus's size: local text files by their bytes (tokens and windows estimated, the
    tokenizer not being trained yet), a `datasets` corpus by its rows; and the training windows estimated (None but
    for local text files)."""
    lines, windows = [], None
    for name in ("train", "validation"):
        part = getattr(corpus, name, None)
        if isinstance(part, list):  # `TextCorpus` shards: byte ranges of the files
            size = sum(shard.end - shard.start for shard in part)
            tokens = size // BYTES_PER_TOKEN
            if name == "train":  # the first --max_train_windows of them, when limited
                windows = min(tokens // window, limit or tokens // window)
            lines.append(
                f"{name}: {size:,} bytes in {len({shard.path for shard in part})} file(s), about {tokens:,} tokens "
                f"({BYTES_PER_TOKEN} bytes each), about {tokens // window:,} windows of {window} tokens"
            )
        elif hasattr(part, "num_rows"):
            lines.append(f"{name}: {part.num_rows:,} rows of text, packed into windows of {window} tokens")
        elif part is not None:
            lines.append(f"{name}: streamed rows, packed into windows of {window} tokens as they are read")
    return lines, windows


def _token_plan(args: PretrainTrainingArguments, updates: int | None, window: int) -> list[str]:
    """The start line's budget: updates × global batch × window tokens (a streamed corpus without --max_steps has
    none)."""
    if updates is None:
        return []
    batch = args.per_device_train_batch_size * args.world_size * args.gradient_accumulation_steps
    return [
        f"planned: {updates:,} updates × {batch} windows × {window} tokens = {updates * batch * window:,} tokens "
        f"(the expected time is printed after {TIME_ESTIMATE_AFTER} measured updates)"
    ]


def _coverage_warning(model_args: PretrainModelArguments, tokenizer, train, corpus, window: int) -> list[str]:
    """A warning when too many training tokens are `<unk>`: characters the tokenizer (or the BPE's sample of the
    corpus, `--bpe_sample_mb`) never saw."""
    if isinstance(train, datasets.IterableDataset):
        sample = corpus.first_windows(train, tokenizer, window, STREAMED_COVERAGE_WINDOWS)
        measured = f"of the first {sample.num_rows} streamed windows' tokens"
    else:
        sample, measured = train, "of the training tokens"
    share = unknown_share(sample, tokenizer.convert_tokens_to_ids(UNK_TOKEN))  # the BPE's unknown, not a special
    if share <= UNKNOWN_WARNING_SHARE:
        return []
    if model_args.tokenizer_name_or_path or model_args.model_name_or_path:
        fix = "the tokenizer does not cover this text: train a BPE on it (leave --tokenizer_name_or_path out)"
    else:
        fix = (
            f"the BPE was trained on the first {model_args.bpe_sample_mb:g} MB of the corpus (--bpe_sample_mb), which "
            "misses characters of the rest: raise --bpe_sample_mb to cover the whole corpus, or mix its sources"
        )
    return [f"warning: {share:.1%} {measured} are <unk> (text lost to training); {fix}."]


def _first(windows, limit: int | None):
    if limit is None:
        return windows
    if isinstance(windows, datasets.IterableDataset):
        return windows.take(limit)
    return windows.select(range(min(limit, windows.num_rows)))


# The default BPE size: one entry per this many tokens of training text (a rarer entry's embedding barely trains).
TOKENS_PER_ENTRY = 100
VOCAB_RANGE = (1_000, 40_000)


def _suggested_vocab_size(tokens: int) -> int:
    return min(max(tokens // TOKENS_PER_ENTRY, VOCAB_RANGE[0]), VOCAB_RANGE[1])


def _auto_vocab_size(documents) -> int:
    """`_suggested_vocab_size` for the corpus, its tokens estimated at 4 characters each (reading at most the text
    that reaches the largest size)."""
    limit = 4 * TOKENS_PER_ENTRY * VOCAB_RANGE[1]
    return _suggested_vocab_size(sum(len(text) for text in documents(limit_chars=limit)) // 4)


def _vocabulary_warning(model_args: PretrainModelArguments, vocab: int, train, window: int) -> list[str]:
    """A warning when the BPE trained here is far larger than the training text supports."""
    if not hasattr(train, "__len__"):
        return []
    tokens = len(train) * window
    suggested = _suggested_vocab_size(tokens)
    if vocab <= 2 * suggested:
        return []
    return [
        f"warning: {tokens / vocab:.0f} tokens of training text per vocabulary entry (--vocab_size "
        f"{model_args.vocab_size}): most entries will barely train; about {suggested:,} suits this corpus "
        f"({TOKENS_PER_ENTRY} tokens per entry: leave --vocab_size out to size it so), or add text."
    ]


def _evaluation_plan(args: PretrainTrainingArguments, evaluation, all_evaluation, window: int) -> list[str]:
    """The start line saying what each held-out evaluation scores, and how often."""
    if args.eval_strategy == IntervalStrategy.NO:
        return []
    if args.eval_strategy == IntervalStrategy.EPOCH:
        when = "every epoch"
    else:
        when = (
            f"every {args.eval_steps:g} updates" if args.eval_steps >= 1 else f"every {args.eval_steps:.0%} of the run"
        )
    if not hasattr(evaluation, "__len__"):
        return [f"held-out perplexity: streamed windows of {window} tokens, {when}"]
    limited = len(evaluation) < len(all_evaluation)
    of = f" (the first {len(evaluation)} of {len(all_evaluation)}: --max_eval_windows)" if limited else ""
    return [f"held-out perplexity: {len(evaluation)} windows of {window} tokens{of}, {when}"]


class _Texts:
    """A bounded prefix of the corpus text for tokenizer training, iterable more than once (the BPE trainer reads it
    twice)."""

    def __init__(self, documents, limit_chars: int):
        self.documents, self.limit_chars = documents, limit_chars

    def __iter__(self):
        return iter(self.documents(limit_chars=self.limit_chars))


def _tokenizer(model_args: PretrainModelArguments, args: PretrainTrainingArguments, documents):
    """The given tokenizer (the model's), the one this run trained before it stopped, or a BPE trained on the corpus
    (once, on the main process, and shared over the process group)."""
    source = model_args.tokenizer_name_or_path or model_args.model_name_or_path  # checked by the plan
    resumed = RunFolder(args.output_dir).resumable_checkpoint() if args.resume else None
    if not source and resumed:
        source = resumed  # the BPE this run trained before it stopped (not trained again)
    if source:
        return load_gpt1_tokenizer(source)
    # Trained once, on the main process, and shared over the process group (no shared disk needed).
    tokenizer = None
    if args.process_index == 0:
        vocab_size = model_args.vocab_size or _auto_vocab_size(documents)
        sample = _Texts(documents, limit_chars=int(model_args.bpe_sample_mb * 1e6))
        tokenizer = train_gpt1_tokenizer(sample, vocab_size=vocab_size)
        add_gpt1_special_tokens(tokenizer)
    if args.world_size > 1:
        tokenizer = _share_tokenizer(tokenizer, args.process_index)
    return tokenizer


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


def _model(model_args: PretrainModelArguments, tokenizer, dtype: str) -> GPT1LMHeadModel:
    """The checkpoint to continue, or a new GPT-1 of the given sizes with the tokenizer's special tokens."""
    if model_args.model_name_or_path:
        model = load_checkpoint(
            GPT1LMHeadModel,
            model_args.model_name_or_path,
            original_embedding_table=model_args.original_embedding_table,
            dtype=MODEL_DTYPES[dtype],
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
        model = GPT1LMHeadModel(config).to(new_model_dtype(dtype))
    model.set_attn_implementation(model_args.attn_implementation)
    return model
