# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The folder of a run, and its one owner ([`RunFolder`]): its layout (every file name a run writes there is declared
here; a checkpoint's own marker in `checkpoints`), its life, its checkpoints, its results, and what the card,
the report and `reproduce` read back. Every other module asks a `RunFolder` where a run's file is and how to read it.

A run first checks its folder ([`RunFolder.check`], which changes nothing), then checks every input, and only then
claims the folder: `with run.claimed(args, identity):` locks it for the life of the run, checks it again under the
lock, empties it for `--overwrite_output_dir` and records the run's identity in `hf_gpt1_run.json`. A failed start
therefore leaves the folder as it was, and the corrected command is not refused as "another run". The lock keeps a
second process (a second `--resume`, say) out; the kernel releases it when the process ends, crashes or is killed.

Checkpoints are written by Trainer into `checkpoint-N`; the owner marks them complete, rotates them (asked by
`GPT1Trainer`'s own callback, for its own folder only: nothing in `transformers.trainer` is replaced) and picks the one
a resume continues from. The files it reads back (the identity, the results) go through the strict JSON reader: one
meaning per file, a key given twice refused.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import shutil
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from transformers import TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from ..data.atomic import remove_temporaries, write_json_atomic
from ..data.fingerprint import changed_input, comparable_paths, input_digests
from ..data.strict_files import StrictJSONError, load_strict
from ..errors import TrainingError
from ..process_control import log_console_to
from . import checkpoints

try:  # POSIX advisory locks; elsewhere runs are not locked (and say so)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

logger = logging.getLogger(__name__)

RUN_FILE = "hf_gpt1_run.json"
LOCK_FILE = ".hf_gpt1.lock"
RESULTS_FILE = "all_results.json"
TASK_FILE = "task.json"  # the declaration of a task that is not built in (hf_gpt1.data.tasks.task_from_file)
CONSOLE_FILE = "console.log"  # where the console goes once the terminal has gone away (hf_gpt1.process_control)
CURVES_FILE = "curves.png"  # the learning curves (hf_gpt1.training.curves), drawn once the results are written

__all__ = [
    "CONSOLE_FILE",
    "CURVES_FILE",
    "LOCK_FILE",
    "RESULTS_FILE",
    "RUN_FILE",
    "TASK_FILE",
    "OutputDirLock",
    "RunFolder",
    "check_output_dir",
    "check_planned_inputs",
    "check_recorded_digests",
    "claimed",
    "resume_checkpoint",
    "run_identity",
]


def run_identity(recipe: str, model_args: Any, data_args: Any, seed: int, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two runs the same: `--resume` requires it unchanged, and a folder holding another run is refused.

    Args:
        recipe, model_args, data_args, seed: The run's arguments.
        inputs: `{flag: path or paths}` of the run's local inputs (data files, data and model folders), recorded by
            the SHA-256 of their contents, so that a file changed in place is noticed whatever its path and time.
    """
    return {
        "recipe": recipe,
        "model": comparable_paths(dataclasses.asdict(model_args)),
        "data": comparable_paths(dataclasses.asdict(data_args)),
        "seed": seed,
        "inputs": input_digests(inputs, ignore=(RUN_FILE, RESULTS_FILE)),
    }


def check_recorded_digests(identity: dict[str, Any], digests: Mapping[str, str]) -> None:
    """Refuses a run whose inputs, as read (`{path: sha256}` taken from the bytes read), are not those its identity
    records: a file changed between the run's start and its reading."""
    digests = {os.path.abspath(path): digest for path, digest in digests.items()}
    for flag, files in identity.get("inputs", {}).items():
        for path, recorded in files.items():
            if path in digests and digests[path] != recorded:
                raise ValueError(
                    f"{flag} {path} changed while this run was reading it (its content differs from when the run "
                    "started): nothing was trained on it. Run the same command again once the file is final."
                )


def check_planned_inputs(identity: dict[str, Any]) -> None:
    """Refuses a run whose recorded inputs (model files, tokenizer, data files) changed, or went, after it was
    planned: what was planned is what runs."""
    if changed := changed_input(identity.get("inputs", {})):
        raise ValueError(
            f"{changed} changed after this run was planned (its content differs, or it is gone): nothing was trained "
            "on it. Run the same command again to plan the run with the file as it is now."
        )


def _differences(previous: dict[str, Any], run: dict[str, Any]) -> str:
    """What differs between two run identities, in words: the changed input files first, then the arguments."""
    changed = [
        f"{flag} {path} has changed since that run started (its content differs)"
        for flag, files in run.get("inputs", {}).items()
        for path, digest in files.items()
        if previous.get("inputs", {}).get(flag, {}).get(path, digest) != digest
    ]
    if changed:
        return "; ".join(changed)

    def flat(value: Any, prefix: str = "") -> dict[str, Any]:
        if not isinstance(value, dict):
            return {prefix: value}
        return {k: v for key, item in value.items() for k, v in flat(item, f"{prefix}.{key}".lstrip(".")).items()}

    def short(value: Any) -> str:  # a file's digest, to tell two versions apart, not to be read
        digest = isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value)
        return f"sha256 {value[:8]}…" if digest else repr(value)

    old, new = flat(previous), flat(run)
    # the arguments first, then the input files (of which a run may record thousands)
    keys = sorted(old.keys() | new.keys(), key=lambda key: (key.startswith("inputs."), key))
    keys = [key for key in keys if old.get(key) != new.get(key)]
    return "; ".join(f"{key}: {short(old.get(key))} then, {short(new.get(key))} now" for key in keys[:3])


def _in_use(folder: Path, holder: str) -> ValueError:
    return ValueError(
        f"--output_dir {folder} is in use by a running run ({holder}); wait for it to end, stop it, or choose another "
        "--output_dir."
    )


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
        try:  # a link in its place is never followed: the run would write outside its folder
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as err:
            if not self.path.is_symlink():
                raise
            raise ValueError(
                f"--output_dir {self.path.parent}: {LOCK_FILE} is a symbolic link ({err.strerror}); remove it, it is "
                "not hf_gpt1's lock file."
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise _in_use(self.path.parent, holder) from None
        os.ftruncate(fd, 0)
        os.write(
            fd, f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode()
        )
        self._fd = fd

    def in_use(self) -> str | None:
        """Who holds the lock (the holder's record), or None when no process does; creates nothing."""
        if fcntl is None or self._fd is not None or self.path.is_symlink() or not self.path.is_file():
            return None
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.read(fd, 4096).decode("utf-8", "replace").strip() or "another process"
        finally:
            os.close(fd)
        return None

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


def _read_run_file(folder: Path, comparable: bool = True) -> Any:
    """The identity recorded in `folder` (None: none recorded), read strictly. `comparable`: paths recorded as
    spelt, before their spellings were made one, are read as they are spelt now (to compare it with a run's)."""
    marker = folder / RUN_FILE
    if not marker.is_file():
        return None
    try:
        identity = load_strict(marker)
        _check_shape(marker, identity, objects=("model", "data", "inputs", "pinned"))
    except StrictJSONError as err:
        raise ValueError(f"{marker} is damaged ({err.reason}): it records which run owns {folder}.") from None
    if comparable:
        for part in ("model", "data"):
            if isinstance(identity.get(part), dict):
                identity[part] = comparable_paths(identity[part])
        if isinstance(identity.get("inputs"), dict):
            identity["inputs"] = {
                flag: {os.path.abspath(path): digest for path, digest in files.items()}
                for flag, files in identity["inputs"].items()
            }
    return identity


def _check_shape(
    path: Path, record: Any, objects: tuple[str, ...] = (), lists: tuple[str, ...] = (), texts: tuple[str, ...] = ()
) -> None:
    """Refuses a run file that is not the object a run writes (`StrictJSONError`, its reason said): `objects`,
    `lists` and `texts` name the keys that, when present, hold an object, a list, a string."""
    if not isinstance(record, dict):
        raise StrictJSONError(path, "it is not a JSON object")
    for keys, kind, word in ((objects, dict, "an object"), (lists, list, "a list"), (texts, str, "a string")):
        for key in keys:
            if key in record and not isinstance(record[key], kind):
                raise StrictJSONError(path, f"its {key!r} is not {word}")


def check_output_dir(output_dir: str | os.PathLike, run: dict[str, Any], overwrite: bool, resume: bool) -> None:
    """Refuses an output folder this run may not use, without changing anything.

    The run's identity (`run`: recipe, task, model, data — whatever makes its results comparable) is stored in
    `hf_gpt1_run.json`. A folder that holds another run, or files of unknown origin, is an error unless `overwrite`;
    resuming requires the same identity; the folder (or the nearest existing parent) must be writable, and no running
    process may hold its lock.
    """
    folder = Path(output_dir)
    holder = OutputDirLock(folder).in_use()
    if holder:
        raise _in_use(folder, holder)
    _check_contents(folder, run, overwrite, resume)


def _check_contents(folder: Path, run: dict[str, Any], overwrite: bool, resume: bool) -> None:
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"--output_dir {folder} is a file; give a folder (it is created when missing).")
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"--output_dir {folder}: {existing} is not writable; choose a folder you can write to.")
    _refuse_links_out(folder)
    if folder.is_dir() and _contents(folder):
        try:
            previous = _read_run_file(folder)
        except ValueError as err:  # what claiming the folder needs: the fix
            raise ValueError(
                f"{str(err).removesuffix('.')}. Pass --overwrite_output_dir to start afresh there, or choose another "
                "--output_dir."
            ) from None
        if overwrite:
            _refuse_deleting_inputs(folder, run)
            return
        if resume:
            if previous != run:
                raise ValueError(
                    f"--resume: {folder} holds a different run than the one asked for: "
                    f"{_differences(previous or {}, run)}. Resume with the original arguments and data, or start "
                    "afresh with --overwrite_output_dir (or another --output_dir)."
                )
            return
        fix = (
            "Pass --overwrite_output_dir to replace it, --resume to continue the same run, or choose another "
            "--output_dir"
        )
        if previous == run:
            raise ValueError(
                f"Output directory {folder} already holds this same run (pass --resume to continue it). {fix}."
            )
        if not previous:
            raise ValueError(f"Output directory {folder} already holds files that are not from an hf_gpt1 run. {fix}.")
        # the fix first; what differs after it, in a few words (the run records are digests, not for reading)
        raise ValueError(
            f"Output directory {folder} already holds another run (recipe {previous.get('recipe')!r}, seed "
            f"{previous.get('seed')}). {fix}. It differs from this one in: {_differences(previous, run)}."
        )
    if resume:
        raise ValueError(f"--resume: {folder} holds no run to resume; drop --resume to start one.")


def _refuse_links_out(folder: Path) -> None:
    """A symbolic link in the folder that leads out of it would have the run write there: refused."""
    if not folder.is_dir():
        return
    inside = folder.resolve()
    for path in folder.iterdir():
        if path.is_symlink() and not path.resolve().is_relative_to(inside):
            raise ValueError(
                f"--output_dir {folder}: {path.name} is a symbolic link to {path.resolve()}, outside the folder, and "
                "the run would write through it; remove the link or choose another --output_dir."
            )


def _refuse_deleting_inputs(folder: Path, run: dict[str, Any]) -> None:
    """`--overwrite_output_dir` empties the folder: never when the run's own inputs are inside it."""
    inside = folder.resolve()
    for flag, files in run.get("inputs", {}).items():
        for path in files:
            if Path(path).resolve().is_relative_to(inside):
                raise ValueError(
                    f"--overwrite_output_dir would delete {flag} {path}, which is inside --output_dir {folder}: move "
                    "it out, or choose another --output_dir."
                )


def claimed(args: TrainingArguments, run: dict[str, Any]) -> AbstractContextManager[None]:
    """Holds `args.output_dir` for the body of the `with`: locks it, checks it again under the lock, empties it for
    `--overwrite_output_dir` and records `run` (unless `--resume`); the lock is released on exit, however the body
    ends. Only the main process claims; the others enter the body directly."""
    return RunFolder.of(args).claimed(args, run)


@contextmanager
def _claimed(folder: Path, args: TrainingArguments, run: dict[str, Any]) -> Iterator[None]:
    if args.process_index != 0:
        yield
        return
    lock = OutputDirLock(folder)
    lock.acquire()
    try:
        folder = lock.path.parent
        _check_contents(folder, run, args.overwrite_output_dir, args.resume)
        remove_temporaries(folder)  # what a killed writer left (never a final file: those are renamed into place)
        if args.overwrite_output_dir:
            for path in _contents(folder):  # everything but the lock this run holds
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        if not args.resume:
            write_json_atomic(folder / RUN_FILE, run)
        log_console_to(folder / CONSOLE_FILE)  # should the terminal go away, from now until the process ends
        try:
            yield
        except Exception as err:
            # A start that failed having written nothing but its identity (the Trainer refusing its optimizer or
            # schedule in `train()`) leaves the folder as it found it, so the corrected command starts as given. A
            # stop (a signal) or a TrainingError keeps it: `--resume` continues the run, as their messages say.
            wrote_nothing = [path.name for path in _contents(folder)] == [RUN_FILE]
            if wrote_nothing and not args.resume and not isinstance(err, TrainingError):
                (folder / RUN_FILE).unlink()
            raise
    finally:
        lock.release()


class RunFolder:
    """A run's folder: where each of its files is, its claim, its checkpoints, its results, and their reading.

    Build it from the folder (`RunFolder(path)`) or from a run's arguments (`RunFolder.of(args)`); it holds nothing
    but the path, so any module may build its own for the same folder. Reading a file that is absent gives None;
    one that is damaged (not JSON, a key given twice) is a `ValueError` naming it.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    @classmethod
    def of(cls, args: Any) -> RunFolder:
        """The folder of the run that `args` (its training arguments) configure."""
        return cls(args.output_dir)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # the layout
    @property
    def run_file(self) -> Path:
        """The run's identity ([`run_identity`]), written when the folder is claimed."""
        return self.path / RUN_FILE

    @property
    def lock_file(self) -> Path:
        return self.path / LOCK_FILE

    @property
    def results_file(self) -> Path:
        """The results, written last: the run is complete once it is there ([`finished`])."""
        return self.path / RESULTS_FILE

    @property
    def task_file(self) -> Path:
        """The declaration of a task that is not built in, beside the model it was fine-tuned for."""
        return self.path / TASK_FILE

    @property
    def console_file(self) -> Path:
        return self.path / CONSOLE_FILE

    @property
    def curves_file(self) -> Path:
        return self.path / CURVES_FILE

    def checkpoint(self, step: int) -> Path:
        """The folder Trainer saves the checkpoint of update `step` in."""
        return self.path / f"{PREFIX_CHECKPOINT_DIR}-{step}"

    # its life: check, claim, lock
    def check(self, identity: dict[str, Any], overwrite: bool, resume: bool) -> None:
        """Refuses a folder this run may not use, changing nothing ([`check_output_dir`])."""
        check_output_dir(self.path, identity, overwrite, resume)

    def claimed(self, args: TrainingArguments, identity: dict[str, Any]) -> AbstractContextManager[None]:
        """Holds the folder for the body of the `with` ([`claimed`]); `args` say how (the process, `--resume`,
        `--overwrite_output_dir`)."""
        return _claimed(self.path, args, identity)

    @property
    def lock(self) -> OutputDirLock:
        return OutputDirLock(self.path)

    # checkpoints
    def mark_complete(self, step: int, elapsed_s: float | None = None, batch: dict[str, int] | None = None) -> None:
        """Records checkpoint `step` as complete, once all its files are on disk ([`checkpoints.mark_complete`])."""
        checkpoints.mark_complete(self.checkpoint(step), step, elapsed_s=elapsed_s, batch=batch)

    def complete_checkpoints(self) -> list[Path]:
        """The checkpoints that carry a completion marker, oldest first (not verified)."""
        return checkpoints.complete_checkpoints(self.path)

    def last_complete_checkpoint(self) -> str | None:
        """The newest checkpoint written completely and still intact, or None (newer ones skipped with a warning)."""
        return checkpoints.last_complete_checkpoint(self.path)

    def plan_lines(self, args: Any, about: str = "") -> list[str]:
        """A plan's lines for what the run of `args` will do here (`about`: what to add of the folder): write it,
        emptying it first (`--overwrite_output_dir` on a folder holding something), resume in it (from which
        checkpoint), push it to the Hub."""
        emptied = args.overwrite_output_dir and self.path.is_dir() and any(self.path.iterdir())
        emptying = ", emptying what it holds first (--overwrite_output_dir)" if emptied else ""
        lines = [f"  writes {self.path}{about}{emptying}"]
        if args.resume:
            lines.append(f"  resumes from {self.resumable_checkpoint() or 'the start (no complete checkpoint yet)'}")
        if args.push_to_hub:  # transformers' Trainer pushes; its repository is hub_model_id, else the folder's name
            lines.append(f"  pushes to the Hub as {args.hub_model_id or self.path.absolute().name} (--push_to_hub)")
        return lines

    def resumable_checkpoint(self) -> str | None:
        """The checkpoint `--resume` would continue from, found without saying anything (what the run reads before it
        resumes: pre-training's BPE); [`resume_checkpoint`] says what it skipped."""
        return checkpoints.usable_checkpoint(self.path, load_states=True, log=False)[0]

    def rotate(self, limit: int | None, keep: str | os.PathLike | None = None) -> None:
        """Deletes the oldest checkpoints beyond `limit`, never the newest complete one nor `keep` (the best one)."""
        checkpoints.rotate_checkpoints(self.path, limit, keep=keep)

    def resume_checkpoint(self, args: Any, train_dataset: Any = None, unit: str = "rows") -> str | None:
        """The checkpoint `--resume` continues from (None: no resume, or no complete checkpoint yet), said on the main
        process with every newer checkpoint it did not use and why (a file changed since it was completed, or its
        states would not all have loaded). Every command resumes through it (pre-training and fine-tuning).

        A launch that batches otherwise than the one that wrote the checkpoint (another number of processes, rows per
        device or accumulation: [`~checkpoints.batch_of`]) is compared with it here, before the run writes anything:
        the same global batch keeps the data position exact, and the start says so; another one moves it, which is
        refused under a learning-rate schedule planned in updates (every schedule but `constant`) in one line naming
        the batch flags that restore the recorded global batch.

        `train_dataset`: the run's training set (its length places the epoch boundaries; None or a stream: one
        endless epoch); `unit`: what its rows are called ("windows" in pre-training).
        """
        if not args.resume:
            return None
        checkpoint, skipped = checkpoints.usable_checkpoint(self.path, load_states=True, log=False)
        lines = checkpoints.batch_change(args, Path(checkpoint), train_dataset, unit) if checkpoint else []
        if checkpoint and checkpoints.unverified(checkpoint):
            lines.insert(
                0,
                f"{Path(checkpoint).name}'s marker records no SHA-256 digests (written by an earlier version, or "
                "edited): its files' sizes were checked, their contents could not be.",
            )
        if args.process_index == 0:
            print(f"Resuming from {checkpoint or 'the start (no complete checkpoint yet)'}", flush=True)
            for line in skipped:
                print(f"  warning: {line}", flush=True)
            for line in lines:
                print(f"  note: {line}", flush=True)
        return checkpoint

    # results
    @property
    def finished(self) -> bool:
        """Whether the run completed (its results are written: from there nothing is trained again)."""
        return self.results_file.is_file()

    def write_results(self, results: dict[str, Any]) -> Path:
        """Writes the results, whole or not at all: from here the run is complete."""
        return write_json_atomic(self.results_file, results)

    def write_task(self, declaration: dict[str, Any]) -> Path:
        """Writes the declaration of the run's task (one of its user's), whole or not at all, beside the model."""
        return write_json_atomic(self.task_file, declaration)

    # what the card, the report and `reproduce` read
    def identity(self) -> dict[str, Any] | None:
        """The run identity as recorded, or None when the folder records none."""
        return _read_run_file(self.path, comparable=False)

    def results(self) -> dict[str, Any] | None:
        """The run's results, or None when it has not finished."""
        if not self.finished:
            return None
        try:
            results = load_strict(self.results_file)
            # the records a reader takes apart: the metrics of each split scored, the training's, the arguments
            evaluated = results.get("evaluated_rows") if isinstance(results, dict) else None
            splits = tuple(evaluated) if isinstance(evaluated, dict) else ()
            records = ("train", "validation", "hyperparameters", "evaluated_rows", "best_metric", *splits)
            lists, texts = ("log_history", "warnings"), ("task", "data_sha256", "best_checkpoint")
            _check_shape(self.results_file, results, objects=records, lists=lists, texts=texts)
        except StrictJSONError as err:
            where = f"{self.results_file}{f':{err.line}' if err.line else ''}"
            raise ValueError(
                f"{where} is damaged ({err.reason}): it records the run's results; restore it, or run again with "
                "--overwrite_output_dir."
            ) from None
        return results


def resume_checkpoint(args: Any, train_dataset: Any = None, unit: str = "rows") -> str | None:
    """The checkpoint the run of `args` resumes from: [`RunFolder.resume_checkpoint`] of its folder."""
    return RunFolder.of(args).resume_checkpoint(args, train_dataset, unit)
