# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf-gpt1 reproduce plan | prefetch | run | report | submit-pack`: the paper's Tables 2–5 from the original
weights, beside the paper ([`hf_gpt1.tools.reproduce`], [`hf_gpt1.tools.reproduce_report`]).

Runs live in one folder, one per (task, condition, seed), each an ordinary `hf-gpt1 glue` / `multiple-choice` run:

    <output_dir>/<task>/<condition>/seed-<seed>/all_results.json

Each action is a sub-command with its own arguments (`hf-gpt1 reproduce <action> --help`):

* `plan` resolves the model and every task's data (its source, rows, fingerprint and how many rows the tokenizer
  makes too long) and lists the runs and their state;
* `prefetch` downloads the model and the Hub datasets into the Hugging Face cache, for a GPU host without the Hub;
* `run` runs what is not done (reusing finished runs, continuing unfinished ones), then reports;
* `report` scores each published number of the chosen tables from the finished runs and writes `results.json` and
  `REPORT.md` beside them;
* `submit-pack` zips the GLUE test predictions for the GLUE server.

    hf-gpt1 reproduce run --tasks rte stsb cola --seeds 0 1 --data_dir glue_data [any recipe argument]
    hf-gpt1 reproduce report --output_dir runs/reproduce [--tables 2 3 4 5] [--glue_test_results server.json]
    hf-gpt1 reproduce run reproduce.yaml --seeds 3    # arguments from a YAML/JSON file, the flags after it override
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import datasets

from ..data.atomic import WRITE_FAILURES, write_json_atomic
from ..data.fingerprint import rows_digest
from ..data.tasks import get_task
from ..tools.paper_results import CONDITIONS, PAPER_RESULTS, TABLE5_TASKS
from ..tools.reproduce import (
    FAILURES_FILE,
    PAPER_BATCH,
    PlannedRun,
    TaskData,
    batch_flags,
    data_lines,
    driver_lock,
    execute,
    plan_runs,
    resolve_data,
    resolve_model,
    run_state,
    run_words,
    task_data,
)
from ..tools.reproduce_report import PLAN_FILE, collect_runs, pack_glue_submission, write_report
from ..training.parse import FINETUNE_ARGUMENTS, unknown_problem
from .command_line import ARGUMENT_FILE_SUFFIXES, parse_recipe_args

__all__ = ["ACTIONS", "MatrixArguments", "ReportArguments", "SubmitPackArguments", "main"]

TABLES = (2, 3, 4, 5)
OUTPUT_DIR_HELP = "The runs' folder (<task>/<condition>/seed-N)."
GLUE_TEST_RESULTS_HELP = (
    "A JSON file of the GLUE server's scores of your submission, by leaderboard column "
    '({"RTE": 56.0, "MRPC": "82.3/75.7", ...}), for the report.'
)


def _repeated(flag: str, values: Sequence[Any]) -> list[str]:
    repeated = sorted({str(v) for v in values if list(values).count(v) > 1})
    return [f"{flag}: {', '.join(repeated)} given twice: each runs once (a seed twice would race)"] if repeated else []


def _check_tables(tables: Sequence[int]) -> list[str]:
    if set(tables) <= set(TABLES):
        return []
    given = " ".join(map(str, tables))
    return [f"--tables {given}: the paper's result tables are 2, 3, 4 and 5 (e.g. --tables 2 5)"]


@dataclass
class MatrixArguments:
    """`plan`, `prefetch` and `run`: the runs of the matrix (tasks × conditions × seeds) and their inputs."""

    output_dir: str = field(
        default="runs/reproduce", metadata={"help": "The runs' folder (<task>/<condition>/seed-N)."}
    )
    tables: list[int] = field(default_factory=lambda: list(TABLES), metadata={"help": "The paper's tables."})
    tasks: list[str] | None = field(default=None, metadata={"help": "These tasks instead of the tables' (names)."})
    conditions: list[str] = field(
        default_factory=lambda: list(CONDITIONS),
        metadata={"help": f"Of {', '.join(CONDITIONS)}; the ablations run on Table 5's tasks only."},
    )
    seeds: list[int] = field(default_factory=lambda: [0], metadata={"help": "The seeds, one run each."})
    model_name_or_path: str = field(default="openai-community/openai-gpt", metadata={"help": "The pre-trained model."})
    model_revision: str | None = field(
        default=None, metadata={"help": "The Hub commit of the model (default: main, resolved once and pinned)."}
    )
    data_dir: str | None = field(default=None, metadata={"help": "A GLUE folder for the GLUE tasks (else the Hub)."})
    story_cloze_dir: str | None = field(
        default=None, metadata={"help": "The folder of the two 2016 Story Cloze CSVs."}
    )
    devices: list[str] = field(
        default_factory=lambda: ["cpu"], metadata={"help": "One run at a time on each: cpu, or GPU indices (0 1 ...)."}
    )
    glue_test_results: str | None = field(default=None, metadata={"help": GLUE_TEST_RESULTS_HELP})

    def __post_init__(self):
        problems = _check_tables(self.tables)
        if unknown := [c for c in self.conditions if c not in CONDITIONS]:
            problems.append(f"--conditions {' '.join(unknown)}: choose among {', '.join(CONDITIONS)}")
        if negative := [seed for seed in self.seeds if seed < 0]:
            problems.append(f"--seeds {negative[0]}: give non-negative integers (e.g. --seeds 0 1 2)")
        if large := [seed for seed in self.seeds if seed >= 2**32]:
            problems.append(f"--seeds {large[0]}: NumPy takes seeds below 2**32 ({2**32}); use smaller ones")
        for flag, values in (
            ("--seeds", self.seeds),
            ("--tasks", self.tasks or []),
            ("--conditions", self.conditions),
        ):
            problems += _repeated(flag, values)
        if files := [name for name in self.tasks or [] if name.endswith(ARGUMENT_FILE_SUFFIXES)]:
            problems.append(
                f"--tasks {files[0]}: reproduce runs the paper's tasks by name; run a task file with hf-gpt1 glue "
                f"--task {files[0]} (or hf-gpt1 multiple-choice)"
            )
        if problems:
            raise ValueError("; ".join(problems) + ".")


@dataclass
class ReportArguments:
    """`report`: the tables from the finished runs."""

    output_dir: str = field(
        default="runs/reproduce", metadata={"help": "The runs' folder (<task>/<condition>/seed-N)."}
    )
    tables: list[int] = field(default_factory=lambda: list(TABLES), metadata={"help": "The paper's tables."})
    glue_test_results: str | None = field(default=None, metadata={"help": GLUE_TEST_RESULTS_HELP})

    def __post_init__(self):
        if problems := _check_tables(self.tables):
            raise ValueError(problems[0] + ".")


@dataclass
class SubmitPackArguments:
    """`submit-pack`: one submission's zip of GLUE test predictions."""

    output_dir: str = field(
        default="runs/reproduce", metadata={"help": "The runs' folder (<task>/<condition>/seed-N)."}
    )
    conditions: list[str] = field(default_factory=lambda: ["full"], metadata={"help": "The one condition to pack."})
    seeds: list[int] | None = field(
        default=None, metadata={"help": "The one seed to pack (default: each task's median run)."}
    )
    partial: bool = field(
        default=False,
        metadata={"help": "Pack the tasks that ran, without the others (the server wants all 11 files)."},
    )

    def __post_init__(self):
        if len(self.seeds or []) > 1 or len(self.conditions) != 1:
            raise ValueError(
                "submit-pack packs one submission: give one --seeds value (or none) and one --conditions."
            )
        if self.conditions[0] not in CONDITIONS:
            raise ValueError(f"--conditions {self.conditions[0]}: choose among {', '.join(CONDITIONS)}.")


ACTIONS: dict[str, tuple[type, str]] = {
    "plan": (MatrixArguments, "the model, the data and the runs with their state"),
    "prefetch": (MatrixArguments, "download the model and the Hub datasets into the Hugging Face cache"),
    "run": (MatrixArguments, "run what is not done, then report"),
    "report": (ReportArguments, "the tables from the finished runs, beside the paper"),
    "submit-pack": (SubmitPackArguments, "the GLUE server's zip of test predictions"),
}
"""Each action (a sub-command): its arguments and its line of help."""

PASSED_ON = "Any other argument goes to every run (e.g. --max_train_samples 48 --num_train_epochs 1: a smoke run)."


def main(argv: Sequence[str] | None = None) -> dict:
    """`hf-gpt1 reproduce <action> [arguments]`: parses the action's arguments, then does it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ACTIONS:
        lines = "\n".join(f"  {name:<12} {text}" for name, (_, text) in ACTIONS.items())
        usage = (
            f"usage: hf-gpt1 reproduce <action> [arguments]   (hf-gpt1 reproduce <action> --help)\n\nactions:\n{lines}"
        )
        if argv and argv[0] in ("-h", "--help"):
            print(usage)
            raise SystemExit(0)
        given = f"unknown action {argv[0]!r}" if argv else "no action given"
        raise ValueError(f"hf-gpt1 reproduce: {given}; the actions are {', '.join(ACTIONS)}.")
    action, words = argv[0], argv[1:]
    arguments = ACTIONS[action][0]
    prog = f"hf-gpt1 reproduce {action}"
    if arguments is MatrixArguments:
        args, passed = parse_recipe_args(
            (arguments,), words, prog=prog, passed_on=PASSED_ON, passed_on_to=FINETUNE_ARGUMENTS
        )
        _check_run_words(action, passed.unknown)
        return _matrix(action, args, run_words(passed.values))
    (args,) = parse_recipe_args((arguments,), words, prog=prog)
    if not Path(args.output_dir).is_dir():
        raise ValueError(f"--output_dir {args.output_dir} is not a folder of runs (<task>/<condition>/seed-N).")
    if action == "report":
        rows, averages = _report(args)
        return {"rows": rows, "averages": averages}
    seed = args.seeds[0] if args.seeds else None
    zipped, record = pack_glue_submission(args.output_dir, args.conditions[0], seed, args.partial)
    for name, entry in record["files"].items():
        clipped = entry.get("clipped_to_label_range")
        note = f"; {clipped} scores outside [0, 5] packed as the nearest bound" if clipped else ""
        print(f"  {name:<12} {entry['run']} (validation {entry['validation_score']}{note})")
    missing = f"; not packed: {', '.join(record['missing'])}" if record["missing"] else ""
    count = len(record["files"])
    print(f"{zipped}: {count} file{'' if count == 1 else 's'} for the GLUE server (gluebenchmark.com){missing}")
    return {"zip": str(zipped), **record}


def _report(args: MatrixArguments | ReportArguments) -> tuple[list, dict]:
    """Prints the report's table; a folder where its files cannot be written (a read-only copy of the runs) still
    gets the table, then one line saying what was not written, and exit status 1."""
    rows, averages, text, unwritten = write_report(args.output_dir, args.tables, args.glue_test_results)
    print(text, end="")
    if unwritten is not None:
        why = WRITE_FAILURES.get(unwritten.errno, unwritten.strerror)
        print(
            f"error: the table above is not saved: results.json and REPORT.md could not be written in "
            f"{args.output_dir} ({why}); copy the folder to a writable place to keep them.",
            file=sys.stderr,
        )
        raise SystemExit(1)
    return rows, averages


def _check_run_words(action: str, unknown: Sequence[str]) -> None:
    """Refuses, before any run, a word that neither reproduce nor the runs' commands take (another action's
    argument, a typo, `-max_steps` with one dash): each run would otherwise fail on it, one after the other."""
    if not unknown:
        return
    for word in unknown:
        flag = word.split("=")[0]
        owners = [name for name, (kind, _) in ACTIONS.items() if flag[2:] in {f.name for f in fields(kind)}]
        if flag.startswith("--") and owners:
            raise ValueError(
                f"{flag} is an argument of hf-gpt1 reproduce {owners[0]}, not of the runs that {action} passes "
                "arguments on to (hf-gpt1 glue / multiple-choice): drop it here, or give it to the action it belongs "
                "to."
            )
    first = next((word for word in unknown if word.startswith("-")), unknown[0])
    why = unknown_problem(FINETUNE_ARGUMENTS, unknown, "command line", "reproduce's arguments")
    if first.startswith("--"):
        why = f"{first.split('=')[0]} is no argument of hf-gpt1 glue / multiple-choice, the runs' commands: {why}"
    raise ValueError(why)


def _matrix(action: str, args: MatrixArguments, extra: list[str]) -> dict:
    """`plan`, `prefetch` and `run`: every input is checked before anything is downloaded or run."""
    problem = _device_problem(args.devices)
    if problem and action == "run":
        raise ValueError(problem)
    names = args.tasks or [row.task for row in PAPER_RESULTS if row.table in args.tables]
    data = [task_data(get_task(name), args.data_dir, args.story_cloze_dir) for name in dict.fromkeys(names)]
    batch_flags(extra)
    model_path, model_label = resolve_model(args.model_name_or_path, args.model_revision)
    print(f"model: {model_label}" + ("" if model_label == model_path else f" ({model_path})"), flush=True)
    splits = {task.spec.name: resolve_data(task) for task in data}  # every dataset, before any run starts
    if action == "prefetch":
        return _prefetched(data, splits, model_label, model_path)
    digests = {name: rows_digest(rows) for name, rows in splits.items()}
    planned = plan_runs(data, args.conditions, args.seeds, args.output_dir, model_path, extra)
    runs = [
        replace(run, data_sha256=digests[run.task], model=model_label)
        for run in planned
        if run.condition == "full" or run.task in TABLE5_TASKS
    ]
    if action == "plan":
        return _print_plan(data, splits, digests, runs, model_path, extra, args.output_dir)
    with driver_lock(args.output_dir):
        plan = {"model": model_label, "data": digests, "runs": [
            {"task": run.task, "condition": run.condition, "seed": run.seed, "argv": list(run.argv)} for run in runs
        ]}  # fmt: skip
        write_json_atomic(Path(args.output_dir) / PLAN_FILE, plan)  # what the report counts runs against
        outcome = execute(runs, args.output_dir, args.devices)
    rows, averages = _report(args)
    not_started = len(runs) - sum(len(entries) for entries in outcome.values())
    print(f"{len(outcome['ran'])} ran, {len(outcome['reused'])} reused, {len(outcome['failed'])} failed, "
          f"{not_started} not started ({Path(args.output_dir) / FAILURES_FILE})")  # fmt: skip
    if outcome["failed"] or not_started:
        print("error: the reproduction is incomplete: the failed runs' errors are above and in failures.json; run "
              "the same command again to continue", file=sys.stderr)  # fmt: skip
        raise SystemExit(1)
    uncounted = [f"{task} {condition} seed {seed}: {why}" for (task, condition), row in collect_runs(args.output_dir)
                 .items() for seed, why in row.excluded.items()]  # fmt: skip
    if uncounted:  # every planned run ran or was reused, yet the report cannot count one
        print(f"error: {len(uncounted)} planned run(s) are not counted by the report: {uncounted[0]}",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(1)
    return {**outcome, "rows": rows, "averages": averages}


def _device_problem(devices: Sequence[str]) -> str | None:
    """What is wrong with `--devices` (each `cpu` or the index of a visible CUDA GPU), or None."""
    import torch

    count = torch.cuda.device_count()
    for device in devices:
        if device != "cpu" and not (device.isdigit() and int(device) < count):
            visible = f"GPUs 0-{count - 1}" if count else "no CUDA GPU"
            return f"--devices {device}: this machine has {visible}; give cpu or GPU indices (e.g. --devices 0,1)"
    return None


def _print_plan(
    data: Sequence[TaskData],
    splits: Mapping[str, datasets.DatasetDict],
    digests: Mapping[str, str],
    runs: Sequence[PlannedRun],
    model_path: str,
    extra: Sequence[str],
    output_dir: str,
) -> dict[str, Any]:
    """Prints the data (rows, rows too long for the model with its tokenizer, fingerprints) and the runs."""
    from transformers import AutoConfig

    from ..tokenization_gpt1 import add_gpt1_special_tokens, load_gpt1_tokenizer

    tokenizer = load_gpt1_tokenizer(model_path)
    add_gpt1_special_tokens(tokenizer)
    config = AutoConfig.from_pretrained(model_path)  # an openai-gpt or a gpt1 config: n_positions
    print("data (rows per split, and how many are longer than --max_seq_length, else the model's context, with the "
          "model's tokenizer and are cut):")  # fmt: skip
    records = {}
    for task in data:
        name = task.spec.name
        line, records[name] = data_lines(task, splits[name], digests[name], tokenizer, config, extra)
        print(line, flush=True)
    states = [run_state(run) for run in runs]
    tasks = len({run.task for run in runs})
    print(f"{len(runs)} runs ({tasks} tasks × conditions × seeds) in {output_dir}, at a batch of {PAPER_BATCH} "
          "(one process each): " + ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states)))  # fmt: skip
    for run, state in zip(runs, states):
        print(f"  {state:<8} hf-gpt1 {run.recipe} {' '.join(run.argv)}")
    return {"runs": [str(run.folder) for run in runs], "states": states, "data": records, "model": model_path}


def _prefetched(
    data: Sequence[TaskData], splits: Mapping[str, datasets.DatasetDict], model_label: str, model_path: str
) -> dict[str, Any]:
    """Says what `prefetch` put in the cache (the model was downloaded by `resolve_model`, the datasets by
    `resolve_data`) and how a host without the Hub uses it."""
    from huggingface_hub import constants

    for task in data:
        rows = ", ".join(f"{split} {part.num_rows:,}" for split, part in splits[task.spec.name].items())
        print(f"  {task.spec.name:<12} {task.where}: {rows}")
    hub = [task.spec.name for task in data if not task.source]
    print(
        f"prefetched {model_label} and {len(hub)} Hub dataset(s) into {constants.HF_HUB_CACHE} and "
        f"{datasets.config.HF_DATASETS_CACHE}; on a host without the Hub, set HF_HOME to a copy of "
        f"{constants.HF_HOME}, HF_HUB_OFFLINE=1 and HF_DATASETS_OFFLINE=1, and run the same command with run "
        f"(--model_revision {Path(model_path).name} pins this commit)"
        if model_label != model_path
        else f"prefetched {len(hub)} Hub dataset(s) into {datasets.config.HF_DATASETS_CACHE}"
    )
    counts = {name: {split: part.num_rows for split, part in rows.items()} for name, rows in splits.items()}
    return {"model": model_path, "datasets": counts}


if __name__ == "__main__":  # python -m: the same as the hf-gpt1 command
    from hf_gpt1.commands import module_main

    module_main(__spec__.name)
