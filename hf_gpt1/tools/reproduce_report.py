# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""What `hf-gpt1 reproduce` reads back from its runs: the report beside the paper's Tables 2–5 (`results.json`,
`REPORT.md`) and the GLUE server's submission zip (`submit-pack`).

A row compares like with like only where the paper scored the same split of the same data: the GLUE columns are the
GLUE test server's, so a dev-set number sits beside them without a Δ until the server's own scores are given
(`--glue_test_results`); QNLI's dataset changed since the paper, so it never gets a Δ.
"""

from __future__ import annotations

import io
import json
import os
import re
import statistics
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.atomic import WRITE_FAILURES, write_bytes_atomic, write_json_atomic, write_text_atomic
from ..data.fingerprint import changed_input, comparable_paths
from ..data.strict_files import StrictJSONError, read_json
from ..data.submissions import submission_scores
from ..data.tasks import get_task
from ..training.parse import FINETUNE_ARGUMENTS, defaults, given_arguments
from ..training.run_folder import RunFolder
from .paper_results import CONDITIONS, PAPER_RESULTS, TABLE5_AVERAGES, TABLE5_TASKS, PaperResult

__all__ = [
    "GLUE_SERVER_COLUMNS",
    "RowRuns",
    "changed_input",
    "collect_runs",
    "read_plan",
    "run_evidence_problem",
    "smoke_flags",
    "our_score",
    "pack_glue_submission",
    "read_glue_test_results",
    "report_rows",
    "write_report",
]

RESULTS_FILE, REPORT_FILE = "results.json", "REPORT.md"
PLAN_FILE = "plan.json"  # the last `reproduce run`'s plan: the model, the data digests, each run's arguments
RECORD_SUFFIX = ".argv.json"  # beside each run folder (the recipe wants its folder to itself): what it was given
PAPER_EPOCHS = 3  # the paper's fine-tuning epochs: fewer (or a cap on rows or steps) is a smoke budget
SUBMISSION_ZIP, SUBMISSION_RECORD = "glue_submission.zip", "glue_submission.json"
# Datasets that are not the paper's any more: the Hub's QNLI is GLUE's revised version (2019).
DATASET_CHANGED = {"qnli": "dataset changed since the paper (GLUE's revised QNLI)"}
GLUE_DEV_NOTE = "paper: the GLUE test server; ours: the dev set (--glue_test_results adds the server's)"
# The GLUE leaderboard's columns (gluebenchmark.com) and the paper's (task, metric) each one's first number is: MRPC
# and QQP show "F1/accuracy", STS-B "Pearson/Spearman"; WNLI and AX are not in the paper's tables.
GLUE_SERVER_COLUMNS = {
    "CoLA": ("cola", "matthews_correlation"),
    "SST-2": ("sst2", "accuracy"),
    "MRPC": ("mrpc", "f1"),
    "STS-B": ("stsb", "pearson"),
    "QQP": ("qqp", "f1"),
    "MNLI-m": ("mnli", "accuracy_matched"),
    "MNLI-mm": ("mnli", "accuracy_mismatched"),
    "QNLI": ("qnli", "accuracy"),
    "RTE": ("rte", "accuracy"),
    "WNLI": ("wnli", "accuracy"),
    "AX": ("ax", "matthews_correlation"),
}
# The files the GLUE server wants in one zip, each written by a run of the task that predicts it.
GLUE_SUBMISSION_FILES = {
    "CoLA.tsv": "cola", "SST-2.tsv": "sst2", "MRPC.tsv": "mrpc", "STS-B.tsv": "stsb", "QQP.tsv": "qqp",
    "MNLI-m.tsv": "mnli", "MNLI-mm.tsv": "mnli", "AX.tsv": "mnli", "QNLI.tsv": "qnli", "RTE.tsv": "rte",
    "WNLI.tsv": "wnli",
}  # fmt: skip


@dataclass
class RowRuns:
    """The runs of one (task, condition) as the plan asked for them: the planned seeds, the counted runs' results,
    why each other planned seed is not counted, and the flags that make the plan a smoke run (a reduced budget)."""

    planned: list[int] = field(default_factory=list)
    counted: dict[int, dict[str, Any]] = field(default_factory=dict)
    excluded: dict[int, str] = field(default_factory=dict)
    smoke: list[str] = field(default_factory=list)


def read_plan(output_dir: str | Path) -> dict[str, Any]:
    """The plan the last `reproduce run` wrote (`plan.json`): the model it pinned, the data digests, every run's
    arguments.

    Raises:
        `ValueError`: There is none: a table counts only runs of a plan.
    """
    path = Path(output_dir) / PLAN_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(
            f"{path}: no readable plan ({err.__class__.__name__}): the table counts only the runs of a plan; run "
            "hf-gpt1 reproduce run with the reproduction's arguments (it writes the plan and reuses the finished runs "
            "that match it)."
        ) from None


def collect_runs(output_dir: str | Path) -> dict[tuple[str, str], RowRuns]:
    """Every planned run under `output_dir`, counted when its evidence matches the plan ([`run_evidence_problem`])."""
    plan = read_plan(output_dir)
    rows: dict[tuple[str, str], RowRuns] = {}
    for planned in plan["runs"]:
        row = rows.setdefault((planned["task"], planned["condition"]), RowRuns())
        seed = planned["seed"]
        row.planned.append(seed)
        row.smoke = smoke_flags(planned["argv"])
        folder = Path(output_dir) / planned["task"] / planned["condition"] / f"seed-{seed}"
        problem = run_evidence_problem(folder, planned["argv"], plan["model"], plan["data"].get(planned["task"]))
        if problem:
            row.excluded[seed] = problem
        else:
            row.counted[seed] = RunFolder(folder).results()
    return rows


def run_values(argv: Sequence[str]) -> dict[str, Any]:
    """A run's arguments as its command parses them ([`given_arguments`] with the runs' parser: every spelling of an
    argument is one), every argument's default beside the given ones, local paths as what they name, without how it
    starts (`--resume`, `--overwrite_output_dir`: the queue's choice). Words the parser does not take are kept, in
    order, under `""`, and so are arguments it would refuse (a record written before they were)."""
    try:
        given = given_arguments(FINETUNE_ARGUMENTS, argv)
    except ValueError:  # two values for one argument, a bad value: compared as written
        return {"": list(argv)}
    values = {**defaults(FINETUNE_ARGUMENTS), **comparable_paths(given.values)}
    values = {name: value for name, value in values.items() if name not in ("resume", "overwrite_output_dir")}
    if isinstance(values.get("output_dir"), str):
        values["output_dir"] = os.path.abspath(values["output_dir"])
    return {**values, "": given.unknown}


def comparable_argv(argv: Sequence[str]) -> dict[str, Any]:
    """What two runs' arguments are compared by ([`run_values`]): the same run whatever spelling or working folder
    named its arguments (`--max_train_samples=32` and `--max_train_samples 32`; `glue/`, `./glue` and `glue`)."""
    return run_values(argv)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return " ".join(map(_shown, value))
    return str(value)


def smoke_flags(argv: Sequence[str]) -> list[str]:
    """The arguments of `argv` that cut the paper's budget (fewer rows, steps or epochs), as parsed (in any
    spelling): a smoke run's."""
    try:
        given = given_arguments(FINETUNE_ARGUMENTS, argv).values
    except ValueError:
        return []
    cut = {
        "max_train_samples": lambda value: value is not None,
        "max_eval_samples": lambda value: value is not None,
        "max_steps": lambda value: value > 0,
        "num_train_epochs": lambda value: value != PAPER_EPOCHS,
    }
    return [f"--{name} {_shown(value)}" for name, value in given.items() if name in cut and cut[name](value)]


def run_evidence_problem(folder: Path, argv: Sequence[str], model: str, data_sha256: str | None) -> str | None:
    """Why the run in `folder` is not the planned run (other arguments, model, rows or inputs; not finished), or
    None. The evidence is the run's record, written whole when it finished, and its inputs' digests now."""
    run = RunFolder(folder)
    record_path = folder.parent / f"{folder.name}{RECORD_SUFFIX}"
    if not run.finished:
        return f"not finished (no {run.results_file.name})" if folder.is_dir() else "not run"
    try:
        record = json.loads(record_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return f"no readable record ({record_path.name}): run the command again to redo it"
    if not isinstance(record, dict) or record.get("finished") is not True:
        return "its record does not say it finished (written before evidence was kept, or killed while finishing)"
    ran, planned = comparable_argv(record.get("argv", ())), comparable_argv(argv)
    if ran != planned:
        differ = [name for name in dict.fromkeys([*ran, *planned]) if ran.get(name) != planned.get(name)]
        said = [
            f"{'--' + name if name else 'the words'} {_shown(ran.get(name))}, the plan: {_shown(planned.get(name))}"
            for name in differ[:3]
        ]
        return f"trained with other arguments ({'; '.join(said)})"
    if record.get("model") != model:
        return f"trained from another model ({record.get('model')}, the plan: {model})"
    read = run.results().get("data_sha256")  # the rows the run itself read
    if data_sha256 is not None and read != data_sha256:
        return f"trained on other rows (data digest {str(read)[:12]}, the plan: {data_sha256[:12]})"
    changed = changed_input(record.get("inputs", {}))
    return None if changed is None else f"its input {changed} changed (or went) since it ran"


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


EXAMPLE = '{"RTE": 56.0, "MRPC": "82.3/75.7"}'


def read_glue_test_results(path: str | Path) -> dict[str, dict[tuple[str, str], float]]:
    """The GLUE server's scores of your submissions, `{condition: {(task, metric): score}}`, from a JSON file.

    The file maps the leaderboard's columns ([`GLUE_SERVER_COLUMNS`]) to the numbers it shows, in its units: a
    number, or the text of a two-number cell (`"82.3/75.7"`: the first is the paper's metric). One object is the full
    method's submission; objects under condition names (`{"full": {...}, "no_aux_lm": {...}}`) are one per condition.

    Raises:
        `ValueError`: The file, a column or a cell is not as above; the message names it and the fix.
    """
    where = f"--glue_test_results {path}"
    try:
        data = read_json(path)  # the strict reader: a byte-order mark is read, a column given twice refused
    except StrictJSONError as err:
        raise ValueError(f"--glue_test_results {err}") from None
    except OSError as err:
        raise ValueError(f"{where}: not a readable JSON file ({err}).") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: give a JSON object of leaderboard columns, e.g. {EXAMPLE}.")
    by_condition = data if data and set(data) <= set(CONDITIONS) else {"full": data}
    scores: dict[str, dict[tuple[str, str], float]] = {}
    for condition, cells in by_condition.items():
        if not isinstance(cells, dict):
            raise ValueError(f"{where}: {condition!r} holds no object of leaderboard columns.")
        scores[condition] = {}
        for column, cell in cells.items():
            if column not in GLUE_SERVER_COLUMNS:
                raise ValueError(
                    f"{where}: {column!r} is no GLUE leaderboard column; use {', '.join(GLUE_SERVER_COLUMNS)} (or "
                    f"condition names, {', '.join(CONDITIONS)}, each holding such columns)."
                )
            first = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*-?\d+(?:\.\d+)?\s*)?", str(cell))
            if isinstance(cell, bool) or first is None:
                raise ValueError(f"{where}: {column} is {cell!r}; give the leaderboard's cell, as in {EXAMPLE}.")
            scores[condition][GLUE_SERVER_COLUMNS[column]] = float(first.group(1))
    return scores


def report_rows(
    runs: Mapping[tuple[str, str], RowRuns],
    tables: Iterable[int] = (2, 3, 4, 5),
    test_server: Mapping[str, Mapping[tuple[str, str], float]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The report: one row per published number of `tables` (`table`, `task`, `column`, `condition`, `metric`,
    `split`, `paper`, `paper_split`, `source`, `seeds` (the counted runs'), `planned_seeds`, `excluded` (seed: why),
    `complete`, `median`, `test_server`, `like_for_like`, `delta`, `note`), and Table 5's average per condition
    (`ours` over the medians of its eight tasks when all are complete, `paper`, and `test_server` over the server's
    scores of complete rows when all are given). A row is complete when every planned seed counted and the plan is
    not a smoke run; only a complete row gets a Δ or `like_for_like`, whatever the source of its number (the GLUE
    server's scores of its predictions included). `test_server` is [`read_glue_test_results`]'s."""
    rows = []
    for published in (r for r in PAPER_RESULTS if r.table in set(tables)):
        row_runs = runs.get((published.task, published.condition), RowRuns())
        seeds: dict[str, float] = {}  # by seed, as JSON keys
        split = None
        for seed, results in sorted(row_runs.counted.items()):
            scored = our_score(published, results)
            if scored is not None:
                seeds[str(seed)], split = round(scored[0], 2), scored[1]
        planned = len(row_runs.planned)
        complete = planned > 0 and len(seeds) == planned and not row_runs.smoke
        server = _server_score(published, (test_server or {}).get(published.condition, {}))
        median = round(statistics.median(seeds.values()), 2) if seeds else None
        if published.split == "glue_test_server":  # the server scored the runs' predictions: their rules apply
            same_split, ours = server is not None and complete, server
            note = "" if server is not None else GLUE_DEV_NOTE
        else:
            same_split, ours = split is not None and split.startswith("test") and complete, median
            note = ""
        note = DATASET_CHANGED.get(published.task) or note
        if planned and not complete:
            budget = f"smoke budget ({', '.join(row_runs.smoke)})" if row_runs.smoke else ""
            missing = f"{len(seeds)} of {planned} seeds" if len(seeds) < planned else ""
            note = "; ".join(filter(None, ["incomplete: " + ", ".join(filter(None, (missing, budget))), note]))
        like = same_split and published.task not in DATASET_CHANGED
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
                "planned_seeds": planned,
                "excluded": {str(seed): why for seed, why in sorted(row_runs.excluded.items())},
                "complete": complete,
                "median": median,
                "test_server": server,
                "like_for_like": like,
                "delta": round(ours - published.value, 2) if like and ours is not None else None,
                "note": note,
            }
        )
    averages = {}
    if 5 in set(tables):
        for condition, paper in TABLE5_AVERAGES.items():
            table5 = {r["task"]: r for r in rows if r["table"] == 5 and r["condition"] == condition}
            complete = {task: {"median": r["median"] if r["complete"] else None} for task, r in table5.items()}
            averages[condition] = {
                "paper": paper,
                "ours": _mean_of(complete, "median"),
                "test_server": _mean_of(
                    {task: {"test_server": r["test_server"] if r["complete"] else None} for task, r in table5.items()},
                    "test_server",
                ),
                "tasks": len([t for t in TABLE5_TASKS if complete.get(t, {}).get("median") is not None]),
            }
    return rows, averages


def _server_score(published: PaperResult, scores: Mapping[tuple[str, str], float]) -> float | None:
    if published.split != "glue_test_server":
        return None
    if published.metric == "accuracy_mean":  # Table 5's MNLI: the mean of the server's matched and mismatched
        parts = [scores.get((published.task, f"accuracy_{s}")) for s in ("matched", "mismatched")]
        return round(statistics.mean(parts), 2) if None not in parts else None
    return scores.get((published.task, published.metric))


def _mean_of(rows: Mapping[str, Mapping[str, Any]], key: str) -> float | None:
    values = [rows.get(task, {}).get(key) for task in TABLE5_TASKS]
    return round(statistics.mean(values), 2) if None not in values else None


def _markdown(
    rows: Sequence[Mapping[str, Any]], averages: Mapping[str, Mapping[str, Any]], plan: Mapping[str, Any]
) -> str:
    data = ", ".join(f"{task} {digest[:12]}" for task, digest in sorted(plan["data"].items()) if digest)
    lines = [
        "# GPT-1, Tables 2–5: the paper beside this reproduction",
        "",
        "Paper: Radford et al. 2018, the PDF's tables (source column). Ours: the median over the counted seeds, in "
        "the paper's units; test server: the GLUE server's score of the submission (--glue_test_results). Δ only "
        "where the split and the dataset are the paper's and the row is complete (every planned seed, the full "
        "budget).",
        "",
        f"Model: {plan['model']}. Data (SHA-256 of each task's rows): {data or '—'}. A run counts only when its "
        "record matches this plan (arguments, model, rows, unchanged inputs).",
        "",
        "| table | column | condition | paper | ours (median) | seeds | split | test server | Δ | note |",
        "|---|---|---|---:|---:|---|---|---:|---:|---|",
    ]

    def number(value: float | None) -> str:
        return "—" if value is None else f"{value:.1f}"

    for r in rows:
        seeds = " ".join(f"{v:.1f}" for v in r["seeds"].values()) or "—"
        if r["planned_seeds"]:
            seeds += f" ({len(r['seeds'])} of {r['planned_seeds']})"
        delta = "" if r["delta"] is None else f"{r['delta']:+.1f}"
        server = number(r["test_server"]) if r["paper_split"] == "glue_test_server" else ""
        lines.append(
            f"| {r['table']} | {r['column']} | {r['condition']} | {r['paper']:.1f} | {number(r['median'])} | {seeds} "
            f"| {r['split'] or '—'} | {server} | {delta} | {r['note']} |"
        )
    if averages:
        lines += ["", "Table 5, Avg. Score (8 tasks; MNLI the mean of matched and mismatched):", ""]
        lines += ["| condition | paper | ours (dev) | test server | tasks |", "|---|---:|---:|---:|---:|"]
        for condition, a in averages.items():
            lines.append(
                f"| {condition} | {a['paper']:.1f} | {number(a['ours'])} | {number(a['test_server'])} | "
                f"{a['tasks']} of 8 |"
            )
    excluded = [(r, seed, why) for r in rows for seed, why in r["excluded"].items()]
    if excluded:
        lines += ["", "Runs not counted:", ""]
        seen = set()
        for r, seed, why in excluded:
            if (r["task"], r["condition"], seed) not in seen:
                seen.add((r["task"], r["condition"], seed))
                lines.append(f"- {r['task']} {r['condition']} seed {seed}: {why}")
    return "\n".join(lines) + "\n"


def write_report(
    output_dir: str | Path, tables: Iterable[int] = (2, 3, 4, 5), glue_test_results: str | Path | None = None
) -> tuple[list, dict, str, OSError | None]:
    """Reads the runs under `output_dir` (and the GLUE server's scores from `glue_test_results`), writes
    `results.json` and `REPORT.md` there (each whole or not at all), and returns the rows, the averages, the
    Markdown table and the error that kept the files from being written (a read-only or full disk), if any: the
    table does not depend on them."""
    server = read_glue_test_results(glue_test_results) if glue_test_results else None
    plan = read_plan(output_dir)
    rows, averages = report_rows(collect_runs(output_dir), tables, server)
    text = _markdown(rows, averages, plan)
    result = {"model": plan["model"], "data": plan["data"], "rows": rows, "averages": averages}
    try:
        write_json_atomic(Path(output_dir) / RESULTS_FILE, result)
        write_text_atomic(Path(output_dir) / REPORT_FILE, text)
    except OSError as err:  # a read-only copy of the runs: its owner's files, a read-only mount, a full disk
        if err.errno not in WRITE_FAILURES and not isinstance(err, PermissionError):
            raise
        return rows, averages, text, err
    return rows, averages, text, None


def pack_glue_submission(
    output_dir: str | Path, condition: str = "full", seed: int | None = None, partial: bool = False
) -> tuple[Path, dict[str, Any]]:
    """Zips the test predictions of the GLUE runs under `output_dir` as the GLUE server wants them:
    `glue_submission.zip` and what went in it, `glue_submission.json` (file, task, seed, run folder, validation
    score), each written whole or not at all.

    Args:
        output_dir (`str` or `Path`): The reproduction's folder of runs.
        condition (`str`): The runs packed (a key of `CONDITIONS`).
        seed (`int`, *optional*): Each task's run of this seed; default: the run whose validation score (the task's
            main metric; MNLI's matched accuracy) is the median of its seeds (the lower middle one for an even count).
        partial (`bool`): Pack the files there are runs for; otherwise a missing one is refused.

    Returns:
        `tuple[Path, dict]`: The zip and its record.

    Raises:
        `ValueError`: A file the server wants has no run (without `partial`), or a run's predictions file is gone or
            does not match the test split it predicts ([`check_submission_file`]).
    """
    runs = collect_runs(output_dir)
    record: dict[str, Any] = {"condition": condition, "files": {}}
    chosen: dict[str, tuple[int, float | None]] = {}
    for task in dict.fromkeys(GLUE_SUBMISSION_FILES.values()):
        by_seed = runs[(task, condition)].counted if (task, condition) in runs else {}
        if seed is not None:
            by_seed = {seed: by_seed[seed]} if seed in by_seed else {}
        if by_seed:
            chosen[task] = _median_run(task, by_seed)
    missing = [name for name, task in GLUE_SUBMISSION_FILES.items() if task not in chosen]
    if missing and not partial:
        which = f"seed {seed}" if seed is not None else "any seed"
        raise ValueError(
            f"{output_dir}: no finished {condition} run ({which}) writes {', '.join(missing)}; the GLUE server wants "
            f"all {len(GLUE_SUBMISSION_FILES)} files. Run those tasks (hf-gpt1 reproduce run --tasks "
            f"{' '.join(dict.fromkeys(GLUE_SUBMISSION_FILES[name] for name in missing))}), or pass --partial to pack "
            "the others."
        )
    files = {}
    for name, task in GLUE_SUBMISSION_FILES.items():
        if task not in chosen:
            continue
        run_seed, score = chosen[task]
        folder = Path(output_dir) / task / condition / f"seed-{run_seed}"
        if not (folder / name).is_file():
            raise ValueError(
                f"{folder} has no {name}: the run predicted no test split (it was given no test file, or "
                "--do_predict false); run it again with the task's GLUE test files."
            )
        check_submission_file(folder / name, task)
        files[name] = folder / name
        record["files"][name] = {"task": task, "seed": run_seed, "run": str(folder), "validation_score": score}
    record["missing"] = missing
    packed = io.BytesIO()  # a few MB of TSV: built in memory, then written whole
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in files.items():
            text, clipped = packed_text(path, GLUE_SUBMISSION_FILES[name])
            archive.writestr(name, text)
            if clipped:
                record["files"][name]["clipped_to_label_range"] = clipped
    target = write_bytes_atomic(Path(output_dir) / SUBMISSION_ZIP, packed.getvalue())
    write_json_atomic(Path(output_dir) / SUBMISSION_RECORD, record)
    return target, record


def _median_run(task: str, by_seed: Mapping[int, Mapping[str, Any]]) -> tuple[int, float | None]:
    """The seed whose validation score is the median of `by_seed`'s (the lower middle one for an even count)."""
    spec = get_task(task)
    split = spec.eval_splits[0]
    scores = {seed: _metric(results, split, spec.main_metric) for seed, results in by_seed.items()}
    ranked = sorted(by_seed, key=lambda s: (scores[s] is None, scores[s] or 0.0, s))
    pick = ranked[(len(ranked) - 1) // 2]
    return pick, scores[pick]


def packed_text(path: Path, task: str) -> tuple[str, int]:
    """A checked submission file's text as the server takes it: a regression task's scores clipped to its
    `label_range` (files written before the runs clipped them); returns the text and how many scores were clipped."""
    text = path.read_text(encoding="utf-8")
    spec = get_task(task)
    if not spec.labels.clips_to_range:
        return text, 0
    header, *rows = text.splitlines()
    ids, values = zip(*(row.split("\t") for row in rows)) if rows else ((), ())
    scores, clipped = submission_scores(spec, [float(v) for v in values])
    if not clipped:
        return text, 0
    return "\n".join([header, *(f"{i}\t{score:.3f}" for i, score in zip(ids, scores))]) + "\n", clipped


def check_submission_file(path: Path, task: str) -> None:
    """Refuses a GLUE submission file that does not match the test split it predicts, read again from the run's
    `--data_dir`: the header, one `index<TAB>prediction` row per test row with the test file's ids in order, and a
    valid prediction in each (a label of the task, or a finite STS-B score: [`packed_text`] clips it to the server's
    [0, 5]). The GLUE server scores a team at most
    once a day: a file cut short, edited or from another split must not reach it.

    Raises:
        `ValueError`: The first problem, naming the file, the line and what to run again.
    """
    from ..data.files import load_glue_tsv

    spec = get_task(task)
    split = next(split for split, name in spec.glue_tsv.submission_files.items() if name == path.name)
    again = f"run {path.parent} again (hf-gpt1 reproduce run) to predict it whole"
    data_dir = (RunFolder(path.parent).identity() or {}).get("data", {}).get("data_dir")
    if data_dir is None:
        raise ValueError(f"{path}: its run read no --data_dir, so its {split} split cannot be checked; {again}.")
    rows = load_glue_tsv(data_dir, spec, split)
    ids = [str(i) for i in (rows["idx"] if "idx" in rows.column_names else range(rows.num_rows))]
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != "index\tprediction":
        raise ValueError(f"{path}:1: not a GLUE submission (its header is not 'index<TAB>prediction'); {again}.")
    if len(lines) - 1 != len(ids):
        raise ValueError(
            f"{path}: {len(lines) - 1} predictions for the {len(ids)} rows of {spec.name}'s {split} split in "
            f"{data_dir}; {again}."
        )
    for number, (line, expected) in enumerate(zip(lines[1:], ids), start=2):
        fields = line.split("\t")
        problem = None
        if len(fields) != 2 or fields[0] != expected:
            problem = f"expected the row of index {expected}, got {line!r}"
        else:  # the label kind says what a valid prediction is
            problem = spec.labels.submission_problem(spec, fields[1])
        if problem:
            raise ValueError(f"{path}:{number}: {problem}; {again}.")
