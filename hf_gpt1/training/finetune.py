# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Fine-tuning with L3 = L2 + λ·L1 on any task of `hf_gpt1.data.tasks`: [`run_finetuning`], behind
`hf-gpt1 glue` and `hf-gpt1 multiple-choice` (`hf_gpt1.commands`).

Data flow: raw rows (Hub, GLUE TSV folder, or CSV/TSV/JSON files: `hf_gpt1.data.files`) → `prepare_dataset` (tokenize
once) → the task's collator (special tokens, padding, LM labels) → `GPT1ForSequenceClassification` /
`GPT1ForMultipleChoice` → `GPT1Trainer` → validation metrics from the local GLUE `evaluate` module, test predictions
as GLUE submission TSVs or prediction files, in input order.

The defaults are the paper's protocol (the original code's): uniform shuffling with the last partial batch dropped,
the original's embedding table (its dropout and L1 softmax), evaluation on validation every epoch and test
predictions from the best-validation checkpoint.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
import pyarrow.compute as pc
import torch
from transformers import EvalPrediction, set_seed

from ..configuration_gpt1 import GPT1Config
from ..data.files import check_unique_ids, each_file, load_task_splits, task_folder
from ..data.fingerprint import rows_digest
from ..data.metrics import baseline_name, load_metric, prediction_warnings, score_with_baselines
from ..data.scores import SCORES
from ..data.submissions import submission_scores, write_glue_submission, write_predictions
from ..data.tasks import BUILTIN_TASKS, TaskSpec, get_task, task_to_dict, unlabelled
from ..data.transforms import prepare_dataset, rows_to_truncate
from ..formats import story_cloze_segment_cap
from ..modeling_gpt1 import GPT1PreTrainedModel
from ..modeling_gpt1 import head as model_head
from ..tokenization_gpt1 import add_gpt1_special_tokens, load_gpt1_tokenizer
from .arguments import (
    MODEL_DTYPES,
    ArgumentProblems,
    DataArguments,
    GPT1TrainingArguments,
    ModelArguments,
    check_planned_steps,
    final_arguments,
    new_model_dtype,
    planned_updates,
)
from .checkpoints import check_model_path, load_checkpoint, load_config, model_hub_access
from .flags import flags_for_inputs, flags_of, in_flags
from .launch import (
    COMPILE_PAYS_OFF_UPDATES,
    compiles_finetuning,
    finetuning_compile_mode,
    machine_by_machine,
    precision_engine,
    settle_launch,
)
from .memory import apply_memory_arguments
from .pinned import PinnedModel, pinned_arguments, pins_record, plan_model_inputs
from .plans import Problems, check_trainer_arguments, print_plan, run_lines
from .precision import weights_dtype
from .results import format_metrics, logged_metrics, print_start, save_results
from .run_folder import RunFolder, check_output_dir, check_planned_inputs, run_identity
from .trainer import GPT1Trainer

logger = logging.getLogger(__name__)

__all__ = [
    "FinetunePlan",
    "build_model",
    "execute_finetuning",
    "input_lengths",
    "plan_finetuning",
    "reinitialize_blocks",
    "run_finetuning",
    "tokenize_split",
]

COMMAND_RECIPES = ("glue", "multiple_choice")
"""The recipes of the fine-tuning commands, each of which takes its formats' tasks only (`InputFormat.command`); other
callers, such as the demo, take any task."""


def run_finetuning(
    model_args: ModelArguments, data_args: DataArguments, args: GPT1TrainingArguments, recipe: str = "glue"
) -> dict[str, Any]:
    """Fine-tunes, evaluates and predicts; returns (and writes to `output_dir/all_results.json`) the metrics: the
    launch settled ([`settle_launch`]), then [`plan_finetuning`], then [`execute_finetuning`].

    Every input problem (unknown task, bad columns or labels, unreadable files, an output dir of another run,
    `max_seq_length` beyond the model) is raised before the output folder is claimed and the first training step.
    With `--do_train false` the model is only evaluated and used for predictions.
    """
    notes = settle_launch(args)
    plan = plan_finetuning(model_args, data_args, args, recipe)
    if plan.args.dry_run:  # the plan printed instead of carried out: nothing written
        return print_plan(plan, notes)
    return execute_finetuning(plan, notes)


@dataclass(frozen=True)
class FinetunePlan:
    """What a fine-tuning run will do, decided from its arguments and its data before any model is loaded or any
    file of the run written ([`plan_finetuning`]); [`execute_finetuning`] carries it out. `str(plan)` says it.

    Args:
        model_args, data_args: The model's and the data's arguments, as given.
        args (`GPT1TrainingArguments`): The training arguments with the data's decisions applied
            ([`~hf_gpt1.training.arguments.final_arguments`]: the evaluation plan, the best checkpoint's metric).
        spec (`TaskSpec`): The task.
        recipe (`str`): The command the run belongs to (`glue`, `multiple_choice`; the run's identity records it).
        identity (`dict`): The run's identity, which the output folder is claimed with (`run_identity`).
        splits (`datasets.DatasetDict`): The rows of each split the run reads, checked; `sources` names where each
            came from, `data_sha256` digests them all as read.
        eval_names (`tuple[str, ...]`): The splits evaluated (validation, MNLI's two).
        started (`float`): When planning began (the run's duration counts from it).
        notes (`tuple[str, ...]`): What the plan decided that the start screen says (the compilation default).
        pins (`tuple[PinnedModel, ...]`): The model and tokenizer as they will be read (`hf_gpt1.training.pinned`):
            a Hub id's commit and snapshot folder, and each folder's weights and tokenizer files.
        updates (`int | None`): The optimizer steps training takes (None: a prediction run).
        max_length (`int`): The longest input in tokens (`--max_seq_length`, at most the model's `n_positions`).
        segment_cap (`int | None`): The per-segment cap of multiple-choice inputs ([`input_lengths`]).
    """

    model_args: ModelArguments
    data_args: DataArguments
    args: GPT1TrainingArguments
    spec: TaskSpec
    recipe: str
    identity: dict[str, Any]
    splits: datasets.DatasetDict
    sources: dict[str, str]
    data_sha256: str
    eval_names: tuple[str, ...]
    started: float
    notes: tuple[str, ...] = ()
    pins: tuple[PinnedModel, ...] = ()
    updates: int | None = None
    max_length: int = 0
    segment_cap: int | None = None

    @property
    def title(self) -> str:
        return f"{self.recipe} {self.spec.name}" + ("" if self.args.do_train else " (prediction only)")

    def __str__(self) -> str:
        args = self.args
        lines = [f"{self.title}: {self.spec.format} task, model {self.model_args.model_name_or_path}"]
        lines += [f"  {split}: {rows.num_rows:,} rows ({self.sources[split]})" for split, rows in self.splits.items()]
        if args.do_train and self.data_args.max_train_samples is not None:
            selected = selected_rows(self.data_args, self.splits["train"], "train")
            lines.append(f"  trains on the first {selected:,} rows (--max_train_samples)")
        cap = f", {self.segment_cap} per segment" if self.segment_cap is not None else ""
        lines.append(f"  inputs: at most {self.max_length} tokens{cap}")
        lines += run_lines(args, self.model_args.model_dtype, self.updates)
        if args.load_best_model_at_end:
            direction = "highest" if args.greater_is_better else "lowest"
            lines.append(f"  keeps the checkpoint of the {direction} {args.metric_for_best_model}")
        lines += RunFolder(args.output_dir).plan_lines(args, f" (data {self.data_sha256[:12]})")
        return "\n".join(lines)


def plan_finetuning(
    model_args: ModelArguments, data_args: DataArguments, args: GPT1TrainingArguments, recipe: str = "glue"
) -> FinetunePlan:
    """Checks the arguments, the output folder (changing nothing) and the data, and decides what the data decides;
    nothing of the run is written and no model is loaded. Raises every input problem found, at once
    (`ArgumentProblems`), in the command line's words."""
    started = time.time()
    spec = get_task(data_args.task)
    inputs = {
        "--model_name_or_path": model_args.model_name_or_path,
        "--tokenizer_name_or_path": model_args.tokenizer_name_or_path,
        "--data_dir": data_args.data_dir and task_folder(data_args.data_dir, spec),
        "--train_file": data_args.train_file,
        "--validation_file": data_args.validation_file,
        "--test_file": data_args.test_file,
    }
    identity = run_identity(recipe, model_args, data_args, args.seed, inputs)
    problems = Problems()  # each check below runs, and one error says every problem found
    if args.process_index == 0:  # an unusable folder is refused before anything loads; it is claimed by execute
        with problems.collect():
            check_output_dir(args.output_dir, identity, args.overwrite_output_dir, args.resume)
    with problems.collect():
        _check_arguments(spec, model_args, data_args, args, recipe)
    with problems.collect():
        weights_dtype(model_args.model_dtype, args.bf16, precision_engine(args))  # a dtype the engine refuses
    # data: the task's splits, checked, then the evaluation plan; the arguments are final from here on
    updates = None
    with problems.collect():
        raw, sources, data_sha256 = _load_splits(spec, data_args, args)
        eval_names = tuple(_eval_split_names(raw))
        if args.do_train:  # the rows training takes: the first --max_train_samples, those with a gold label
            train_rows = range(_train_rows(spec, data_args, raw["train"]))
            updates = planned_updates(args, train_rows)
        compiled, compile_notes = _compile_plan(args, updates)
        args = final_arguments(args, **_evaluation_plan(args, spec, list(eval_names)), **compiled)
        if args.do_train:
            check_planned_steps(args, train_rows)
    with problems.collect():
        check_trainer_arguments(args, updates)
    # the model: its config.json read (not its weights) for what the config decides
    found = len(problems.found)
    with problems.collect():
        check_model_path(model_args.model_name_or_path)
    if model_args.tokenizer_name_or_path:
        with problems.collect():
            check_model_path(model_args.tokenizer_name_or_path, "--tokenizer_name_or_path")
    config = None
    if len(problems.found) == found:  # the model arguments name something that can be read
        with problems.collect(), model_hub_access(model_args):
            config = load_config(GPT1Config, model_args.model_name_or_path)
        if config is not None:  # each problem of the config in its own check: one does not hide another
            with problems.collect():
                lengths = input_lengths(data_args, config, predict_only=not args.do_train)
            if not (args.do_train or model_args.ignore_head_checks):
                with problems.collect():
                    _check_head(spec, config, model_args)
            if model_args.transfer_layers is not None:
                with problems.collect():
                    check_transfer_layers(model_args.transfer_layers, config.n_layer)
    problems.raise_any()  # a run that can start: its model's files are pinned (a Hub id's downloaded)
    pins = plan_model_inputs(model_args)
    if hub := pins_record(pins):  # a Hub commit is part of what the run is
        identity = {**identity, "pinned": hub}
        if args.process_index == 0:
            check_output_dir(args.output_dir, identity, args.overwrite_output_dir, args.resume)
    return FinetunePlan(
        model_args,
        data_args,
        args,
        spec,
        recipe,
        identity,
        raw,
        sources,
        data_sha256,
        eval_names,
        started,
        tuple(compile_notes),
        pins,
        updates,
        *lengths,
    )


def execute_finetuning(plan: FinetunePlan, notes: Sequence[str] = ()) -> dict[str, Any]:
    """Carries out a [`FinetunePlan`]: the model and tokenizer, the splits tokenized once, the Trainer; then, in the
    claimed output folder, training, evaluation and predictions; returns the results (`all_results.json`). `notes`:
    the launch's, for the start screen ([`settle_launch`])."""
    model_args, data_args, args, spec = plan.model_args, plan.data_args, plan.args, plan.spec
    raw, sources, eval_names = plan.splits, plan.sources, list(plan.eval_names)
    check_planned_inputs(plan.identity)  # what was planned is what runs
    for pin in plan.pins:  # and is read: the planned commit, weights and tokenizer files
        pin.check()
    model_args = pinned_arguments(model_args, plan.pins)
    set_seed(args.seed)

    # model and tokenizer
    with model_hub_access(model_args):
        tokenizer = load_gpt1_tokenizer(model_args.tokenizer_name_or_path or model_args.model_name_or_path)
        model = build_model(
            spec, model_args, tokenizer, predict_only=not args.do_train, bf16=args.bf16, engine=precision_engine(args)
        )
    max_length, segment_cap = plan.max_length, plan.segment_cap
    # the truncation the run uses travels with the model, so that pipelines serve inputs as the run saw them
    tokenizer.model_max_length = max_length
    model.config.segment_cap = segment_cap  # None but for multiple choice (`_check_arguments`)

    # tokenized once per cache folder (machine 0 first; the others read its cache or fill their own)
    processed = {}
    with machine_by_machine(args, "tokenization"):
        for split, rows in raw.items():
            processed[split], collator = _tokenize(
                spec, data_args, split, rows, sources[split], tokenizer, max_length, segment_cap
            )
    if args.torch_compile and data_args.pad_to_multiple_of is None and compiled_padding(max_length):
        # a compiled step specialises on the batch's length: a few padded lengths instead of one per batch
        collator = dataclasses.replace(collator, pad_to_multiple_of=compiled_padding(max_length))

    # the Trainer may still refuse its arguments: built before the folder is claimed, so a failed start changes nothing
    apply_memory_arguments(args)
    trainer = GPT1Trainer(
        model=model,
        args=args,
        train_dataset=processed.get("train"),
        eval_dataset={split: processed[split] for split in eval_names} or None,
        data_collator=collator,
        processing_class=tokenizer,
        compute_metrics=_metric_fn(spec),
    )
    # a resume's checkpoint, compared with this launch's batching (it may refuse): before the folder is claimed
    run = RunFolder(args.output_dir)
    resumed = run.resume_checkpoint(args, processed["train"]) if args.do_train else None
    with run.claimed(args, plan.identity):
        if spec.name not in BUILTIN_TASKS and trainer.is_world_process_zero():  # later tools learn the task here
            run.write_task(task_to_dict(spec))
        print_start(trainer, plan.title, [*_batch_note(args), *plan.notes], notes)
        train_result = None
        if args.do_train:
            train_result = trainer.train(resume_from_checkpoint=resumed)
            trainer.save_model()

        # validation metrics of the model in hand (logged when it was evaluated during training), test predictions
        results: dict[str, Any] = {"task": spec.name, "data_sha256": plan.data_sha256}
        # which rows of each evaluated split were scored: the labelled ones (`rows`) of its first `selected` (what
        # --max_eval_samples chose) of `of`; the card names the rows scored from these (hf_gpt1.tools.hub)
        results["evaluated_rows"] = {
            s: {"rows": processed[s].num_rows, "of": raw[s].num_rows, "selected": selected_rows(data_args, raw[s], s)}
            for s in eval_names
        }
        lines = []
        best = trainer.state.best_model_checkpoint if args.load_best_model_at_end else None
        if best is not None:
            results["best_checkpoint"] = best
            results["best_metric"] = {args.metric_for_best_model: trainer.state.best_metric}
            lines.append(f"best checkpoint (by {args.metric_for_best_model}): {best}")
        step = trainer.state.best_global_step if best is not None else trainer.state.global_step
        for split in eval_names:
            metrics = logged_metrics(trainer, f"eval_{split}_", step) if args.do_train else None
            if metrics is None:
                metrics = trainer.evaluate(processed[split], metric_key_prefix=f"eval_{split}")
            results[split] = metrics
            lines.append(_metrics_line(spec, split, metrics, processed[split].num_rows, data_args.max_eval_samples))
        for split in [s for s in processed if s.startswith("test")]:
            lines.append(_predict(trainer, spec, split, processed[split], raw[split], results))
        warnings = [
            line
            for split, metrics in results.items()
            if isinstance(metrics, dict)
            for line in prediction_warnings(spec, split, metrics, prefix=f"eval_{split}_")
        ]
        if warnings:
            results["warnings"] = warnings
            lines += [f"warning: {w}" for w in warnings]
        return save_results(trainer, plan.title, results, lines, train_result, plan.started)


def _train_rows(spec: TaskSpec, data_args: DataArguments, rows: datasets.Dataset) -> int:
    """How many rows training takes: the first `--max_train_samples`, less those without a gold label (dropped when
    the split is tokenized, `tokenize_split`)."""
    selected = rows[spec.label_column][: selected_rows(data_args, rows, "train")]
    return sum(not unlabelled(value) for value in selected)


def _compile_plan(args: GPT1TrainingArguments, updates: int | None) -> tuple[dict[str, Any], list[str]]:
    """`--torch_compile` as given, or its default decided from the run's `updates` (`launch.compiles_finetuning`), and
    the compile mode (`launch.finetuning_compile_mode`: CUDA graphs on one GPU); returns the arguments to set and, on
    a CUDA GPU, the start screen's lines that say the decisions."""
    settings: dict[str, Any] = {}
    notes = []
    compiled = bool(args.torch_compile)
    if args.torch_compile is None:
        compiled = settings["torch_compile"] = compiles_finetuning(args.bf16, updates)
        if torch.cuda.is_available() and args.do_train:
            bf16 = str(args.bf16).lower()
            reason = f"{updates:,} updates, --bf16 {bf16}; on from {COMPILE_PAYS_OFF_UPDATES:,} updates with --bf16"
            effect = "each length bucket compiles once, in its first step" if compiled else "--torch_compile true: on"
            notes.append(f"torch.compile: {'on' if compiled else 'off'} by default ({reason}): {effect}")
    mode = finetuning_compile_mode(args, compiled)
    if mode:
        settings["torch_compile_mode"] = mode
        notes.append(
            f"CUDA graphs: on by default (--torch_compile_mode {mode}): each length bucket's step is one graph, "
            "recorded in its first steps and then replayed in one launch; --torch_compile_mode default turns it off"
        )
    return settings, notes


PAPER_BATCH = 32  # the paper's fine-tuning batch (section 4.1)


def _batch_note(args: GPT1TrainingArguments) -> list[str]:
    """A launch on several processes whose global batch is not the paper's 32 says so, with the flag that gives 32:
    `--per_device_train_batch_size` is per process, so 8 GPUs at the default train at 256."""
    world, steps = max(args.world_size, 1), args.gradient_accumulation_steps
    total = args.per_device_train_batch_size * world * steps
    if not args.do_train or world == 1 or total == PAPER_BATCH:
        return []
    fix = (
        f"--per_device_train_batch_size {PAPER_BATCH // (world * steps)} gives it"
        if PAPER_BATCH % (world * steps) == 0
        else f"no per-device size gives it on {world} processes × {steps} accumulation"
    )
    return [
        f"note: the paper fine-tunes at a batch of {PAPER_BATCH}; this run's global batch is {total} "
        f"({args.per_device_train_batch_size} per device × {world} processes × {steps} accumulation): {fix}."
    ]


def _metrics_line(spec: TaskSpec, split: str, metrics: dict, rows: int, limit: int | None) -> str:
    """`validation (408 rows): accuracy …; majority-class baseline: accuracy …` (rows capped by a limit said so)."""
    cap = f", the first {limit} (--max_eval_samples)" if limit is not None and rows == limit else ""
    text = format_metrics(metrics, f"eval_{split}_", baseline_name(spec))
    return f"{split} ({rows} rows{cap}): {text}"


# ------------------------------------------------------------------------------------------------- model


def check_transfer_layers(keep: int, n_layer: int) -> None:
    """`--transfer_layers` must name a number of the model's blocks."""
    if not 0 <= keep <= n_layer:
        raise ValueError(f"--transfer_layers must be in [0, {n_layer}], got {keep}.")


def reinitialize_blocks(model: GPT1PreTrainedModel, keep: int) -> None:
    """Keeps the first `keep` transformer blocks and re-draws the others with GPT-1's init (paper Fig. 2, left)."""
    blocks = model.transformer.h
    check_transfer_layers(keep, len(blocks))
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


def build_model(
    spec: TaskSpec,
    model_args: ModelArguments,
    tokenizer,
    predict_only: bool = False,
    bf16: bool = False,
    engine: str | None = None,
) -> GPT1PreTrainedModel:
    """The head for `spec`, from pre-trained weights (or random ones), with the special tokens and λ set, in the
    dtype `--model_dtype`, `--bf16` and the launch's precision `engine` give (`precision.weights_dtype`).

    Every weight but a new head's comes from the checkpoint. With `predict_only`, the head too, and it must have been
    fine-tuned on this task, with its labels (`--ignore_head_checks` lets a user predict with any head knowingly).
    """
    head = model_head(spec.input_format.head)
    checked = predict_only and not model_args.ignore_head_checks
    overrides: dict[str, Any] = {
        "lm_coef": model_args.lm_coef,
        "clf_pdrop": model_args.clf_pdrop,
        "original_embedding_table": model_args.original_embedding_table,
        **GPT1Config.format_fields(spec.format),
        "clf_label_smoothing": model_args.clf_label_smoothing,
        "dtype": MODEL_DTYPES[weights_dtype(model_args.model_dtype, bf16, engine)],
        **spec.labels.head_config(spec),  # num_labels, id2label, problem_type (the loss): the label kind's
    }
    if not predict_only:
        overrides["finetuned_task"] = spec.name
    if model_args.from_scratch:
        check_model_path(model_args.model_name_or_path)
        overrides.pop("dtype")
        config = load_config(head.model.config_class, model_args.model_name_or_path, **overrides)
        model = head.model(config).to(new_model_dtype(weights_dtype(model_args.model_dtype, bf16, engine)))
    else:
        if checked:
            _check_head(spec, load_config(head.model.config_class, model_args.model_name_or_path), model_args)
        model = load_checkpoint(
            head.model,
            model_args.model_name_or_path,
            new_weights=() if checked else head.new_weights,
            missing_hint=_HEAD_FIX if checked else "re-save the checkpoint from a complete model (save_pretrained)",
            **overrides,
        )
    model.set_attn_implementation(model_args.attn_implementation)
    add_gpt1_special_tokens(tokenizer, model)
    if model_args.transfer_layers is not None:
        reinitialize_blocks(model, model_args.transfer_layers)
    return model


_HEAD_FIX = (
    "fine-tune a model for this task first (drop --do_train false), or pass --ignore_head_checks to predict with it "
    "anyway"
)


def _check_head(spec: TaskSpec, saved: Any, model_args: ModelArguments) -> None:
    """A prediction run's model must have been fine-tuned on this task (or, for AX, on the task that predicts it)."""
    name, task = model_args.model_name_or_path, getattr(saved, "finetuned_task", None)
    expected = spec.predicted_by or spec.name
    if task is None:
        raise ValueError(
            f"--model_name_or_path {name} holds no head fine-tuned for a task (a pre-trained language model, or a "
            f"head never trained by hf_gpt1): its {spec.name} predictions would come from random weights; {_HEAD_FIX}."
        )
    if task != expected:
        raise ValueError(
            f"--model_name_or_path {name} was fine-tuned on {task!r}, not {expected!r}: its head answers that task, "
            f"with that task's labels and input format; use a model fine-tuned on {expected!r}, or pass "
            "--ignore_head_checks to predict with it anyway."
        )
    wanted, trained = spec.labels.head_config(spec).get("problem_type"), getattr(saved, "problem_type", None)
    if wanted and trained not in (None, wanted):  # one label per row read from a label-set head, or the reverse
        raise ValueError(
            f"--model_name_or_path {name}: its head was fine-tuned for {trained}, not {spec.name!r}'s {wanted} "
            f"({spec.labels.described}); use a model fine-tuned on this task as declared, or pass "
            "--ignore_head_checks to predict with it anyway."
        )
    # a head fine-tuned before the task named its classes carries the file's label values (SST-2's '0'/'1')
    if spec.id2label and dict(saved.id2label) not in (spec.id2label, dict(enumerate(spec.label_names))):
        raise ValueError(
            f"--model_name_or_path {name}: its labels {dict(saved.id2label)} are not {spec.name!r}'s "
            f"{spec.id2label}; re-fine-tune it with this version of the task, or pass --ignore_head_checks."
        )


# ------------------------------------------------------------------------------------------------- checks


def _check_arguments(
    spec: TaskSpec, model_args: ModelArguments, data_args: DataArguments, args: GPT1TrainingArguments, recipe: str
) -> None:
    """What the arguments' own checks cannot see: the task and recipe together (every problem, in one error)."""
    problems = []
    if recipe in COMMAND_RECIPES and (problem := spec.inputs.command_problem(recipe, data_args.task)):
        problems.append(problem)  # the input kind names the command that fine-tunes it
    if data_args.segment_cap is not None and not spec.inputs.labels_are_choices:
        problems.append("--segment_cap applies to multiple-choice tasks (Story Cloze, RACE, SWAG) only.")
    if data_args.story_cloze_protocol and spec.name != "story_cloze":
        problems.append(f"--story_cloze_protocol is Story Cloze's; --task {data_args.task!r} has no such protocol.")
    if spec.predicted_by is not None and args.do_train:
        problems.append(
            f"{spec.name!r} has no training data: it is predicted by a model fine-tuned on {spec.predicted_by!r}. "
            f"Run --task {spec.name} --do_train false --model_name_or_path <your {spec.predicted_by} run>."
        )
    if model_args.from_scratch and not args.do_train and not model_args.ignore_head_checks:
        problems.append(
            "--from_scratch --do_train false would predict with random weights; drop one of them (or pass "
            "--ignore_head_checks to do it anyway)."
        )
    if model_args.clf_label_smoothing and not spec.labels.label_smoothing:
        problems.append(f"--clf_label_smoothing applies to classes; {spec.name!r} is {spec.labels.described}.")
    if not (args.do_train or args.do_eval or args.do_predict):
        problems.append("--do_train, --do_eval and --do_predict are all false: there is nothing to do.")
    if problems:
        raise ArgumentProblems(problems)


def _load_splits(
    spec: TaskSpec, data_args: DataArguments, args: GPT1TrainingArguments
) -> tuple[datasets.DatasetDict, dict[str, str], str]:
    """The splits this run uses (train, validation, test as asked), each with the task's columns, their sources, and
    the SHA-256 of every split's rows as read (`rows_digest`, what `hf-gpt1 reproduce` plans on): the run's record of
    the data it was given."""
    flags = flags_of(data_args)
    with flags_for_inputs(flags):
        raw, sources = load_task_splits(
            spec,
            data_dir=data_args.data_dir,
            train_file=data_args.train_file,
            validation_file=data_args.validation_file,
            test_file=data_args.test_file,
            story_cloze_protocol=data_args.story_cloze_protocol,
        )
    digest = rows_digest(raw)
    sources = {split: in_flags(source, flags) for split, source in sources.items()}
    if not args.do_train:  # a prediction run
        raw.pop("train", None)
    elif "train" not in raw:
        raise ValueError(f"No train split for {spec.name!r}: give --train_file or a --data_dir with train.tsv.")
    if not args.do_predict:
        raw = datasets.DatasetDict({s: rows for s, rows in raw.items() if not s.startswith("test")})
    if not args.do_eval:
        raw = datasets.DatasetDict({s: rows for s, rows in raw.items() if s not in _eval_split_names(raw)})
    each_file(raw.items(), lambda split_rows: _check_split(spec, data_args, *split_rows, sources[split_rows[0]]))
    if args.do_train and args.eval_strategy != "no" and not _eval_split_names(raw):
        raise ValueError(
            f"--eval_strategy {args.eval_strategy.value} needs validation rows, and there are none: pass "
            "--validation_file, or --eval_strategy no to train without evaluating."
        )
    if not raw:
        raise ValueError("There is no data to train, evaluate or predict: give --train_file, --data_dir, ...")
    return raw, sources, digest


# Under --torch_compile (and no --pad_to_multiple_of) batches are padded to the first of these that divides the longest
# input: at most n_positions / 64 lengths for GPT-1, each compiled once, instead of a new length nearly every batch.
COMPILED_PADDING = (64, 32, 16, 8)


def compiled_padding(max_length: int) -> int | None:
    """The multiple a compiled run pads its batches to, for inputs of at most `max_length` tokens."""
    return next((multiple for multiple in COMPILED_PADDING if max_length % multiple == 0), None)


def input_lengths(data_args: DataArguments, config: Any, predict_only: bool = False) -> tuple[int, int | None]:
    """The longest input (`--max_seq_length`, at most the model's learned positions) and the per-segment cap: the
    flag's, the Story Cloze protocol's, or (predicting) the one the model was fine-tuned with."""
    n_positions = config.n_positions
    max_length = n_positions if data_args.max_seq_length is None else data_args.max_seq_length
    if max_length > n_positions:
        raise ValueError(
            f"--max_seq_length {max_length} exceeds the model's n_positions={n_positions} (learned positions); "
            f"use at most {n_positions}."
        )
    multiple = data_args.pad_to_multiple_of
    if multiple is not None and max_length % multiple:
        raise ValueError(
            f"--pad_to_multiple_of {multiple} does not divide the longest input, {max_length} tokens "
            f"(--max_seq_length, else the model's n_positions): a padded batch would outgrow it. Use a divisor of "
            f"{max_length} (8 for tensor cores), or set --max_seq_length to a multiple of it."
        )
    segment_cap = data_args.segment_cap
    if segment_cap is None and data_args.story_cloze_protocol:
        segment_cap = story_cloze_segment_cap(max_length)  # the original's rule: n_ctx // 2 - 2 per segment
    if segment_cap is None and predict_only:
        segment_cap = getattr(config, "segment_cap", None)
    return max_length, segment_cap


def _check_split(spec: TaskSpec, data_args: DataArguments, split: str, rows: datasets.Dataset, source: str) -> None:
    """Refuses a split the run cannot read: its columns, then the labels of the rows it reads (a dry run too)."""
    _check_columns(spec, split, rows, source)
    selected = selected_rows(data_args, rows, split)
    if problem := spec.labels.rows_problem(spec, rows, selected):
        raise ValueError(f"{source}: {problem}")
    if not split.startswith("test") and all(unlabelled(value) for value in rows[spec.label_column][:selected]):
        raise _no_gold_label(spec, source)


def _no_gold_label(spec: TaskSpec, source: str) -> ValueError:
    return ValueError(f"{source}: no row has a gold label in {spec.label_column!r}.")


def _check_columns(spec: TaskSpec, split: str, rows: datasets.Dataset, source: str) -> None:
    """Refuses a split without the task's columns while nothing has been loaded yet."""
    needed = [
        *spec.text_columns,
        *spec.choice_columns,
        *((spec.choice_prefix_column,) if spec.choice_prefix_column else ()),
        *((spec.question_column,) if spec.question_column else ()),
    ]
    missing = [name for name in needed if name not in rows.column_names]
    if missing:
        raise ValueError(
            f"{source}: task {spec.name!r} needs column(s) {missing}, but the columns are {rows.column_names}. Rename "
            "them (the Hub's names), or give the official GLUE file."
        )
    # an empty text would be classified from its special tokens alone (the input kind says where that matters)
    if empty := spec.inputs.empty_text_problem(spec, {name: rows[name] for name in spec.text_columns}):
        raise ValueError(
            f"{source}: data row {empty[0] + 1} has an empty {empty[1]!r}; fill in the text or drop the row."
        )
    for name in spec.choice_columns:  # a list of options per row (RACE): the model scores them side by side
        if isinstance(rows.features[name], (datasets.Sequence, datasets.List)):
            counts = pc.list_value_length(rows.data.column(name)).to_numpy(zero_copy_only=False)
            usual = int(np.bincount(counts).argmax()) if len(counts) else 0
            uneven = np.flatnonzero(counts != usual)
            if len(uneven):
                raise ValueError(
                    f"{source}: data row {uneven[0] + 1} has {counts[uneven[0]]} options in {name!r} where the other "
                    f"rows have {usual}; every question needs the same number of options (they are scored side by "
                    "side): complete or drop that row."
                )
    id_column = _id_column(spec, rows.column_names)
    if split.startswith("test") and id_column:
        check_unique_ids(rows, id_column, source)
    if not split.startswith("test") and spec.label_column not in rows.column_names:
        raise ValueError(
            f"{source}: no label column {spec.label_column!r} (columns: {rows.column_names}); {split} rows need gold "
            "labels. Rename the column, or pass unlabelled rows as --test_file."
        )


def _eval_split_names(splits) -> list[str]:
    return [s for s in splits if s != "train" and not s.startswith("test")]


def _id_column(spec: TaskSpec, columns: list[str]) -> str | None:
    """The column whose values identify a test row in its prediction file: the task's own, else the GLUE `idx`."""
    return spec.id_column if spec.id_column in columns else "idx" if "idx" in columns else None


def _evaluation_plan(args: GPT1TrainingArguments, spec: TaskSpec, eval_names: list[str]) -> dict[str, Any]:
    """What the run's data decides of its arguments: a prediction run evaluates and saves nothing during training;
    the original predicts test with the best-validation parameters (Trainer's `load_best_model_at_end`, by the
    task's main metric on the first validation split)."""
    if not args.do_train:
        return {"eval_strategy": "no", "save_strategy": "no", "load_best_model_at_end": False}
    auto = args.load_best_model_at_end is None
    wanted = bool(eval_names) and args.eval_strategy != "no"
    if not auto and args.load_best_model_at_end and not wanted:
        raise ValueError(
            "--load_best_model_at_end needs training with --eval_strategy steps or epoch and a validation split."
        )
    if not (args.load_best_model_at_end or (auto and wanted)):
        return {"load_best_model_at_end": False}
    if args.save_strategy != args.eval_strategy:
        if not auto:
            raise ValueError(
                f"--load_best_model_at_end needs checkpoints where evaluations run: --save_strategy "
                f"{args.save_strategy.value} differs from --eval_strategy {args.eval_strategy.value}."
            )
        return {"load_best_model_at_end": False}  # the user chose other save points: keep the final model
    metric = f"eval_{eval_names[0]}_{spec.main_metric}"
    better = SCORES[spec.main_metric].greater_is_better  # the metric table's direction (an error: lower)
    return {"load_best_model_at_end": True, "metric_for_best_model": metric, "greater_is_better": better}


# ------------------------------------------------------------------------------------------------- data


def selected_rows(data_args: DataArguments, rows, split: str = "validation") -> int:
    """How many of a split's first rows the run takes (`--max_train_samples` / `--max_eval_samples`; a test split:
    every row), before the rows without a gold label are dropped."""
    limit = data_args.max_train_samples if split == "train" else data_args.max_eval_samples
    return rows.num_rows if limit is None or split.startswith("test") else min(limit, rows.num_rows)


def tokenize_split(
    spec: TaskSpec, data_args: DataArguments, split: str, rows, tokenizer, max_length: int, segment_cap: int | None
) -> tuple[datasets.Dataset, Any, int, int]:
    """One split as a run uses it: its first `--max_*_samples` rows tokenized once (`prepare_dataset`, rows without a
    gold label dropped but in test splits). Returns the dataset, its collator, how many rows were dropped and how many
    the collator will truncate."""
    if (selected := selected_rows(data_args, rows, split)) < rows.num_rows:
        rows = rows.select(range(selected))
    dataset, collator = prepare_dataset(
        rows,
        tokenizer,
        spec,
        drop_unlabeled=not split.startswith("test"),
        max_length=max_length,
        pad_to_multiple_of=data_args.pad_to_multiple_of,
        **({"segment_cap": segment_cap} if segment_cap is not None else {}),  # the multiple-choice collator's
    )
    truncated = rows_to_truncate(dataset, spec.format, max_length, segment_cap)
    return dataset, collator, rows.num_rows - dataset.num_rows, truncated


def _tokenize(
    spec: TaskSpec, data_args: DataArguments, split: str, rows, source: str, tokenizer, max_length: int, segment_cap
):
    """[`tokenize_split`], with what was dropped or will be truncated said and a failure named by its source."""
    try:
        dataset, collator, dropped, truncated = tokenize_split(
            spec, data_args, split, rows, tokenizer, max_length, segment_cap
        )
    except (KeyError, TypeError, ValueError) as err:  # name the file: the row/column alone is not enough
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise ValueError(f"{source}: {message}") from err
    if dropped:
        logger.warning(
            "%s: dropped %d of %d rows without a gold label (empty, '-' or -1 in %r).",
            source,
            dropped,
            dataset.num_rows + dropped,
            spec.label_column,
        )
    if truncated:
        logger.warning(
            "%s: %d of %d rows are longer than %d tokens%s and are truncated (special tokens kept%s); "
            "--max_seq_length sets the limit, at most the model's n_positions.",
            source,
            truncated,
            dataset.num_rows,
            max_length,
            "" if segment_cap is None else f" or have a segment over --segment_cap {segment_cap}",
            f"; the end of the {' + '.join(spec.text_columns)} is cut, the {spec.question_column} and every answer "
            "kept whole"
            if spec.question_column
            else "",
        )
    if dataset.num_rows == 0 and not split.startswith("test"):
        raise _no_gold_label(spec, source)
    return dataset, collator


def _subset_accuracies(spec: TaskSpec, split: str, ids: list, preds: np.ndarray, output) -> dict[str, float]:
    """`eval_<split>_accuracy_<subset>` for each of `spec.id_subsets` (the prefix of a row's id) with rows."""
    correct = preds == np.asarray(output.label_ids)
    names = np.array([str(row_id) for row_id in ids])
    found = {}
    for subset in spec.id_subsets:
        rows = np.char.startswith(names, subset)
        if rows.any():
            found[f"eval_{split}_accuracy_{subset}"] = float(correct[rows].mean())
    return found


def _predictions(spec: TaskSpec, outputs: np.ndarray | tuple) -> np.ndarray:
    """Trainer's prediction outputs → one prediction per example: the score (regression) or the class / choice."""
    logits = outputs[0] if isinstance(outputs, tuple) else outputs
    return spec.labels.predictions(logits)


def _metric_fn(spec: TaskSpec):
    metric = load_metric(spec)

    def compute(prediction: EvalPrediction) -> dict[str, float]:
        # L2 alone is the head's `clf_loss`, which GPT1Trainer adds to every evaluation
        logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
        return score_with_baselines(metric, spec, _predictions(spec, logits), prediction.label_ids)

    return compute


def _predict(trainer: GPT1Trainer, spec: TaskSpec, split: str, dataset, raw_rows, results: dict[str, Any]) -> str:
    """Predicts one test split and writes its submission or prediction file; returns the summary line.

    Every row is predicted; the rows with a gold label are also scored (the Hub marks unlabelled test rows with -1,
    every row of GLUE's test splits and some of SNLI's), and the line says how many were left unscored."""
    gold = np.array([label is not None for label in dataset["labels"]] if "labels" in dataset.column_names else [])
    scored = np.flatnonzero(gold)
    prefix = f"eval_{split}"
    output = trainer.predict(dataset.select(scored), metric_key_prefix=prefix) if len(scored) else None
    unscored = np.setdiff1d(np.arange(dataset.num_rows), scored)
    rest = dataset.remove_columns(["labels"]) if "labels" in dataset.column_names else dataset
    parts = [(scored, _predictions(spec, output.predictions))] if len(scored) else []
    if len(unscored):
        unscored_output = trainer.predict(rest.select(unscored), metric_key_prefix=prefix)
        parts.append((unscored, _predictions(spec, unscored_output.predictions)))
    # one prediction per row, of the label kind's shape and type (a class id, a score, a row of 0/1 per class)
    preds = np.empty((dataset.num_rows, *parts[0][1].shape[1:]), dtype=parts[0][1].dtype) if parts else np.empty(0)
    for rows, values in parts:
        preds[rows] = values
    if len(preds) != raw_rows.num_rows:  # never write a submission whose rows do not match the input's
        raise RuntimeError(f"{len(preds)} predictions for the {raw_rows.num_rows} rows of the {split} split.")
    columns = raw_rows.column_names
    id_column = _id_column(spec, columns)
    ids = raw_rows[id_column] if id_column else None
    glue = spec.glue_tsv is not None and split in spec.glue_tsv.submission_files
    if glue:
        path = write_glue_submission(spec, preds.tolist(), trainer.args.output_dir, split, ids=ids)
    else:
        id_header = spec.id_column if spec.id_column in columns else "index"
        path = write_predictions(spec, preds.tolist(), trainer.args.output_dir, split, ids=ids, id_header=id_header)
    results[f"{split}_predictions"] = str(path)
    line = f"{split}: {len(preds)} predictions -> {path}"
    if len(scored):
        if ids is not None and spec.id_subsets:  # RACE-m and RACE-h, from the same predictions
            output.metrics.update(_subset_accuracies(spec, split, [ids[i] for i in scored], preds[scored], output))
        results[split] = output.metrics
        line = f"{_metrics_line(spec, split, output.metrics, len(scored), None)}; {len(preds)} predictions -> {path}"
        if len(unscored):
            results[split][f"eval_{split}_unscored_rows"] = len(unscored)
            line += f" ({len(unscored)} rows without a gold label predicted, not scored)"
    clipped = submission_scores(spec, preds.tolist())[1] if glue and spec.labels.clips_to_range else 0
    if clipped:  # the GLUE server takes STS-B scores in [0, 5]: the file holds the nearest bound
        low, high = spec.label_range
        results[f"{split}_clipped_to_label_range"] = clipped
        line += f"; {clipped} scores outside [{low:g}, {high:g}] written as the nearest bound"
    return line
