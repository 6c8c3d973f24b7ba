# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 zero-shot`: score a language model with the paper's zero-shot heuristics
([`hf_gpt1.tools.zero_shot`]); prints the metrics beside the baselines and writes them as JSON to `--output_file`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import datasets

from ..data.atomic import write_json_atomic
from ..data.files import load_glue_tsv, load_hub_copy, read_data_file
from ..data.metrics import baseline_name
from ..data.tasks import get_task
from ..modeling_gpt1 import GPT1LMHeadModel
from ..tokenization_gpt1 import load_gpt1_tokenizer
from ..tools.zero_shot import ZERO_SHOT_TASKS, evaluate_zero_shot
from ..training.checkpoints import load_checkpoint, model_hub_access
from ..training.flags import flags_for_inputs, flags_of
from ..training.results import format_metrics
from .command_line import parse_recipe_args


@dataclass
class ZeroShotArguments:
    model_name_or_path: str = field(metadata={"help": "GPT-1 LM checkpoint: folder or Hub id (openai-gpt works)."})
    task: str = field(metadata={"help": f"One of {', '.join(ZERO_SHOT_TASKS)}."})
    data_dir: str | None = field(default=None, metadata={"help": "GLUE TSV folder (CoLA, SST-2, WNLI)."})
    validation_file: str | None = field(default=None, metadata={"help": "CSV/TSV/JSON(L) file with labelled rows."})
    split: str = field(default="validation", metadata={"help": "Split of --data_dir or of the Hub copy to score."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Score the first N rows only."})
    calibration_split: str | None = field(
        default=None, metadata={"help": "CoLA: fit the threshold on this labelled split (default: eval median)."}
    )
    max_calibration_samples: int | None = field(default=None, metadata={"help": "First N calibration rows."})
    threshold: float | None = field(default=None, metadata={"help": "CoLA: a fixed threshold instead."})
    batch_size: int = field(default=16, metadata={"help": "Sequences per forward pass."})
    output_file: str | None = field(default=None, metadata={"help": "Write the metrics here as JSON."})


def _load(args: ZeroShotArguments, split: str, limit: int | None) -> datasets.Dataset:
    spec = get_task(args.task)
    rows = None
    with flags_for_inputs(flags_of(args)):  # the data layer names paths and arguments; the command line, flags
        if args.validation_file and split == args.split:
            rows = read_data_file(args.validation_file, task=spec, split="validation")
        elif args.data_dir:
            rows = load_glue_tsv(args.data_dir, spec, split)
        elif spec.hub is not None:
            rows = load_hub_copy(spec, split)
    if rows is None:
        raise ValueError(f"{spec.name!r} has no Hub copy: pass --data_dir or --validation_file.")
    return rows.select(range(min(limit, len(rows)))) if limit is not None else rows


def main(argv: list[str] | None = None) -> dict:
    """`hf-gpt1 zero-shot`: scores a checkpoint; prints the metrics beside the baselines."""
    (args,) = parse_recipe_args((ZeroShotArguments,), argv, prog="hf-gpt1 zero-shot")
    spec = get_task(args.task)
    if spec.name not in ZERO_SHOT_TASKS:
        raise ValueError(f"--task {args.task!r} has no zero-shot heuristic; choose one of {list(ZERO_SHOT_TASKS)}.")
    if args.batch_size < 1:
        raise ValueError(f"--batch_size {args.batch_size} must be a positive integer.")
    for flag in ("max_eval_samples", "max_calibration_samples"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise ValueError(f"--{flag} {getattr(args, flag)} must be >= 1 (leave it out to use every row).")
    if args.output_file:  # checked now, not after every row has been scored
        folder = Path(args.output_file).absolute().parent
        if not folder.is_dir():
            raise FileNotFoundError(
                f"--output_file {args.output_file}: the folder {folder} does not exist; create it."
            )
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(f"--output_file {args.output_file}: {folder} is not writable; choose another file.")
    with model_hub_access(args):
        model = load_checkpoint(GPT1LMHeadModel, args.model_name_or_path)
        tokenizer = load_gpt1_tokenizer(args.model_name_or_path)
    dataset = _load(args, args.split, args.max_eval_samples)
    calibration = None
    if args.calibration_split is not None:
        calibration = _load(args, args.calibration_split, args.max_calibration_samples)
    results = evaluate_zero_shot(
        model, tokenizer, spec, dataset, batch_size=args.batch_size, threshold=args.threshold, calibration=calibration
    )
    results["model"] = args.model_name_or_path
    scores = format_metrics({k: v for k, v in results.items() if k != "threshold"}, "", baseline_name(spec))
    print(f"zero-shot {spec.name} ({results['num_examples']} rows): {scores}")
    for line in results.get("warnings", []):
        print(f"warning: {line}")
    if args.output_file:
        write_json_atomic(args.output_file, results)
    return results


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
