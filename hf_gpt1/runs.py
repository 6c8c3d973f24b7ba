"""A recipe run from command line to results: the one lifecycle that fine-tuning and pre-training share.

    check the output folder → seed → prepare (arguments, data, tokenizer, model) → claim the folder (lock) →
    Trainer → resume → train → save → evaluate / predict → all_results.json + a summary

Every input is validated in `prepare`, before the folder is claimed: a failed start leaves the folder as it was, so the
corrected command is not refused as "another run". While a run lives it holds a lock on its folder, so a second
process (a second `--resume`, say) cannot write into it; the kernel releases the lock when the process ends, crashes
or is killed. Errors reach the user as one line ([`run_recipe`]).
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import HfArgumentParser, set_seed

from .checkpoints import last_complete_checkpoint, write_json_atomic
from .trainer import GPT1Trainer, RecipeTrainingArguments, TrainingError, retain_freed_cpu_memory

try:  # POSIX advisory locks; elsewhere runs are not locked (and say so)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

logger = logging.getLogger(__name__)

RUN_FILE = "hf_gpt1_run.json"
LOCK_FILE = ".hf_gpt1.lock"
RESULTS_FILE = "all_results.json"

__all__ = [
    "LOCK_FILE",
    "RESULTS_FILE",
    "RUN_FILE",
    "OutputDirLock",
    "Prepared",
    "check_output_dir",
    "load_yaml",
    "logged_metrics",
    "parse_recipe_args",
    "run_recipe",
    "run_training",
]


# ------------------------------------------------------------------------------------------------ the output folder


class OutputDirLock:
    """An exclusive lock on a run's output folder, held for the life of the run.

    It is an advisory `flock` on `<folder>/.hf_gpt1.lock`, which also records who holds it (pid, host, start time)
    for the message a second run gets. The kernel drops the lock when its process exits, crashes or is killed, so a
    lock left by a dead run is taken over by the next one. Folders on network file systems may not support `flock`.
    """

    def __init__(self, folder: str | os.PathLike):
        self.path = Path(folder) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None:
            logger.warning("No file locking on this platform: nothing stops a second run from using %s.", self.path)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise ValueError(
                f"--output_dir {self.path.parent} is in use by a running run ({holder}); wait for it to end, stop it, "
                "or choose another --output_dir."
            ) from None
        os.ftruncate(fd, 0)
        os.write(
            fd, f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode()
        )
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _contents(folder: Path) -> list[Path]:
    return [path for path in folder.iterdir() if path.name != LOCK_FILE]


def _read_run_file(folder: Path) -> dict | None:
    marker = folder / RUN_FILE
    if not marker.is_file():
        return None
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(
            f"{marker} is damaged ({err}): it records which run owns {folder}. Pass --overwrite_output_dir to start "
            "afresh there, or choose another --output_dir."
        ) from None


def check_output_dir(output_dir: str | os.PathLike, run: dict[str, Any], overwrite: bool, resume: bool) -> None:
    """Refuses an output folder this run may not use, without changing anything.

    The run's identity (`run`: recipe, task, model, data — whatever makes its results comparable) is stored in
    `hf_gpt1_run.json`. A folder that holds another run, or files of unknown origin, is an error unless `overwrite`;
    resuming requires the same identity; the folder (or the nearest existing parent) must be writable.
    """
    folder = Path(output_dir)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"--output_dir {folder} is a file; give a folder (it is created when missing).")
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"--output_dir {folder}: {existing} is not writable; choose a folder you can write to.")
    if folder.is_dir() and _contents(folder):
        previous = _read_run_file(folder)
        if overwrite:
            return
        if resume:
            if previous != run:
                raise ValueError(
                    f"--resume: {folder} holds a different run ({previous}) than the one asked for ({run}); "
                    "resume with the original arguments, or start afresh with --overwrite_output_dir."
                )
            return
        if previous == run:
            what = "this same run (pass --resume to continue it)"
        else:
            what = f"another run ({previous})" if previous else "files that are not from an hf_gpt1 run"
        raise ValueError(
            f"Output directory {folder} already holds {what}. Pass --overwrite_output_dir to replace it, "
            "--resume to continue the same run, or choose another --output_dir."
        )
    if resume:
        raise ValueError(f"--resume: {folder} holds no run to resume; drop --resume to start one.")


def _claim(lock: OutputDirLock, run: dict[str, Any], overwrite: bool, resume: bool) -> None:
    """Locks the folder (if this run does not hold it yet), checks it again under the lock, empties it for
    `overwrite` and records the run."""
    if not lock.held:
        lock.acquire()
    folder = lock.path.parent
    check_output_dir(folder, run, overwrite, resume)
    if overwrite:
        for path in _contents(folder):  # everything but the lock this run holds
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    if not resume:
        write_json_atomic(folder / RUN_FILE, run)


# ------------------------------------------------------------------------------------------------ the lifecycle


@dataclass
class Prepared:
    """Everything a recipe's `prepare` step builds, checked, before the output folder is claimed."""

    model: torch.nn.Module
    tokenizer: Any
    train_dataset: Any = None
    eval_dataset: Any = None
    data_collator: Callable | None = None
    compute_metrics: Callable | None = None
    trainer_class: type[GPT1Trainer] = GPT1Trainer
    state: dict[str, Any] = field(default_factory=dict)
    """Anything else the recipe's `finish` step needs (raw test splits, the task, ...)."""


def _check_planned_steps(args: RecipeTrainingArguments, train_dataset: Any) -> None:
    """Refuses a training run that would take no optimizer step (a corpus without a length is not checked)."""
    if not hasattr(train_dataset, "__len__"):
        return
    rows, per_step = len(train_dataset), args.per_device_train_batch_size * max(args.world_size, 1)
    batches = rows // per_step if args.dataloader_drop_last else math.ceil(rows / per_step)
    if batches == 0 and args.dataloader_drop_last and rows:
        raise ValueError(
            f"This run would take 0 optimizer steps: {rows} training rows are fewer than one global batch of "
            f"{per_step}, and --dataloader_drop_last drops a partial batch: lower --per_device_train_batch_size or "
            "pass --dataloader_drop_last false."
        )
    if batches == 0 or (args.max_steps <= 0 and args.num_train_epochs == 0):
        raise ValueError(
            f"This run would take 0 optimizer steps ({rows} training rows, --num_train_epochs "
            f"{args.num_train_epochs}, a global batch of {per_step}): raise --num_train_epochs or --max_steps, or "
            "lower the batch size."
        )


def _format_seconds(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def run_training(
    args: RecipeTrainingArguments,
    identity: dict[str, Any],
    prepare: Callable[[], Prepared],
    finish: Callable[[GPT1Trainer, Prepared], tuple[dict[str, Any], list[str]]],
    title: str,
) -> dict[str, Any]:
    """Runs a recipe's stages in the shared order and writes `all_results.json` and the summary.

    Args:
        args: The run's training arguments (`output_dir`, `resume`, `do_train`, ...).
        identity: What makes two runs the same (stored in `hf_gpt1_run.json`; `--resume` requires it unchanged).
        prepare: Validates the arguments, reads the data and loads the tokenizer and model; raises on any problem.
        finish: Evaluates / predicts with the trained Trainer; returns the results and the summary's lines.
        title: The summary's first words (`"glue rte"`).

    Returns:
        `dict`: The results (also in `output_dir/all_results.json`).
    """
    started = time.time()
    main = args.process_index == 0
    lock = OutputDirLock(args.output_dir)
    try:
        if main:  # refuse an occupied folder now; it is claimed once every input has passed
            check_output_dir(args.output_dir, identity, args.overwrite_output_dir, args.resume)
            if Path(args.output_dir).is_dir():  # a folder another process is using: refused now, not after loading
                lock.acquire()
        set_seed(args.seed)
        prepared = prepare()
        if args.do_train:
            _check_planned_steps(args, prepared.train_dataset)
        if main:
            _claim(lock, identity, args.overwrite_output_dir, args.resume)
        if args.retain_cpu_memory and args.device.type == "cpu":
            retain_freed_cpu_memory()
        trainer = prepared.trainer_class(
            model=prepared.model,
            args=args,
            train_dataset=prepared.train_dataset,
            eval_dataset=prepared.eval_dataset,
            data_collator=prepared.data_collator,
            processing_class=prepared.tokenizer,
            compute_metrics=prepared.compute_metrics,
        )
        if main:
            _print_start(args, prepared, title)
        if args.do_train:
            resume_from = last_complete_checkpoint(args.output_dir) if args.resume else None
            if args.resume and main:
                print(f"Resuming from {resume_from or 'the start (no complete checkpoint yet)'}", flush=True)
            train_result = trainer.train(resume_from_checkpoint=resume_from)
            steady = trainer.steady_state()  # every process: the token count is summed over them
            trainer.save_model()
        results, lines = finish(trainer, prepared)
        if args.do_train:
            train_metrics = {**train_result.metrics, "steady_state": steady}
            results = {"train": train_metrics, **results, "log_history": trainer.state.log_history}
            if steady:
                lines = [_speed_line(steady, args), *lines]
        if trainer.is_world_process_zero():
            prepared.tokenizer.save_pretrained(args.output_dir)
            write_json_atomic(Path(args.output_dir) / RESULTS_FILE, results)
            _print_summary(title, lines, args, time.time() - started)
        return results
    finally:
        lock.release()


def logged_metrics(trainer: GPT1Trainer, prefix: str, step: int) -> dict[str, float] | None:
    """The metrics (keys starting with `prefix`) of the evaluation logged at `step` during training, or None: the
    model in hand at the end of training was evaluated there, so the results need not evaluate it again."""
    for entry in reversed(trainer.state.log_history):
        if entry.get("step") == step and any(key.startswith(prefix) for key in entry):
            return {key: value for key, value in entry.items() if key.startswith(prefix) or key == "epoch"}
    return None


def _print_start(args: RecipeTrainingArguments, prepared: Prepared, title: str) -> None:
    world = args.world_size
    line = f"{title}: {world} process{'es' if world > 1 else ''} on {args.device.type}"
    if args.do_train:
        rows = len(prepared.train_dataset) if hasattr(prepared.train_dataset, "__len__") else "streamed"
        global_batch = args.per_device_train_batch_size * world * args.gradient_accumulation_steps
        line += (
            f"; global batch {args.per_device_train_batch_size} per device × {world} × "
            f"{args.gradient_accumulation_steps} accumulation = {global_batch}; {rows} training rows"
        )
    print(line, flush=True)
    if world == 1 and os.environ.get("ACCELERATE_USE_CPU", "").lower() == "true":
        print(
            "note: `accelerate launch --cpu` runs one process whatever --num_processes says; `accelerate launch "
            "--multi_gpu --num_processes N` runs N on the CPU (docs/SCALING.md).",
            flush=True,
        )


def _speed_line(steady: dict[str, float], args: RecipeTrainingArguments) -> str:
    line = (
        f"training speed: {steady['tokens_per_s']:,.0f} tokens/s, {steady['steps_per_s']:.2f} steps/s in the "
        f"steady state ({steady['steps']} steps; the slowest {steady['max_step_over_median']:.1f}× the median); "
        f"first step {steady['first_step_s']:.1f} s"
    )
    if args.torch_compile:
        line += f" (compilation), {steady['graphs_compiled_after_first_step']} graphs compiled after it"
    return line


def _print_summary(title: str, lines: list[str], args: RecipeTrainingArguments, seconds: float) -> None:
    print(f"\n== {title}: done in {_format_seconds(seconds)} ==", flush=True)
    for line in lines:
        print(f"  {line}")
    if args.do_train:
        print(f"  model + tokenizer: {args.output_dir}")
    print(f"  results: {Path(args.output_dir) / RESULTS_FILE}", flush=True)


# ------------------------------------------------------------------------------------------------ command line


def load_yaml(path: str | os.PathLike) -> Any:
    """Reads a YAML file; a syntax error is one line naming the file and the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist.")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML ({getattr(err, 'problem', None) or err}).") from None


def _config_to_argv(path: Path) -> list[str]:
    """A YAML/JSON argument file as command-line words, so it gets the command line's type checks."""
    if path.suffix == ".json":
        try:
            values = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: not valid JSON ({err}).") from None
    else:
        values = load_yaml(path)
    if not isinstance(values, dict) or not values:
        raise ValueError(f"{path} holds no arguments: write one `name: value` line per argument.")
    argv = []
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            argv += [f"--{name}", *map(str, value)]
        elif isinstance(value, dict):
            argv += [f"--{name}", json.dumps(value)]
        else:
            argv += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return argv


def parse_recipe_args(dataclass_types: Sequence[type], argv: Sequence[str] | None = None) -> tuple:
    """Parses a recipe's argument dataclasses from the command line; a first argument ending in `.yaml`/`.yml`/
    `.json` is a file of arguments, which the following command-line arguments may override."""
    parser = HfArgumentParser(dataclass_types)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].endswith((".yaml", ".yml", ".json")):
        argv = _config_to_argv(Path(argv[0])) + argv[1:]
    *parsed, unknown = parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
    if unknown:
        raise ValueError(f"Unknown argument(s) {' '.join(unknown)}: `--help` lists the recipe's arguments.")
    return tuple(parsed)


def run_recipe(main: Callable[[], Any]) -> Any:
    """Runs a recipe's `main`, turning every input or environment problem into one readable line and exit status 2.

    Input problems (unknown task, bad columns, labels or files, an occupied output dir) are raised by hf_gpt1 as
    `ValueError` / `KeyError` with the cause and the fix in the message; file-system problems as `OSError`s that name
    the path; a stopped training as `TrainingError`. A traceback through Trainer and torch would only hide them.
    `HF_GPT1_TRACEBACK=1` shows the traceback anyway.
    """
    try:
        result = main()
    except (ValueError, KeyError, OSError, TrainingError) as err:
        if os.environ.get("HF_GPT1_TRACEBACK"):
            raise
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"error: {message}\n(HF_GPT1_TRACEBACK=1 shows where it was raised)", file=sys.stderr)
        raise SystemExit(2) from None
    # Trainer leaves the process group of a multi-process launch open: wait for every rank, then close it cleanly.
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return result
