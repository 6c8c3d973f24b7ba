"""`hf-gpt1 reproduce report`: the paper's Tables 2–5 beside the runs that reproduce them.

Runs live in one folder, one per (task, condition, seed), each an ordinary `hf-gpt1 glue` / `multiple-choice` run:

    <output_dir>/<task>/<condition>/seed-<seed>/all_results.json

`condition` is a key of `hf_gpt1.tools.paper_results.CONDITIONS` (`full`, `no_pretraining`: `--from_scratch`,
`no_aux_lm`: `--lm_coef 0`). `report` reads every finished run, scores each published number of the chosen tables
from them (in the paper's units), and writes `results.json` and `REPORT.md` beside the runs:

    hf-gpt1 reproduce report --output_dir runs/reproduce [--tables 2,3,4,5]

A row compares like with like only where the paper scored the same split of the same data: the GLUE columns are the
GLUE test server's, so a dev-set number sits beside them without a Δ; QNLI's dataset changed since the paper.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..data.atomic import write_json_atomic, write_text_atomic
from .paper_results import CONDITIONS, PAPER_RESULTS, TABLE5_AVERAGES, TABLE5_TASKS, PaperResult

__all__ = ["collect_runs", "main", "report_rows", "write_report"]

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


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="hf-gpt1 reproduce", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["report"], help="report: the tables from the finished runs")
    parser.add_argument("--output_dir", default="runs/reproduce", help="the runs' folder (<task>/<condition>/seed-N)")
    parser.add_argument("--tables", default="2,3,4,5", help="the paper's tables, comma-separated")
    args = parser.parse_args(argv)
    tables = args.tables.split(",")
    if not set(tables) <= {"2", "3", "4", "5"}:
        parser.error(f"--tables {args.tables}: the paper's result tables are 2, 3, 4 and 5 (e.g. --tables 2,5)")
    if not Path(args.output_dir).is_dir():
        parser.error(f"--output_dir {args.output_dir} is not a folder of runs (<task>/<condition>/seed-N)")
    rows, averages, text = write_report(args.output_dir, [int(table) for table in tables])
    print(text, end="")
    return {"rows": rows, "averages": averages}
