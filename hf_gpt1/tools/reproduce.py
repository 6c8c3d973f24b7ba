# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The paper's Tables 2–5 from the original weights, beside the paper: the inputs, the matrix of runs and its queue
(the library of `hf-gpt1 reproduce plan | prefetch | run | report | submit-pack`: `hf_gpt1.commands.reproduce`).

Runs live in one folder, one per (task, condition, seed), each an ordinary `hf-gpt1 glue` / `multiple-choice` run:

    <output_dir>/<task>/<condition>/seed-<seed>/all_results.json

`condition` is a key of `hf_gpt1.tools.paper_results.CONDITIONS` (`full`, `no_pretraining`: `--from_scratch`,
`no_aux_lm`: `--lm_coef 0`, the last two on Table 5's tasks). `plan` resolves the model and every task's data (its
source, rows, fingerprint and how many rows the tokenizer makes too long) and lists the runs and their state;
`prefetch` downloads the model and the Hub datasets into the Hugging Face cache, for a GPU host without the Hub; `run`
runs what is not done (reusing finished runs, continuing unfinished ones) and reports; `report` scores each published
number of the chosen tables from the finished runs and writes `results.json` and `REPORT.md` beside them
(`hf_gpt1.tools.reproduce_report`); `submit-pack` zips the GLUE test predictions for the GLUE server:

    hf-gpt1 reproduce run --tasks rte stsb cola --seeds 0 1 --data_dir glue_data [any recipe argument]
    hf-gpt1 reproduce report --output_dir runs/reproduce [--tables 2 3 4 5] [--glue_test_results server.json]
    hf-gpt1 reproduce run reproduce.yaml --seeds 3    # arguments from a YAML/JSON file, the flags after it override
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets

from ..data.atomic import write_json_atomic
from ..data.files import glue_file, load_task_splits
from ..data.fingerprint import changed_input
from ..data.hub_access import hub_access
from ..data.tasks import TaskSpec
from ..process_control import DRIVER_PID, driver_of
from ..training.parse import FINETUNE_ARGUMENTS, as_words, given_arguments, recorded_paths
from ..training.pinned import pin_model
from ..training.run_folder import RunFolder
from .reproduce_report import RECORD_SUFFIX, comparable_argv, run_evidence_problem

__all__ = [
    "PlannedRun",
    "TaskData",
    "driver_lock",
    "execute",
    "plan_runs",
    "resolve_data",
    "resolve_model",
    "run_state",
]

STORY_CLOZE_FILES = ("cloze_test_val__spring2016.csv", "cloze_test_test__spring2016.csv")


# ------------------------------------------------------------------------------------------------ the inputs


@dataclass(frozen=True)
class TaskData:
    """Where one task's rows come from: [`load_task_splits`]' arguments and the flags that tell a run the same.

    Args:
        spec (`TaskSpec`): The task.
        source (`Mapping[str, Any]`): `data_dir`, or `train_file`, `test_file` and `story_cloze_protocol`; empty
            for the Hub copy.
        flags (`tuple[str, ...]`): The run's arguments that name the same data.
    """

    spec: TaskSpec
    source: Mapping[str, Any] = field(default_factory=dict)
    flags: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        if "data_dir" in self.source:
            return f"{self.source['data_dir']}/{self.spec.glue_tsv.folder}"
        if "train_file" in self.source:
            return str(Path(self.source["train_file"]).parent)
        return f"the Hub copy {'/'.join(filter(None, self.spec.hub))}"


def task_data(spec: TaskSpec, data_dir: str | None = None, story_cloze_dir: str | None = None) -> TaskData:
    """The data a run of `spec` reads: the GLUE folder `data_dir` for a GLUE task, the two 2016 CSVs in
    `story_cloze_dir` for Story Cloze (always the original protocol), else the task's Hub copy. Local files that are
    missing are refused here, with the flag that names them."""
    if spec.name == "story_cloze":
        if story_cloze_dir is None:
            raise ValueError(
                "story_cloze has no Hub copy with its columns: pass --story_cloze_dir, the folder of the two 2016 "
                f"CSVs ({' and '.join(STORY_CLOZE_FILES)}, from the ROCStories request form)."
            )
        train, test = (os.path.abspath(Path(story_cloze_dir) / name) for name in STORY_CLOZE_FILES)
        absent = [path for path in (train, test) if not Path(path).is_file()]
        if absent:
            raise ValueError(
                f"--story_cloze_dir {story_cloze_dir} has no {Path(absent[0]).name}: put the two 2016 CSVs there "
                "under their original names (the ROCStories request form sends them)."
            )
        source = {"train_file": train, "test_file": test, "story_cloze_protocol": True}
        return TaskData(spec, source, ("--story_cloze_protocol", "true", "--train_file", train, "--test_file", test))
    if data_dir is not None and spec.glue_tsv is not None:
        layout = spec.glue_tsv  # the labelled files a run trains and evaluates on must be there
        labelled = [split for split in layout.files if not split.startswith("test")]
        missing = [split for split in labelled if not glue_file(data_dir, layout, split).is_file()]
        if missing:
            raise ValueError(
                f"--data_dir {data_dir} has no {layout.folder}/{layout.files[missing[0]]}: add the task's GLUE "
                f"files, or drop {spec.name} from --tasks / --tables (without --data_dir, the GLUE tasks are read "
                f"from the Hub, {spec.hub[0]})."
            )
        return TaskData(spec, {"data_dir": data_dir}, ("--data_dir", os.path.abspath(data_dir)))
    return TaskData(spec)


def resolve_data(data: TaskData) -> datasets.DatasetDict:
    """The task's splits as its runs will read them (a Hub copy from the Hugging Face cache when it is there)."""
    hub = "/".join(filter(None, data.spec.hub or ()))
    with hub_access(
        f"{data.spec.name}: its data is the Hub copy {hub}, not in this machine's Hugging Face cache",
        "run `hf-gpt1 reproduce prefetch` with the same --tables / --tasks where the Hub is reachable, with this "
        "HF_HOME (or copy its cache here)"
        + (", or pass --data_dir with the GLUE files" if data.spec.glue_tsv else ""),
    ):
        return load_task_splits(data.spec, **data.source)[0]


def resolve_model(name_or_path: str, revision: str | None = None) -> tuple[str, str]:
    """`(folder, label)`: a local model folder as it is; a Hub id downloaded (or found in the cache) at `revision`
    (default: the current `main`) as the snapshot folder of its commit, so that every run of a reproduction reads the
    same weights. The label names the commit: `openai-community/openai-gpt@<sha>`."""
    if Path(name_or_path).is_dir():
        if revision is not None:
            raise ValueError(f"--model_revision {revision} names a Hub commit; {name_or_path} is a local folder.")
        folder = os.path.abspath(name_or_path)  # what it names, from whichever working folder
        return folder, folder
    with hub_access(
        f"--model_name_or_path {name_or_path}: not in this machine's Hugging Face cache",
        "run `hf-gpt1 reproduce prefetch` where the Hub is reachable, with this HF_HOME, or give a local folder",
    ):
        pinned = pin_model(name_or_path, revision=revision)  # the one resolution of a model, as every run's plan
    return pinned.folder, f"{name_or_path}@{pinned.commit}"


def data_lines(
    data: TaskData, splits: datasets.DatasetDict, digest: str, tokenizer: Any, config: Any, extra: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    """One task's plan line (source, rows and rows too long per split, fingerprint) and its record: its splits sliced,
    tokenized and measured as its runs will (their data arguments, `input_lengths`, `tokenize_split`)."""
    from transformers import HfArgumentParser

    from ..training.arguments import DataArguments
    from ..training.finetune import input_lengths, tokenize_split

    argv = ["--task", data.spec.name, *data.flags, *extra]
    data_args = HfArgumentParser(DataArguments).parse_args_into_dataclasses(argv, return_remaining_strings=True)[0]
    max_length, cap = input_lengths(data_args, config)
    counts = {}
    for split, rows in splits.items():
        tokenized, _, dropped, cut = tokenize_split(data.spec, data_args, split, rows, tokenizer, max_length, cap)
        counts[split] = {"rows": tokenized.num_rows + dropped, "too_long": cut}
    parts = ", ".join(f"{split} {c['rows']:,} ({c['too_long']:,} too long)" for split, c in counts.items())
    line = f"  {data.spec.name:<12} {data.where}: {parts}; rows sha256 {digest[:12]}"
    return line, {"source": data.where, "splits": counts, "sha256": digest, "max_length": max_length}


# ------------------------------------------------------------------------------------------------ running the matrix

FAILURES_FILE = "failures.json"
PAPER_BATCH = 32  # the fine-tuning batch of the paper (section 4.1); each run is one process
# The runs' arguments that reproduce sets itself, and how to ask for them; given as other arguments (in any spelling
# the runs' parser takes), they would silently override every run's.
RUN_OWNED = {
    "task": "choose the tasks with --tasks or --tables",
    "seed": "choose the seeds with --seeds",
    "output_dir": "each run has its folder under reproduce's --output_dir",
    "from_scratch": "choose the ablations with --conditions",
    "lm_coef": "choose the ablations with --conditions",
    "story_cloze_protocol": "Story Cloze always runs under the original protocol",
    "train_file": "the data comes from --data_dir, --story_cloze_dir or the Hub",
    "validation_file": "the data comes from --data_dir, --story_cloze_dir or the Hub",
    "test_file": "the data comes from --data_dir, --story_cloze_dir or the Hub",
    "overwrite_output_dir": "the queue starts again a run that left nothing to continue, and never deletes a "
    "finished one (move it away, or give another --output_dir)",
    "dry_run": "`hf-gpt1 reproduce plan` prints what the queue would run, and every run of `reproduce run` runs",
}
# How a run starts, not what it is: the queue decides it for each run (`--resume` for one it continues).
RUN_START = ("resume",)


def run_words(values: Mapping[str, Any]) -> list[str]:
    """The arguments passed on to every run, as parsed by the runs' parser ([`given_arguments`]), as the words each
    run is given: one spelling per argument, paths as what they name ([`recorded_paths`]: a record read from another
    working folder names the same files), and without `--resume`, which the queue gives each run it continues.

    Raises:
        `ValueError`: An argument that reproduce sets for each run itself ([`RUN_OWNED`]), in any spelling.
    """
    if owned := sorted(values.keys() & RUN_OWNED.keys()):
        raise ValueError(f"--{owned[0]} is set for each run by reproduce: {RUN_OWNED[owned[0]]}.")
    return as_words(recorded_paths({name: value for name, value in values.items() if name not in RUN_START}))


CONDITION_FLAGS = {"full": [], "no_pretraining": ["--from_scratch", "true"], "no_aux_lm": ["--lm_coef", "0"]}


@dataclass(frozen=True)
class PlannedRun:
    """One fine-tuning run of the matrix: `hf-gpt1 <recipe> <argv>` writing `folder`, on data whose rows digest to
    `data_sha256` (when resolved), from `model`."""

    task: str
    condition: str
    seed: int
    recipe: str
    folder: Path
    argv: tuple[str, ...]
    data_sha256: str | None = None
    model: str | None = None  # the model as pinned (`openai-community/openai-gpt@<commit>`, or a local folder)


def batch_flags(extra: Sequence[str]) -> list[str]:
    """The flags that make a run's batch the paper's 32 examples per update: `--per_device_train_batch_size 32`, or
    the per-device size that gives 32 with the `--gradient_accumulation_steps` in `extra`. A batch in `extra` that
    cannot make 32 is refused (each run is one process, so per device × accumulation is the whole batch)."""
    given = given_arguments(FINETUNE_ARGUMENTS, extra).values  # the runs' parser: every spelling is one argument
    per_device, steps = given.get("per_device_train_batch_size"), given.get("gradient_accumulation_steps", 1)
    if per_device is None and steps >= 1 and PAPER_BATCH % steps == 0:
        return ["--per_device_train_batch_size", str(PAPER_BATCH // steps)]
    if per_device is not None and per_device * steps == PAPER_BATCH:
        return []
    raise ValueError(
        f"--per_device_train_batch_size {per_device or '(32)'} × --gradient_accumulation_steps {steps} is not the "
        f"paper's batch of {PAPER_BATCH} examples (section 4.1; each run of reproduce is one process): give sizes "
        "whose product is 32, e.g. --per_device_train_batch_size 8 --gradient_accumulation_steps 4."
    )


def plan_runs(
    data: Sequence[TaskData],
    conditions: Sequence[str],
    seeds: Sequence[int],
    output_dir: str | Path,
    model_name_or_path: str,
    extra: Sequence[str] = (),
) -> list[PlannedRun]:
    """The run matrix, task by task: each (task, condition, seed) with its recipe and arguments (the task's data
    flags, the condition's, the paper's batch, then `extra`, which goes to every run). Local paths are absolute, so
    that the same matrix given relative paths from another working folder plans the same runs."""
    runs = []
    batch = batch_flags(extra)
    # paths as what they name (absolute): the same matrix from another working folder is the same runs
    model = recorded_paths({"model_name_or_path": model_name_or_path})["model_name_or_path"]
    for task in data:
        spec = task.spec
        recipe = spec.input_format.command
        for condition in conditions:
            for seed in seeds:
                folder = Path(output_dir) / spec.name / condition / f"seed-{seed}"
                argv = ["--task", spec.name, "--model_name_or_path", model, "--seed", str(seed),
                        "--output_dir", os.path.abspath(folder), *task.flags, *CONDITION_FLAGS[condition], *batch,
                        *extra]  # fmt: skip
                runs.append(PlannedRun(spec.name, condition, seed, recipe, folder, tuple(argv)))
    return runs


def run_state(run: PlannedRun) -> str:
    """`done` (finished with these arguments on unchanged inputs: reused), `partial` (started with these arguments and
    checkpointed: continued with --resume), `restart` (an attempt that left nothing to continue: an unreadable record,
    a stop before the first checkpoint, a failure; started again from nothing), `new`, or `other` (the folder holds a
    run with other arguments or other data that finished or checkpointed)."""
    recorded, folder = _record_path(run), RunFolder(run.folder)
    started = run.folder.is_dir() and any(run.folder.iterdir())
    finished = folder.finished
    kept = finished or (started and folder.last_complete_checkpoint() is not None)
    try:
        record = json.loads(recorded.read_text()) if recorded.is_file() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        print(f"{recorded}: unreadable ({err}): {run.folder} is run again from nothing", flush=True)
        return "restart"
    if isinstance(record, list):  # the arguments alone, as written before the data's digest was recorded
        record = {"argv": record}
    same = isinstance(record, dict) and comparable_argv(record.get("argv", ())) == comparable_argv(run.argv)
    if same and None not in (record.get("data_sha256"), run.data_sha256) and record["data_sha256"] != run.data_sha256:
        same = False  # the same arguments on other rows: a Hub copy that changed, a GLUE file replaced
    if not kept:  # nothing to reuse or continue, whatever was given before
        return "restart" if started or record is not None else "new"
    if not same:
        return "other"
    if not finished:
        return "partial"
    identity = folder.identity()  # a finished folder that records no run is not this one
    return "other" if identity is None or changed_input(identity.get("inputs", {})) else "done"


def _record_path(run: PlannedRun) -> Path:
    return run.folder.parent / f"{run.folder.name}{RECORD_SUFFIX}"


def execute(runs: Sequence[PlannedRun], output_dir: str | Path, devices: Sequence[str] = ("cpu",)) -> dict[str, list]:
    """Runs what is not done, each in its own process, one at a time per device (`"cpu"` or a GPU index, given to
    the run as `CUDA_VISIBLE_DEVICES`; a device named twice runs two at once); returns `{"reused", "ran", "failed"}`.

    A failed run is recorded (`failures.json`: its folder and last error line) and the queue goes on; Ctrl-C (or
    SIGTERM, passed on) stops the current runs (each saves a checkpoint, as any run does) and the queue, and the same
    command continues where it stopped. Each run is a session of its own: a signal reaches it from the driver only."""
    outcome: dict[str, list] = {"reused": [], "ran": [], "failed": []}
    pending: queue.Queue = queue.Queue()
    for number, run in enumerate(runs, start=1):
        pending.put((f"[{number}/{len(runs)}] {run.task} {run.condition} seed {run.seed}", run))
    stopping, lock, running = threading.Event(), threading.Lock(), {}

    def work(device: str, finished: threading.Event) -> None:
        env = {**os.environ, **({} if device == "cpu" else {"CUDA_VISIBLE_DEVICES": device})}
        env[DRIVER_PID] = str(os.getpid())  # each run stops once this driver is gone (`follow_driver`)
        try:
            while not stopping.is_set():
                try:
                    where, run = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    key, entry = _run_one(run, where, env, running, stopping)
                except Exception as err:  # noqa: BLE001 - a queue that stops silently would look done
                    print(f"{where}: failed: {type(err).__name__}: {err} (the queue goes on)", flush=True)
                    key, entry = "failed", {"folder": str(run.folder), "error": f"{type(err).__name__}: {err}"}
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
    except BaseException as stop:  # Ctrl-C or SIGTERM to the driver: passed on to each run, which checkpoints
        stopping.set()
        signum = signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM
        for process in list(running.values()):
            process.send_signal(signum)
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
    held = _wait_for_live_run(run, where, stopping)
    if held == _STOPPED:
        return None, None
    if held is not None:
        print(f"{where}: not run: {held} (the queue goes on)", flush=True)
        return "failed", {"folder": str(run.folder), "error": held}
    state = run_state(run)
    if state == "done":
        if not _finished_record(run):  # it finished after its driver was gone: its evidence is written now
            _write_evidence(run)
        problem = run_evidence_problem(run.folder, run.argv, run.model, run.data_sha256)
        if problem is not None:  # never "reused" for a run the report would not count
            print(f"{where}: not reused: {problem}", flush=True)
            return "failed", {"folder": str(run.folder), "error": problem}
        print(f"{where}: reused (finished with these arguments and inputs)", flush=True)
        return "reused", str(run.folder)
    if state == "other":
        error = (f"{run.folder} holds a run with other arguments or other data: move it away, or give another "
                 "--output_dir")  # fmt: skip
        print(f"{where}: not run: {error}", flush=True)
        return "failed", {"folder": str(run.folder), "error": error}
    print(f"{where}: {'continuing' if state == 'partial' else 'running'} -> {run.folder}", flush=True)
    write_json_atomic(_record_path(run), {"argv": list(run.argv), "data_sha256": run.data_sha256})
    argv = list(run.argv)
    if state == "partial":
        argv += ["--resume", "true"]
    elif state == "restart" and run.folder.is_dir():
        argv += ["--overwrite_output_dir", "true"]  # what the earlier attempt left: nothing to continue
    log = run.folder.parent / f"{run.folder.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as console:
        # A session of its own: a signal reaches the run from the driver only (once, whoever signalled the driver).
        process = subprocess.Popen(
            [sys.executable, "-m", "hf_gpt1", run.recipe, *argv],
            stdout=console,
            stderr=subprocess.STDOUT,
            env={**env, "PYTHONUNBUFFERED": "1"},  # its log, which a user tails, shows each line as it is printed
            start_new_session=True,
        )
        running[where] = process
        returncode = process.wait()
        running.pop(where)
    if stopping.is_set():
        print(f"{where}: stopped", flush=True)
        return None, None
    if returncode == 0:
        _write_evidence(run)
        return "ran", str(run.folder)
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if line.startswith("error:")), lines[-1] if lines else "")
    if returncode < 0:  # killed by a signal (the OOM killer's SIGKILL, say): that is why it ended
        error = f"killed by {signal.Signals(-returncode).name} (signal {-returncode}); its log ends: {error}"
    print(f"{where}: failed: {error} (the queue goes on; its console: {log})", flush=True)
    return "failed", {"folder": str(run.folder), "error": error, "log": str(log)}


_STOPPED = "stopped"


def _wait_for_live_run(
    run: PlannedRun, where: str, stopping: threading.Event, poll_s: float = 1.0, remind_s: float = 60.0
) -> str | None:
    """Waits while a live run of an earlier driver of this queue holds the run's folder: its driver is gone, so it
    checkpoints and stops on its own (`process_control.follow_driver`); never a second run beside it. A run started
    by hand has no driver of ours and does not stop on its own: it is not waited for. Says what it waits for, and
    again every `remind_s` seconds.

    Returns:
        None once the folder is free; `_STOPPED` if the queue was stopped meanwhile; else why the run is not run.
    """
    lock = RunFolder(run.folder).lock
    waited, said = time.monotonic(), None
    while (holder := lock.in_use()) is not None:
        if said is None or time.monotonic() - said >= remind_s:
            what = _holder(holder)
            if what is None:
                return (
                    f"{run.folder} is held by a run started by hand ({holder}), not by a reproduce run: it has no "
                    "driver of ours and does not stop on its own. Let it end or stop it, then run the same command "
                    "again."
                )
            if said is None:
                print(f"{where}: waiting: {run.folder} is held by {what}", flush=True)
            else:
                print(f"{where}: still waiting ({time.monotonic() - waited:.0f} s): {run.folder} is held by {what}",
                      flush=True)  # fmt: skip
            said = time.monotonic()
        if stopping.wait(poll_s):
            return _STOPPED
    return None


def _holder(holder: str) -> str | None:
    """What holds a run's folder (`holder`: its lock's record, "pid N on host, since …"), as the queue says it while
    waiting for it; None for a run started by hand on this machine, which the queue does not wait for."""
    found = re.match(r"pid (\d+) on (\S+),", holder)
    if found is None or found[2] != socket.gethostname():
        return f"a live process ({holder}) that this machine cannot inspect: waiting for it to end (or stop it)"
    driver = driver_of(int(found[1]))
    if driver is None:
        return f"a live process ({holder}) that this machine cannot inspect: waiting for it to end (or stop it)"
    if driver == 0:
        return None
    try:
        os.kill(driver, 0)
    except ProcessLookupError:
        return (
            f"a run of an earlier reproduce run ({holder}), whose driver (pid {driver}) is gone: it checkpoints and "
            "stops on its own"
        )
    except PermissionError:
        pass
    return f"a run of another reproduce run ({holder}; its driver, pid {driver}, is running): waiting for it to end"


def _finished_record(run: PlannedRun) -> bool:
    try:
        return json.loads(_record_path(run).read_text()).get("finished") is True
    except (OSError, ValueError, AttributeError):
        return False


def _write_evidence(run: PlannedRun) -> None:
    """The finished run's record, written whole: its arguments, the model and rows it was planned on, and the
    digests of the input files it read (its own record of them: `hf_gpt1_run.json`)."""
    identity = RunFolder(run.folder).identity() or {}
    record = {"argv": list(run.argv), "data_sha256": run.data_sha256, "model": run.model,
              "inputs": identity.get("inputs", {}), "finished": True}  # fmt: skip
    write_json_atomic(_record_path(run), record)


def _record_failures(output_dir: str | Path, failed: list) -> None:
    write_json_atomic(Path(output_dir) / FAILURES_FILE, failed)


@contextlib.contextmanager
def driver_lock(output_dir: str | Path):
    """One `reproduce run` per folder: a second driver would start the same runs and write one log twice."""
    import fcntl

    Path(output_dir).mkdir(parents=True, exist_ok=True)
    path = Path(output_dir) / ".reproduce.lock"
    with open(path, "a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise ValueError(
                f"--output_dir {output_dir} is in use by another hf-gpt1 reproduce run ({holder}): wait for it to "
                "finish, or give another --output_dir."
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"pid {os.getpid()}")
        lock.flush()
        yield


if __name__ == "__main__":  # `python -m hf_gpt1.tools.reproduce` ran the command until 0.6.0: a library runs nothing
    raise SystemExit(
        "error: python -m hf_gpt1.tools.reproduce was removed in hf_gpt1 0.6.0: run hf-gpt1 reproduce (or "
        "python -m hf_gpt1.commands.reproduce)."
    )
