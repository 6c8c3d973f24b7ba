# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Process control: what each signal does, what a run does when the process that started it goes away, where its
console goes when the terminal does, and the line that continues a stopped run. Every command, the training loop
(`GracefulStop`) and `reproduce run` take their policy from here, and from nowhere else.

* **Stop signals.** SIGTERM (schedulers, `kill`), SIGINT (Ctrl-C) and SIGHUP (a closed terminal) stop a command: in
  training after the current step and a complete checkpoint, elsewhere at once with one line. A signal the process
  *inherited as ignored* stays ignored, for the process and the runs it starts: `nohup` ignores SIGHUP, and a shell
  ignores SIGINT in its background jobs ([`handled_signals`]).
* **Parents that go away.** A run started by `hf-gpt1 reproduce run` ([`DRIVER_PID`]), and a worker started by
  `torchrun` / `accelerate launch` (its launcher, the worker's parent), watch their parent: once it is gone, whatever
  killed it (`kill -9` of its process group included: both start their children in sessions of their own, which a
  group kill misses), the run stops as on SIGTERM. The watch looks every [`WATCH_INTERVAL_S`] seconds.
* **A terminal that went away.** A write to the console that fails because the terminal hung up (EIO), the pipe's
  reader died (EPIPE) or the descriptor is gone never ends the run: from then on that console goes to the run's log
  file (`console.log` in its output folder, once the run has claimed it) or is dropped.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "DRIVER_PID",
    "STOP_SIGNALS",
    "WATCH_INTERVAL_S",
    "Terminated",
    "controlled",
    "driver_of",
    "follow_driver",
    "follow_launcher",
    "handled_signals",
    "install_stop_handler",
    "launcher_lost",
    "log_console_to",
    "restore_handlers",
    "resume_command",
]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""The signals that stop a command (training finishes its step and checkpoints first)."""

# What each stop signal was when this module was first imported: before any handler of this package, so what the
# process inherited (exec keeps an ignored signal ignored; a handled one is reset to the default).
_INHERITED = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

WATCH_INTERVAL_S = 0.5
"""How often a run looks whether its driver or launcher is still there: it notices within this time."""

DRIVER_PID = "HF_GPT1_DRIVER_PID"
"""Set by a driver (`hf-gpt1 reproduce run`) for the runs it starts, each in a session of its own: a run whose
driver is gone, whatever killed it, stops as on SIGTERM (a checkpoint, then the end), instead of training on unseen."""

_LAUNCHED = "TORCHELASTIC_RUN_ID"  # torchrun (so `accelerate launch --multi_gpu`) sets it for each worker it starts


def handled_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> tuple[int, ...]:
    """The stop signals this process handles: all of `signals` but those it inherited as ignored (`nohup`'s SIGHUP,
    a background job's SIGINT), which stay ignored."""
    return tuple(signum for signum in signals if _INHERITED.get(signum) is not signal.SIG_IGN)


def install_stop_handler(handler: Callable[[int, Any], None], signals: tuple[int, ...] = STOP_SIGNALS) -> dict:
    """Installs `handler` for the [`handled_signals`] among `signals` and returns what it replaced (for
    [`restore_handlers`]); nothing in a thread other than the main one, to which Python delivers signals."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, handler) for signum in handled_signals(signals)}


def restore_handlers(previous: dict) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


class Terminated(BaseException):
    """SIGTERM or SIGHUP (a closed terminal) outside training (training handles its own: `GracefulStop`)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, frame) -> None:
    raise Terminated(signum)


# ------------------------------------------------------------------------------------------------ parents that go away

_lost_launcher: dict[str, str] = {}  # set once this worker's launcher is gone: {"machine": ..., "pid": ...}


def launcher_lost() -> dict[str, str]:
    """`{"machine", "pid"}` of this worker's launcher once it has gone away; empty while it is there (or the process
    was not started by a launcher)."""
    return dict(_lost_launcher)


def _watch_parent(parent: int, gone: Callable[[], str], name: str) -> None:
    """A daemon thread that sends this process SIGTERM once its parent is no longer `parent` (it died, and this
    process was handed to another parent), at once if that happened already; `gone()` says so on stderr first."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_INTERVAL_S)
        print(gone(), file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name=name, daemon=True).start()


def follow_driver() -> None:
    """Under a driver ([`DRIVER_PID`]): this run stops as on SIGTERM once its driver is gone."""
    driver = os.environ.get(DRIVER_PID)
    if driver:
        note = f"note: the driver (pid {driver}) is gone: this run stops as on SIGTERM."
        _watch_parent(int(driver), lambda: note, "follow-driver")


def driver_of(pid: int) -> int | None:
    """The driver ([`DRIVER_PID`]) that started the process `pid`: the driver's pid, 0 for a process that no driver
    started (a run started by hand), or None where this machine cannot tell (another user's process, no /proc)."""
    try:
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    prefix = f"{DRIVER_PID}=".encode()
    driver = next((entry[len(prefix) :] for entry in environment if entry.startswith(prefix)), b"")
    return int(driver) if driver.isdigit() else 0


def follow_launcher() -> None:
    """Under torchrun / `accelerate launch` (a worker of a multi-process launch, whose parent is its machine's
    launcher): this worker stops as on SIGTERM once its launcher is gone. The ranks agree on the stop at the step's
    end (`GracefulStop`), so every machine checkpoints and stops at the same step, naming the machine that went."""
    if _LAUNCHED not in os.environ:
        return
    launcher, machine = os.getppid(), os.environ.get("GROUP_RANK", "0")
    if launcher == 1:  # handed to init already: the launcher died while this worker started, before it could look
        launcher = -1  # no process's parent: the watch finds it gone at once
    _launcher_argv[:] = _launcher_command(launcher) if launcher > 0 else []

    def gone() -> str:
        _lost_launcher.update(machine=machine, pid=str(launcher) if launcher > 0 else "unknown")
        return (
            f"note: the launcher of machine {machine} (pid {_lost_launcher['pid']}) is gone: its worker (rank "
            f"{os.environ.get('RANK', '?')}) stops as on SIGTERM."
        )

    _watch_parent(launcher, gone, "follow-launcher")


# ------------------------------------------------------------------------------------------------ the console

_GONE = (errno.EIO, errno.EPIPE, errno.ENXIO, errno.EBADF)  # a hung-up terminal, a dead reader, a closed descriptor
_console_log: Path | None = None


def log_console_to(path: str | os.PathLike | None) -> None:
    """Where the console goes if the terminal goes away from now on: the run's log file, or (None) nowhere."""
    global _console_log
    _console_log = None if path is None else Path(path)


def _move_console(fd: int) -> None:
    """Points the descriptor `fd` (1 or 2) at the run's log file, or at /dev/null, so that every later write to it,
    Python's and a C library's alike, lands there instead of failing."""
    target = os.devnull
    if _console_log is not None and _console_log.parent.is_dir():
        target = str(_console_log)
    try:
        new = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        target, new = os.devnull, os.open(os.devnull, os.O_WRONLY)
    if target != os.devnull:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(new, f"--- {stamp}: the terminal went away; the console continues here ---\n".encode())
    os.dup2(new, fd)
    os.close(new)


class _GuardedConsole:
    """`sys.stdout` / `sys.stderr` whose writes never fail for a console that went away ([`_move_console`])."""

    def __init__(self, stream: Any):
        self._stream = stream
        try:
            self._fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's capture): dropped
            self._fd = None
        self._moved = False

    def _again(self, call: Callable[[], Any], err: Exception, fallback: Any) -> Any:
        """After a failed write: a console that went away moves ([`_move_console`]), once, and the call is tried
        again there; what still fails (a full disk under a redirection, say) is dropped, never the run's end."""
        gone = not isinstance(err, OSError) or err.errno in _GONE
        if gone and self._fd is not None and not self._moved:
            self._moved = True
            with contextlib.suppress(OSError, ValueError):
                _move_console(self._fd)
                return call()
        return fallback

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as err:  # ValueError: the stream was closed
            return self._again(lambda: self._stream.write(text), err, len(text))

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as err:
            self._again(self._stream.flush, err, None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _guard_console() -> Callable[[], None]:
    """Guards `sys.stdout` and `sys.stderr`; returns what puts them back."""
    guarded = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, _GuardedConsole):
            guarded[name] = (stream, _GuardedConsole(stream))
            setattr(sys, name, guarded[name][1])

    def unguard() -> None:
        for name, (stream, guard) in guarded.items():
            if getattr(sys, name) is guard:  # unless something replaced it meanwhile
                setattr(sys, name, stream)

    return unguard


# ------------------------------------------------------------------------------------------------ a command's life


_launcher_argv: list[str] = []  # the command line of this worker's launcher, read while it is alive


def _launcher_command(pid: int) -> list[str]:
    """The launcher's command line (`accelerate launch …`, `torchrun …`), as the worker's resume line must repeat it;
    empty where /proc does not say."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []
    return [word.decode(errors="replace") for word in words if word]


def _this_command() -> list[str]:
    """The command that started this process: its launcher's for a worker of a launch, `python -m <module> …` for a
    module (whose `sys.argv[0]` is its `__main__.py`, which does not run as a script), else `python <argv>`."""
    if _launcher_argv:
        words = list(_launcher_argv)
    else:
        original = getattr(sys, "orig_argv", [])
        if sys.argv and sys.argv[0].endswith("__main__.py") and "-m" in original[:-1]:
            words = [sys.executable, "-m", original[original.index("-m") + 1], *sys.argv[1:]]
        else:
            words = [sys.executable, *sys.argv]
    return words  # the interpreter by its path: a bare `python` may be another one, without this run's packages


def resume_command() -> str:
    """The command line that started this process with `--resume` (and without `--overwrite_output_dir`, which would
    delete the run, however it was spelt: the parse finds both, `training.parse.without_arguments`): what continues a
    stopped run. A worker of a multi-process launch gives its launcher's. After an argument file,
    `--overwrite_output_dir false` overrides the file's."""
    from .training.arguments import RecipeTrainingArguments
    from .training.parse import ARGUMENT_FILE_SUFFIXES, without_arguments

    words, given = _this_command(), sys.argv[1:]
    if given and words[-len(given) :] == given:
        program = words[: len(words) - len(given)]
    else:  # a launcher's command that does not end with this process's arguments: this process's own command
        program = words if not given else [sys.executable, sys.argv[0]]
    rest = without_arguments(given, ("resume", "overwrite_output_dir"), (RecipeTrainingArguments,))
    after_file = any(word.endswith(ARGUMENT_FILE_SUFFIXES) and Path(word).is_file() for word in rest[:2])
    ending = ["--overwrite_output_dir", "false", "--resume"] if after_file else ["--resume"]
    return shlex.join([*program, *rest, *ending])


@contextlib.contextmanager
def controlled() -> Iterator[None]:
    """A command's life under the policy: the stop signals it handles end it with one line (training checkpoints
    first, and the line says how to continue), its console survives the terminal, and it follows its driver or
    launcher.

    Raises:
        `SystemExit`: 128 + the signal's number, after printing the command that continues a run that checkpointed
            (`TrainingInterrupted`) or, at any other moment, that nothing more was written.
    """
    from .errors import TrainingInterrupted

    previous = install_stop_handler(_terminate, (signal.SIGTERM, signal.SIGHUP))  # SIGINT: KeyboardInterrupt
    unguard = _guard_console()
    follow_driver()
    follow_launcher()
    try:
        yield
    except TrainingInterrupted as err:
        if os.environ.get("LOCAL_RANK", "0") == "0":  # one line per machine of a launch, not one per process
            print(f"{err} Continue with:\n  {resume_command()}", file=sys.stderr, flush=True)
        raise SystemExit(128 + err.signum) from None
    except (KeyboardInterrupt, Terminated) as err:
        signum = err.signum if isinstance(err, Terminated) else signal.SIGINT
        name = signal.Signals(signum).name if isinstance(err, Terminated) else "Ctrl-C"
        print(f"error: stopped by {name}; nothing more was written.", file=sys.stderr, flush=True)
        raise SystemExit(128 + signum) from None
    finally:
        restore_handlers(previous)
        with contextlib.suppress(OSError, ValueError):  # what is still buffered goes where the console now goes
            sys.stdout.flush()
            sys.stderr.flush()
        unguard()
        log_console_to(None)
