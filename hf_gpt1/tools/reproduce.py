"""`hf-gpt1 reproduce plan | run | report`: the paper's Tables 2–5 from the original weights, beside the paper.

Runs live in one folder, one per (task, condition, seed), each an ordinary `hf-gpt1 glue` / `multiple-choice` run:

    <output_dir>/<task>/<condition>/seed-<seed>/all_results.json

`condition` is a key of `hf_gpt1.tools.paper_results.CONDITIONS` (`full`, `no_pretraining`: `--from_scratch`,
`no_aux_lm`: `--lm_coef 0`, the last two on Table 5's tasks). `plan` lists the runs and their state; `run` runs what is
not done (reusing finished runs, continuing unfinished ones) and reports; `report` reads every finished run, scores
each published number of the chosen tables from them (in the paper's units), and writes `results.json` and
`REPORT.md` beside the runs:

    hf-gpt1 reproduce run --tasks rte,stsb,cola --seeds 0,1 --data_dir glue_data [any recipe argument]
    hf-gpt1 reproduce report --output_dir runs/reproduce [--tables 2,3,4,5]

A row compares like with like only where the paper scored the same split of the same data: the GLUE columns are the
GLUE test server's, so a dev-set number sits beside them without a Δ; QNLI's dataset changed since the paper.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.atomic import write_json_atomic, write_text_atomic
from ..data.files import glue_file
from ..data.fingerprint import file_digest
from ..data.tasks import get_task
from ..training.output_dir import RUN_FILE
from .paper_results import CONDITIONS, PAPER_RESULTS, TABLE5_AVERAGES, TABLE5_TASKS, PaperResult

__all__ = ["PlannedRun", "collect_runs", "execute", "main", "plan_runs", "report_rows", "run_state", "write_report"]

RESULTS_FILE, REPORT_FILE = "results.json", "REPORT.md"
# Datasets that are not the paper's any more: the Hub's QNLI is GLUE's revised version (2019).
DATASET_CHANGED = {"qnli": "dataset changed since the paper (GLUE's revised QNLI)"}


def collect_runs(output_dir: str | Path) -> dict[tuple[str, str], dict[int, dict[str, Any]]]:
    """`{(task, condition): {seed: all_results}}` for every finished run under `output_dir`."""
    runs: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for path in sorted(Path(output_dir).glob("*/*/seed-*/all_results.json")):
        seed_dir = path.parent
        task, condition = seed_dir.parent.parent.name, seed_dir.parent.name
        if condition not in CONDITIONS or not seed_dir.name.removeprefix("seed-").isdigit():
            continue
        runs.setdefault((task, condition), {})[int(seed_dir.name.removeprefix("seed-"))] = json.loads(path.read_text())
    return runs


def our_score(row: PaperResult, results: Mapping[str, Any]) -> tuple[float, str] | None:
    """One run's number for the paper's `row`, in the paper's units (× 100), and the split it was measured on: the
    labelled test split where the run scored one (SNLI, SciTail, RACE, Story Cloze), else the validation split(s)
    (GLUE's dev sets; MNLI's matched and mismatched). None when the run has no such score."""
    metric = row.metric
    if row.task == "mnli":
        parts = {s: _metric(results, f"validation_{s}", "accuracy") for s in ("matched", "mismatched")}
        if metric == "accuracy_mean":
            return (100 * statistics.mean(parts.values()), "validation") if None not in parts.values() else None
        value = parts.get(metric.removeprefix("accuracy_"))
        return (100 * value, f"validation_{metric.removeprefix('accuracy_')}") if value is not None else None
    for split in ("test", "validation"):
        value = _metric(results, split, metric)
        if value is not None:
            return 100 * value, split
    return None


def _metric(results: Mapping[str, Any], split: str, metric: str) -> float | None:
    value = results.get(split, {}).get(f"eval_{split}_{metric}") if isinstance(results.get(split), dict) else None
    return float(value) if isinstance(value, int | float) else None


def report_rows(
    runs: Mapping[tuple[str, str], Mapping[int, Mapping[str, Any]]], tables: Iterable[int] = (2, 3, 4, 5)
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The report: one row per published number of `tables` (`table`, `task`, `column`, `condition`, `metric`,
    `split`, `paper`, `paper_split`, `source`, `seeds`, `median`, `like_for_like`, `delta`, `note`), and Table 5's
    average per condition (`ours` over the medians of its eight tasks when all are there, `paper`)."""
    rows = []
    for published in (r for r in PAPER_RESULTS if r.table in set(tables)):
        seeds: dict[str, float] = {}  # by seed, as JSON keys
        split = None
        for seed, results in sorted(runs.get((published.task, published.condition), {}).items()):
            scored = our_score(published, results)
            if scored is not None:
                seeds[str(seed)], split = round(scored[0], 2), scored[1]
        same_split = split is not None and split.startswith("test") and published.split == "test"
        note = DATASET_CHANGED.get(published.task) or (
            "the paper's column is the GLUE test server; ours is the dev set"
            if published.split == "glue_test_server"
            else ""
        )
        like = same_split and published.task not in DATASET_CHANGED
        median = round(statistics.median(seeds.values()), 2) if seeds else None
        rows.append(
            {
                "table": published.table,
                "task": published.task,
                "column": published.column,
                "condition": published.condition,
                "metric": published.metric,
                "split": split,
                "paper": published.value,
                "paper_split": published.split,
                "source": published.source,
                "seeds": seeds,
                "median": median,
                "like_for_like": like,
                "delta": round(median - published.value, 2) if like and median is not None else None,
                "note": note,
            }
        )
    averages = {}
    if 5 in set(tables):
        for condition, paper in TABLE5_AVERAGES.items():
            medians = {r["task"]: r["median"] for r in rows if r["table"] == 5 and r["condition"] == condition}
            complete = all(medians.get(task) is not None for task in TABLE5_TASKS)
            averages[condition] = {
                "paper": paper,
                "ours": round(statistics.mean(medians[t] for t in TABLE5_TASKS), 2) if complete else None,
                "tasks": len([t for t in TABLE5_TASKS if medians.get(t) is not None]),
            }
    return rows, averages


def _markdown(rows: Sequence[Mapping[str, Any]], averages: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [
        "# GPT-1, Tables 2–5: the paper beside this reproduction",
        "",
        "Paper: Radford et al. 2018, the PDF's tables (source column). Ours: the median over seeds, in the paper's "
        "units. Δ only where the split and the dataset are the paper's.",
        "",
        "| table | column | condition | paper | ours (median) | seeds | split | Δ | note |",
        "|---|---|---|---:|---:|---|---|---:|---|",
    ]
    for r in rows:
        seeds = " ".join(f"{v:.1f}" for v in r["seeds"].values()) or "—"
        ours = "—" if r["median"] is None else f"{r['median']:.1f}"
        delta = "" if r["delta"] is None else f"{r['delta']:+.1f}"
        lines.append(
            f"| {r['table']} | {r['column']} | {r['condition']} | {r['paper']:.1f} | {ours} | {seeds} | "
            f"{r['split'] or '—'} | {delta} | {r['note']} |"
        )
    if averages:
        lines += ["", "Table 5, Avg. Score (8 tasks; MNLI the mean of matched and mismatched):", ""]
        lines += ["| condition | paper | ours | tasks |", "|---|---:|---:|---:|"]
        for condition, a in averages.items():
            ours = "—" if a["ours"] is None else f"{a['ours']:.1f}"
            lines.append(f"| {condition} | {a['paper']:.1f} | {ours} | {a['tasks']} of 8 |")
    return "\n".join(lines) + "\n"


def write_report(output_dir: str | Path, tables: Iterable[int] = (2, 3, 4, 5)) -> tuple[list, dict, str]:
    """Reads the runs under `output_dir`, writes `results.json` and `REPORT.md` there (each whole or not at all), and
    returns the rows, the averages and the Markdown table."""
    rows, averages = report_rows(collect_runs(output_dir), tables)
    text = _markdown(rows, averages)
    write_json_atomic(Path(output_dir) / RESULTS_FILE, {"rows": rows, "averages": averages})
    write_text_atomic(Path(output_dir) / REPORT_FILE, text)
    return rows, averages, text


# ------------------------------------------------------------------------------------------------ running the matrix

ARGV_SUFFIX = ".argv.json"  # beside each run folder (the recipe wants its folder to itself): the arguments it got
FAILURES_FILE = "failures.json"
PAPER_BATCH = 32  # the fine-tuning batch of the paper (section 4.1), per run: one process each
STORY_CLOZE_FILES = ("cloze_test_val__spring2016.csv", "cloze_test_test__spring2016.csv")
CONDITION_FLAGS = {"full": [], "no_pretraining": ["--from_scratch", "true"], "no_aux_lm": ["--lm_coef", "0"]}


@dataclass(frozen=True)
class PlannedRun:
    """One fine-tuning run of the matrix: `hf-gpt1 <recipe> <argv>` writing `folder`."""

    task: str
    condition: str
    seed: int
    recipe: str
    folder: Path
    argv: tuple[str, ...]


def plan_runs(
    tasks: Sequence[str],
    conditions: Sequence[str],
    seeds: Sequence[int],
    output_dir: str | Path,
    model_name_or_path: str,
    data_dir: str | None = None,
    story_cloze_dir: str | None = None,
    extra: Sequence[str] = (),
) -> list[PlannedRun]:
    """The run matrix, task by task: each (task, condition, seed) with its recipe and arguments. Data comes from
    `data_dir` (a GLUE folder) for the GLUE tasks when given, from `story_cloze_dir` for Story Cloze (always under
    the original protocol), else from the task's Hub copy; `extra` arguments go to every run."""
    runs = []
    for name in tasks:
        spec = get_task(name)
        if spec.name == "story_cloze":
            if story_cloze_dir is None:
                raise ValueError(
                    "story_cloze has no Hub copy with its columns: pass --story_cloze_dir, the folder of the two 2016 "
                    f"CSVs ({' and '.join(STORY_CLOZE_FILES)}, from the ROCStories request form)."
                )
            train, test = (str(Path(story_cloze_dir) / name) for name in STORY_CLOZE_FILES)
            absent = [path for path in (train, test) if not Path(path).is_file()]
            if absent:
                raise ValueError(
                    f"--story_cloze_dir {story_cloze_dir} has no {Path(absent[0]).name}: put the two 2016 CSVs there "
                    "under their original names (the ROCStories request form sends them)."
                )
            data = ["--story_cloze_protocol", "true", "--train_file", train, "--test_file", test]
        elif data_dir is not None and spec.glue_tsv is not None:
            layout = spec.glue_tsv  # the labelled files a run trains and evaluates on must be there
            labelled = [split for split in layout.files if not split.startswith("test")]
            missing = [split for split in labelled if not glue_file(data_dir, layout, split).is_file()]
            if missing:
                raise ValueError(
                    f"--data_dir {data_dir} has no {layout.folder}/{layout.files[missing[0]]}: add the "
                    f"task's GLUE files, or drop {spec.name} from --tasks / --tables (without --data_dir, the GLUE "
                    f"tasks are read from the Hub, {spec.hub[0]})."
                )
            data = ["--data_dir", data_dir]
        else:
            data = []
        recipe = "multiple-choice" if spec.format == "multiple_choice" else "glue"
        batch = [] if "--per_device_train_batch_size" in extra else ["--per_device_train_batch_size", str(PAPER_BATCH)]
        for condition in conditions:
            for seed in seeds:
                folder = Path(output_dir) / spec.name / condition / f"seed-{seed}"
                argv = ["--task", spec.name, "--model_name_or_path", model_name_or_path, "--seed", str(seed),
                        "--output_dir", str(folder), *data, *CONDITION_FLAGS[condition], *batch, *extra]  # fmt: skip
                runs.append(PlannedRun(spec.name, condition, seed, recipe, folder, tuple(argv)))
    return runs


def run_state(run: PlannedRun) -> str:
    """`done` (finished with these arguments on unchanged inputs: reused), `partial` (started with these arguments:
    continued with --resume), `new`, or `other` (the folder holds a run with other arguments or changed inputs)."""
    recorded = run.folder.parent / f"{run.folder.name}{ARGV_SUFFIX}"
    if not recorded.is_file():
        return "other" if run.folder.is_dir() and any(run.folder.iterdir()) else "new"
    if tuple(json.loads(recorded.read_text())) != run.argv:
        return "other"
    if not (run.folder / "all_results.json").is_file():
        return "partial"
    identity = json.loads((run.folder / RUN_FILE).read_text())
    for files in identity.get("inputs", {}).values():
        for path, digest in files.items():
            if not Path(path).is_file() or file_digest(path) != digest:
                return "other"
    return "done"


def execute(runs: Sequence[PlannedRun], output_dir: str | Path, devices: Sequence[str] = ("cpu",)) -> dict[str, list]:
    """Runs what is not done, each in its own process, one at a time per device (`"cpu"` or a GPU index, given to
    the run as `CUDA_VISIBLE_DEVICES`; a device named twice runs two at once); returns `{"reused", "ran", "failed"}`.

    A failed run is recorded (`failures.json`: its folder and last error line) and the queue goes on; Ctrl-C (or
    SIGTERM, passed on) stops the current runs (each saves a checkpoint, as any run does) and the queue, and the same
    command continues where it stopped."""
    outcome: dict[str, list] = {"reused": [], "ran": [], "failed": []}
    pending: queue.Queue = queue.Queue()
    for number, run in enumerate(runs, start=1):
        pending.put((f"[{number}/{len(runs)}] {run.task} {run.condition} seed {run.seed}", run))
    stopping, lock, running = threading.Event(), threading.Lock(), {}

    def work(device: str, finished: threading.Event) -> None:
        env = {**os.environ, **({} if device == "cpu" else {"CUDA_VISIBLE_DEVICES": device})}
        try:
            while not stopping.is_set():
                try:
                    where, run = pending.get_nowait()
                except queue.Empty:
                    return
                key, entry = _run_one(run, where, env, running, stopping)
                if key is not None:
                    with lock:
                        outcome[key].append(entry)
        finally:
            finished.set()

    # Waited for by polling events: a Ctrl-C that interrupts Thread.join can leave the thread looking finished.
    finished = [threading.Event() for _ in devices]
    for device, event in zip(devices, finished):
        threading.Thread(target=work, args=(device, event), daemon=True).start()
    try:
        while not all(event.is_set() for event in finished):
            time.sleep(0.2)
    except BaseException as stop:  # Ctrl-C reached the runs too (the terminal's group); pass SIGTERM on
        stopping.set()
        if not isinstance(stop, KeyboardInterrupt):
            for process in list(running.values()):
                process.terminate()
        while not all(event.is_set() for event in finished):  # each run checkpoints and stops
            time.sleep(0.2)
        _record_failures(output_dir, outcome["failed"])
        print("stopped; the same command continues where the queue stopped", flush=True)
        raise
    _record_failures(output_dir, outcome["failed"])
    return outcome


def _run_one(
    run: PlannedRun, where: str, env: dict, running: dict, stopping: threading.Event
) -> tuple[str | None, Any]:
    """One run of the queue: `(outcome key, entry)`, or `(None, None)` for a run stopped by Ctrl-C or SIGTERM."""
    state = run_state(run)
    if state == "done":
        print(f"{where}: reused (finished with these arguments and inputs)", flush=True)
        return "reused", str(run.folder)
    if state == "other":
        error = (f"{run.folder} holds a run with other arguments or changed inputs: move it away, or give another "
                 "--output_dir")  # fmt: skip
        print(f"{where}: not run: {error}", flush=True)
        return "failed", {"folder": str(run.folder), "error": error}
    print(f"{where}: {'continuing' if state == 'partial' else 'running'} -> {run.folder}", flush=True)
    write_json_atomic(run.folder.parent / f"{run.folder.name}{ARGV_SUFFIX}", list(run.argv))
    argv = [*run.argv, "--resume", "true"] if state == "partial" else list(run.argv)
    log = run.folder.parent / f"{run.folder.name}.log"
    with open(log, "w", encoding="utf-8") as console:
        process = subprocess.Popen(
            [sys.executable, "-m", "hf_gpt1.commands", run.recipe, *argv],
            stdout=console,
            stderr=subprocess.STDOUT,
            env=env,
        )
        running[where] = process
        returncode = process.wait()
        running.pop(where)
    if stopping.is_set():
        print(f"{where}: stopped", flush=True)
        return None, None
    if returncode == 0:
        return "ran", str(run.folder)
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if line.startswith("error:")), lines[-1] if lines else "")
    print(f"{where}: failed: {error} (the queue goes on; its console: {log})", flush=True)
    return "failed", {"folder": str(run.folder), "error": error, "log": str(log)}


def _record_failures(output_dir: str | Path, failed: list) -> None:
    write_json_atomic(Path(output_dir) / FAILURES_FILE, failed)


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="hf-gpt1 reproduce",
        description=__doc__.split("\n\n")[0],
        epilog="Any other argument goes to every run (e.g. --max_train_samples 48 --num_train_epochs 1: a smoke run).",
    )
    parser.add_argument("action", choices=["plan", "run", "report"], help="plan: the runs and their state; run: "
                        "run what is not done, then report; report: the tables from the finished runs")  # fmt: skip
    parser.add_argument("--output_dir", default="runs/reproduce", help="the runs' folder (<task>/<condition>/seed-N)")
    parser.add_argument("--tables", default="2,3,4,5", help="the paper's tables, comma-separated")
    parser.add_argument("--tasks", help="these tasks instead of the tables' (package task names, comma-separated)")
    parser.add_argument("--conditions", default=",".join(CONDITIONS), help=f"of {', '.join(CONDITIONS)}; the "
                        "ablations run on Table 5's tasks only")  # fmt: skip
    parser.add_argument("--seeds", default="0", help="comma-separated seeds, one run each")
    parser.add_argument("--model_name_or_path", default="openai-community/openai-gpt", help="the pre-trained model")
    parser.add_argument("--data_dir", help="a GLUE folder for the GLUE tasks (else their Hub copies)")
    parser.add_argument("--story_cloze_dir", help="the folder of the two 2016 Story Cloze CSVs")
    parser.add_argument("--devices", default="cpu", help="one run at a time on each: cpu, or GPU indices (0,1,...)")
    args, extra = parser.parse_known_args(argv)
    tables = args.tables.split(",")
    if not set(tables) <= {"2", "3", "4", "5"}:
        parser.error(f"--tables {args.tables}: the paper's result tables are 2, 3, 4 and 5 (e.g. --tables 2,5)")
    tables = [int(table) for table in tables]
    conditions = args.conditions.split(",")
    if not set(conditions) <= set(CONDITIONS):
        parser.error(f"--conditions {args.conditions}: choose among {', '.join(CONDITIONS)}")
    if not all(seed.isdigit() for seed in args.seeds.split(",")):
        parser.error(f"--seeds {args.seeds}: give non-negative integers, comma-separated (e.g. --seeds 0,1,2)")
    if args.action == "report":
        if not Path(args.output_dir).is_dir():
            parser.error(f"--output_dir {args.output_dir} is not a folder of runs (<task>/<condition>/seed-N)")
        rows, averages, text = write_report(args.output_dir, tables)
        print(text, end="")
        return {"rows": rows, "averages": averages}
    if args.tasks:
        tasks = [get_task(name).name for name in args.tasks.split(",")]
    else:
        tasks = list(dict.fromkeys(row.task for row in PAPER_RESULTS if row.table in tables))
    planned = plan_runs(
        tasks, conditions, [int(s) for s in args.seeds.split(",")], args.output_dir, args.model_name_or_path,
        args.data_dir, args.story_cloze_dir, extra,
    )  # fmt: skip
    runs = [run for run in planned if run.condition == "full" or run.task in TABLE5_TASKS]
    if args.action == "plan":
        states = [run_state(run) for run in runs]
        print(f"{len(runs)} runs ({len(tasks)} tasks × conditions × {len(args.seeds.split(','))} seed(s)) in "
              f"{args.output_dir}: " + ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states)))  # fmt: skip
        for run, state in zip(runs, states):
            print(f"  {state:<8} hf-gpt1 {run.recipe} {' '.join(run.argv)}")
        return {"runs": [str(run.folder) for run in runs], "states": states}
    outcome = execute(runs, args.output_dir, args.devices.split(","))
    rows, averages, text = write_report(args.output_dir, tables)
    print(text, end="")
    print(f"{len(outcome['ran'])} ran, {len(outcome['reused'])} reused, {len(outcome['failed'])} failed "
          f"({Path(args.output_dir) / FAILURES_FILE})")  # fmt: skip
    return {**outcome, "rows": rows, "averages": averages}
