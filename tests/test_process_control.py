# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Process control (hf_gpt1.process_control): one signal policy that honours what the process inherited, a console
that survives its terminal, and runs that stop when the process that started them (a driver, a launcher) is gone.

The fast tests pin the policy in-process; the full tier (`slow`) starts real processes where the process is the
point: a `pretrain` on a pseudo-terminal that hangs up, with and without `nohup`'s ignored SIGHUP, and runs whose
driver or launcher is killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hf_gpt1 import process_control
from hf_gpt1.process_control import handled_signals, log_console_to
from tests.utils import REPO_ROOT

# ------------------------------------------------------------------------------------------------ the policy


def test_a_closed_terminal_stops_a_command_as_sigterm_does(monkeypatch, capsys):
    """SIGHUP (the terminal closed) of a process that handles it, outside training: one line, exit 128 + 1; training
    itself checkpoints on it first (the full tier's hang-up test)."""
    from hf_gpt1.commands.command_line import command_errors

    monkeypatch.setitem(process_control._INHERITED, signal.SIGHUP, signal.SIG_DFL)
    with pytest.raises(SystemExit) as stopped, command_errors():
        os.kill(os.getpid(), signal.SIGHUP)
    assert stopped.value.code == 128 + signal.SIGHUP
    assert "error: stopped by SIGHUP; nothing more was written." in capsys.readouterr().err
    assert signal.SIGHUP in handled_signals()


@pytest.mark.parametrize("log", [True, False], ids=["to the run's log", "dropped"])
def test_a_console_whose_reader_went_away_moves_to_the_runs_log_or_is_dropped(log, tmp_path):
    """A write to a console that went away (here a pipe whose reader died: EPIPE; a hung-up terminal gives EIO)
    never raises: the console moves to the run's log file, or to nowhere, and later writes go there too."""
    read, write = os.pipe()
    os.close(read)
    stream = open(write, "w", buffering=1, encoding="utf-8")  # noqa: SIM115 - closed below
    with pytest.raises(BrokenPipeError):  # what a run met until now
        stream.write("x\n")
    console = process_control._GuardedConsole(stream)
    log_console_to(tmp_path / "console.log" if log else None)
    try:
        console.write("Stopped on SIGHUP at step 4.\n")
        console.flush()
        print("Continue with: ...", file=console, flush=True)
    finally:
        log_console_to(None)
        stream.close()
    if log:
        lines = (tmp_path / "console.log").read_text().splitlines()
        assert "the terminal went away; the console continues here" in lines[0]
        assert lines[-2:] == ["Stopped on SIGHUP at step 4.", "Continue with: ..."]
    else:
        assert not (tmp_path / "console.log").exists()


@pytest.mark.parametrize(
    ("orig_argv", "argv", "expected"),
    [
        (["python3", "-m", "hf_gpt1", "pretrain", "--output_dir", "r"], ["/x/hf_gpt1/__main__.py", "pretrain",
         "--output_dir", "r"], "/venv/bin/python -m hf_gpt1 pretrain --output_dir r --resume"),
        (["python3", "recipes/glue.py", "--overwrite_output_dir", "true"], ["recipes/glue.py",
         "--overwrite_output_dir", "true"], "/venv/bin/python recipes/glue.py --resume"),
    ],
    ids=["python -m", "a script"],
)  # fmt: skip
def test_the_resume_line_is_the_command_that_started_the_run(orig_argv, argv, expected, monkeypatch):
    """`python -m hf_gpt1 …` is continued by `python -m hf_gpt1 … --resume` (its `sys.argv[0]`, `__main__.py`, does
    not run as a script), the interpreter named by its path (a bare `python` may be another one, without the run's
    packages); `--overwrite_output_dir`, which would delete the run, is dropped."""
    monkeypatch.setattr(sys, "executable", "/venv/bin/python")
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(process_control, "_launcher_argv", [])
    assert process_control.resume_command() == expected


def test_a_worker_whose_launcher_died_before_it_looked_stops(monkeypatch, capsys):
    """A launcher killed while its worker was still starting: the worker, already handed to init, stops at once
    (its watch cannot wait for a parent it never saw)."""
    import threading

    sent = threading.Event()
    me = os.getpid()
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")
    monkeypatch.setenv("GROUP_RANK", "1")
    monkeypatch.setattr(process_control, "_lost_launcher", {})
    monkeypatch.setattr(os, "getppid", lambda: 1)
    monkeypatch.setattr(os, "kill", lambda pid, signum: sent.set() if (pid, signum) == (me, signal.SIGTERM) else None)
    process_control.follow_launcher()
    assert sent.wait(timeout=30)
    assert process_control.launcher_lost() == {"machine": "1", "pid": "unknown"}
    assert "note: the launcher of machine 1 (pid unknown) is gone" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ a terminal that hangs up


def _pretrain_argv(tmp_path: Path, max_steps: int) -> tuple[list[str], Path]:
    from tests.training.test_crash_resume import _corpus

    out = tmp_path / "run"
    argv = ["--train_files", _corpus(tmp_path / "corpus.txt"), "--vocab_size", "150", "--n_layer", "2"]
    argv += ["--n_embd", "64", "--n_head", "4", "--n_positions", "64", "--max_steps", str(max_steps)]
    argv += ["--per_device_train_batch_size", "4", "--warmup_steps", "3", "--eval_steps", str(max_steps)]
    argv += ["--save_steps", "2", "--logging_steps", "1", "--report_to", "none", "--seed", "7", "--use_cpu"]
    argv += ["--dataloader_num_workers", "0", "--save_total_limit", "0", "--output_dir", out]
    return [str(word) for word in argv], out


# Started as a terminal starts a command: a session of its own whose controlling terminal is the pseudo-terminal on
# its stdin, so that closing the terminal's side hangs it up (SIGHUP, then EIO on every write to it); with `nohup`,
# SIGHUP ignored, as nohup leaves it for the command it runs.
ON_A_TERMINAL = """
import fcntl, os, signal, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
signal.signal(signal.SIGINT, signal.SIG_DFL)
if sys.argv[1] == "nohup":
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
os.execv(sys.executable, [sys.executable, "-m", "hf_gpt1", *sys.argv[2:]])
"""


class Terminal:
    """A pseudo-terminal running a command: what it printed is kept until `hang_up()` closes the terminal's side."""

    def __init__(self, argv: list[str], nohup: bool):
        self.master, slave = os.openpty()
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        env.pop(process_control.DRIVER_PID, None)
        self.process = subprocess.Popen(
            [sys.executable, "-c", ON_A_TERMINAL, "nohup" if nohup else "-", *argv],
            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.printed, self._stop = b"", threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:  # a terminal reads what is written to it, or the writer blocks once its buffer is full
        import select

        while not self._stop.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    self.printed += os.read(self.master, 65536)
                except OSError:  # the command ended and closed its side
                    return

    def hang_up(self) -> None:
        self._stop.set()
        self._reader.join()
        os.close(self.master)


def _wait_for(path: Path, process: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout  # a hang guard
    while not path.exists():
        assert process.poll() is None, f"the run ended before {path.name}"
        assert time.monotonic() < deadline, f"no {path} after {timeout} s"
        time.sleep(0.05)


@pytest.mark.slow  # the full tier: a real process and a real terminal
def test_a_run_under_nohup_trains_on_when_its_terminal_goes_away(tmp_path):
    """`nohup hf-gpt1 pretrain … &`, then the terminal closes: SIGHUP stays ignored, every write to the hung-up
    terminal fails (EIO), and the run goes on to its results, its console in the run's `console.log`."""
    from hf_gpt1.training.checkpoints import COMPLETE_MARKER
    from hf_gpt1.training.run_folder import CONSOLE_FILE, RESULTS_FILE

    argv, out = _pretrain_argv(tmp_path, max_steps=30)
    terminal = Terminal(["pretrain", *argv], nohup=True)
    _wait_for(out / "checkpoint-2" / COMPLETE_MARKER, terminal.process)
    terminal.hang_up()
    assert terminal.process.wait(timeout=300) == 0, (out / CONSOLE_FILE).read_text()[-3000:]
    assert (out / RESULTS_FILE).is_file()
    console = (out / CONSOLE_FILE).read_text()
    assert "the terminal went away; the console continues here" in console and "Traceback" not in console


@pytest.mark.slow  # the full tier: a real process and a real terminal
def test_a_hang_up_saves_a_complete_checkpoint_at_the_step_it_stopped(tmp_path):
    """Without nohup, the terminal closing (an ssh connection that drops) stops the run as SIGTERM does: the step
    finishes, a complete checkpoint is saved at it, and the run ends with 128 + 1, saying in the run's `console.log`
    (the terminal is gone) how to continue."""
    from hf_gpt1.training.checkpoints import COMPLETE_MARKER, last_complete_checkpoint
    from hf_gpt1.training.run_folder import CONSOLE_FILE, RESULTS_FILE

    argv, out = _pretrain_argv(tmp_path, max_steps=400)
    terminal = Terminal(["pretrain", *argv], nohup=False)
    _wait_for(out / "checkpoint-2" / COMPLETE_MARKER, terminal.process)
    terminal.hang_up()
    status = terminal.process.wait(timeout=300)
    console = (out / CONSOLE_FILE).read_text()
    assert status == 128 + signal.SIGHUP, console[-3000:]
    stopped = [line for line in console.splitlines() if line.startswith("Stopped on SIGHUP at step")]
    assert len(stopped) == 1 and "Traceback" not in console, console[-3000:]
    step = int(stopped[0].split("at step ")[1].split(";")[0])
    assert last_complete_checkpoint(out) == str(out / f"checkpoint-{step}")  # saved where it stopped
    assert "--resume" in console.splitlines()[-1] and not (out / RESULTS_FILE).exists()


# ------------------------------------------------------------------------------------------------ a driver that dies

RUN_UNDER_A_DRIVER = """
import os, subprocess, sys
child = subprocess.Popen(
    [sys.executable, "-c", "import time\\nfrom hf_gpt1.commands.command_line import command_errors\\n"
     "with command_errors():\\n    time.sleep(120)"],
    env={**os.environ, "HF_GPT1_DRIVER_PID": str(os.getpid())}, start_new_session=True,
)
print(child.pid, flush=True)
child.wait()
"""


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow  # the full tier (scripts/test.sh --all): kills of real processes
@pytest.mark.parametrize("kill", ["driver", "driver's process group"])
def test_a_run_stops_when_its_driver_dies_whatever_kills_it(kill, tmp_path):
    """`kill -9` of the driver, or of its whole process group (the run is a session of its own, so the group kill
    misses it): the run sees its driver gone and stops as on SIGTERM, instead of running on unseen."""
    driver = subprocess.Popen([sys.executable, "-c", RUN_UNDER_A_DRIVER], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)  # fmt: skip
    run = int(driver.stdout.readline())
    time.sleep(1.0)  # the run is up, watching
    if kill == "driver":
        os.kill(driver.pid, signal.SIGKILL)
    else:
        os.killpg(driver.pid, signal.SIGKILL)
    driver.wait(timeout=60)
    if not _gone_within(run, 60):  # a hang guard: it stops within a second of its driver
        os.kill(run, signal.SIGKILL)
        raise AssertionError("the run outlived its driver")


@pytest.mark.slow  # the full tier: a real queue and its run
def test_a_queue_under_nohup_and_its_runs_keep_sighup_ignored(tiny_lm, glue_slice, tmp_path):
    """`nohup hf-gpt1 reproduce run … &`: the hang-up reaches the driver (and, sent by hand, its run, a session of
    its own); both inherited SIGHUP ignored and keep it so, and the queue finishes its run."""
    from hf_gpt1.training.checkpoints import COMPLETE_MARKER
    from hf_gpt1.training.run_folder import RESULTS_FILE, OutputDirLock
    from tests.utils import COMMON

    out = tmp_path / "reproduce"
    argv = [
        "reproduce", "run", "--tasks", "rte", "--seeds", "0", "--conditions", "full", "--model_name_or_path",
        str(tiny_lm), "--data_dir", str(glue_slice), "--output_dir", str(out), "--max_train_samples", "96",
        "--max_eval_samples", "16", "--num_train_epochs", "8", "--save_strategy", "steps", "--save_steps", "2",
        "--eval_strategy", "no", "--do_predict", "false", *COMMON,
    ]  # fmt: skip
    nohup = "import runpy, signal; signal.signal(signal.SIGHUP, signal.SIG_IGN); " \
            "runpy.run_module('hf_gpt1', run_name='__main__')"  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with open(tmp_path / "nohup.out", "w") as console:
        driver = subprocess.Popen([sys.executable, "-c", nohup, *argv], stdout=console, stderr=subprocess.STDOUT,
                                  env=env, start_new_session=True)  # fmt: skip
        run = out / "rte" / "full" / "seed-0"
        _wait_for(run / "checkpoint-2" / COMPLETE_MARKER, driver, timeout=300)
        holder = OutputDirLock(run).in_use()  # "pid N on host, since …"
        os.killpg(driver.pid, signal.SIGHUP)  # what the terminal's hang-up sends the driver's process group
        os.kill(int(holder.split()[1]), signal.SIGHUP)  # the run is a session of its own: by hand
        status = driver.wait(timeout=300)
    printed = (tmp_path / "nohup.out").read_text()
    assert status == 0, printed[-3000:]
    assert "1 ran, 0 reused, 0 failed" in printed and (run / RESULTS_FILE).is_file()


# ------------------------------------------------------------------------------------------------ a launcher that dies


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow  # the full tier: two "machines" on the loopback (one process each), one killed, resumed, compared
def test_a_launcher_killed_stops_every_machine_naming_it_and_the_resume_is_exact(tmp_path):
    """Two machines x one process on the loopback (gloo DDP on the CPU), each with its own cache and a shared output
    folder: `kill -9` of machine 1's `accelerate launch` process group. torchrun started the workers in sessions of
    their own, which the kill misses: machine 1's worker sees its launcher gone (within `WATCH_INTERVAL_S`) and stops
    as on SIGTERM, the ranks agree at the step's end, and machine 0 stops at the same step (no wait for the collective
    timeout). A complete checkpoint is saved at it, and each machine prints one line naming machine 1, then its
    launcher's command with --resume. `--resume` on both machines continues exactly: the losses after the stop and
    the final weights are an unbroken launch's. (One launch serves both: a launcher's death seen by its own worker and
    by the other machine's.)"""
    import socket

    from hf_gpt1.training.checkpoints import COMPLETE_MARKER, last_complete_checkpoint
    from hf_gpt1.training.run_folder import RESULTS_FILE
    from tests.training.test_crash_resume import _assert_same_losses_after, _max_weight_diff
    from tests.training.test_ddp import LAUNCH_2

    argv, out = _pretrain_argv(tmp_path, max_steps=80)
    argv += ["--full_determinism", "--disable_tqdm", "true"]
    with socket.socket() as probe:  # a free port for machine 0's rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1"}
    for name in ("LOCAL_RANK", "RANK", "WORLD_SIZE", process_control.DRIVER_PID):
        env.pop(name, None)

    def machine(rank: int, *extra: str) -> subprocess.Popen:
        launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                  "--num_machines", "2", "--machine_rank", str(rank), "--main_process_ip", "127.0.0.1",
                  "--main_process_port", str(port), "--mixed_precision", "no", "--dynamo_backend", "no"]  # fmt: skip
        cache = {"HF_DATASETS_CACHE": str(tmp_path / f"cache-{rank}")}  # each machine its own cache
        console = open(tmp_path / f"machine-{rank}.log", "a")  # noqa: SIM115 - the launcher's, closed with it
        return subprocess.Popen([*launch, "-m", "hf_gpt1", "pretrain", *argv, *extra], cwd=REPO_ROOT,
                                env={**env, **cache}, stdout=console, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip

    launchers = [machine(0), machine(1)]
    _wait_for(out / "checkpoint-4" / COMPLETE_MARKER, launchers[1])
    workers = [pid for launcher in launchers for pid in _children(launcher.pid)]
    assert len(workers) == 2, workers
    os.killpg(launchers[1].pid, signal.SIGKILL)  # machine 1's launcher and its group; its worker is not in it
    survivors = [pid for pid in workers if not _gone_within(pid, 60)]  # a hang guard: well below gloo's timeout
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert not survivors, "the workers outlived the launcher: " + (tmp_path / "machine-1.log").read_text()[-3000:]
    launchers[1].wait(timeout=60)
    try:  # the claim is the workers'; machine 0's torchrun agent may still wait at its rendezvous for the dead agent
        launchers[0].wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(launchers[0].pid, signal.SIGKILL)
        launchers[0].wait(timeout=60)
    steps = set()
    for rank in (0, 1):
        lines = (tmp_path / f"machine-{rank}.log").read_text().splitlines()
        stopped = [line for line in lines if line.startswith("Stopped on SIGTERM")]
        assert len(stopped) == 1, lines[-40:]  # one machine, one line
        assert stopped[0].startswith("Stopped on SIGTERM (machine 1's launcher went away) at step "), stopped
        steps.add(int(stopped[0].split("at step ")[1].split(";")[0]))
        resume = lines[lines.index(stopped[0]) + 1].strip()
        assert "accelerate.commands.launch" in resume and resume.endswith(" --resume"), resume  # the launcher's
    assert len(steps) == 1, steps  # the ranks agreed on the step
    (step,) = steps
    assert 4 <= step < 80 and not (out / RESULTS_FILE).exists()
    assert last_complete_checkpoint(out) == str(out / f"checkpoint-{step}")  # saved where it stopped
    resumed = [machine(0, "--resume"), machine(1, "--resume")]
    assert [launcher.wait(timeout=600) for launcher in resumed] == [0, 0], (tmp_path / "machine-0.log").read_text()
    got = json.loads((out / RESULTS_FILE).read_text())
    assert max(entry["step"] for entry in got["log_history"] if "loss" in entry) == 80
    # the unbroken launch (one machine, two processes: the same two ranks) with the stopped run's BPE (BPE training
    # is not reproducible across processes)
    unbroken = tmp_path / "unbroken"
    reference = [str(unbroken) if word == str(out) else word for word in argv]
    reference += ["--tokenizer_name_or_path", str(out / f"checkpoint-{step}")]
    done = subprocess.run([sys.executable, *LAUNCH_2, "-m", "hf_gpt1", "pretrain", *reference], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected = json.loads((unbroken / RESULTS_FILE).read_text())
    _assert_same_losses_after(step, got["log_history"], expected["log_history"])
    assert _max_weight_diff(unbroken, out) < 1e-6


@pytest.mark.parametrize(
    ("launcher", "expected"),
    [
        (["/venv/bin/python", "-m", "accelerate.commands.launch", "recipes/glue.py", "--task", "rte"],
         "/venv/bin/python -m accelerate.commands.launch recipes/glue.py --task rte --resume"),
        (["torchrun", "--nproc_per_node", "2", "train.py"], "/venv/bin/python recipes/glue.py --task rte --resume"),
    ],
    ids=["its launcher's command", "a launcher that does not end with the worker's arguments"],
)  # fmt: skip
def test_a_workers_resume_line_repeats_its_launcher_or_else_its_own_command(launcher, expected, monkeypatch):
    """A worker's arguments once: after its launcher's words where that command ends with them, else after the
    worker's own script (never the launcher's words followed by the arguments again)."""
    monkeypatch.setattr(sys, "executable", "/venv/bin/python")
    monkeypatch.setattr(sys, "argv", ["recipes/glue.py", "--task", "rte"])
    monkeypatch.setattr(process_control, "_launcher_argv", launcher)
    assert process_control.resume_command() == expected
