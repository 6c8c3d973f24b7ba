# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Crash safety: `kill -9` a real recipe process mid-training, `--resume` it, and end where an unbroken run ends.

Each test runs the recipe three ways with a tiny model on CPU: unbroken (in-process), killed with SIGKILL as soon as a
mid-run checkpoint's completion marker exists (a subprocess running `recipes/*.py`), then resumed from the newest
complete checkpoint (in-process). Before resuming, a newer checkpoint folder without a marker is planted, standing for
a checkpoint the kill interrupted half-way: resuming must ignore it. Final metrics and every weight must match.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetensors.torch import load_file

from hf_gpt1.training.checkpoints import COMPLETE_MARKER, last_complete_checkpoint
from tests.utils import REPO_ROOT, glue_argv, run_command

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("restore_determinism"),
]  # the full tier: kills and signals to real runs


WORDS = "the cat dog sat on a mat ran far away from home and then came back to eat some food quietly".split()


def _corpus(path: Path, n_lines: int = 400) -> Path:
    lines = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(8 + i % 5)) for i in range(n_lines)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _kill_at_checkpoint(command: list[str], output_dir: Path, step: int, timeout: float = 240) -> None:
    """Starts `command`, SIGKILLs it once `checkpoint-<step>` is complete, and checks it had not finished."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    marker = output_dir / f"checkpoint-{step}" / COMPLETE_MARKER
    deadline = time.monotonic() + timeout
    try:
        while not marker.exists():
            if process.poll() is not None:
                pytest.fail(f"the run ended before checkpoint-{step}: {process.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"no checkpoint-{step} after {timeout} s")
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    assert not (output_dir / "all_results.json").exists(), "the run finished before the kill: nothing was tested"


def _plant_half_written_checkpoint(output_dir: Path) -> str:
    """A newer checkpoint folder whose write was cut short: weights half there, no trainer state, no marker."""
    before = last_complete_checkpoint(output_dir)
    assert before is not None
    half = output_dir / "checkpoint-99999"
    half.mkdir()
    (half / "model.safetensors").write_bytes(b"\x00" * 100)
    assert last_complete_checkpoint(output_dir) == before
    return before


def _assert_same_losses_after(step: int, got: list[dict], expected: list[dict]) -> None:
    """Every training loss logged after the resume point matches the unbroken run's at the same step. (`train_loss`,
    Trainer's mean over the whole run, only averages the steps a process ran, so it differs by design.)"""
    losses = [
        {e["step"]: e["loss"] for e in history if "loss" in e and e["step"] > step} for history in (got, expected)
    ]
    assert losses[0] and losses[0].keys() == losses[1].keys()
    for key in losses[0]:
        assert losses[0][key] == pytest.approx(losses[1][key], rel=1e-5), key


def _max_weight_diff(a: Path, b: Path) -> float:
    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert wa.keys() == wb.keys()
    diff = max((wa[k].double() - wb[k].double()).abs().max().item() for k in wa)
    print(f"max |weight difference| unbroken vs killed+resumed: {diff:.3g}")
    return diff


def test_pretrain_killed_and_resumed_matches_an_unbroken_run(tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus.txt")
    common = ["--train_files", corpus, "--vocab_size", "150", "--n_layer", "2", "--n_embd", "64", "--n_head", "4"]
    common += ["--n_positions", "64", "--max_steps", "12", "--per_device_train_batch_size", "4", "--warmup_steps", "3"]
    common += ["--eval_steps", "12", "--save_steps", "4", "--logging_steps", "1", "--report_to", "none", "--seed", "7"]
    common += ["--dataloader_num_workers", "0", "--use_cpu", "--full_determinism", "--save_total_limit", "0"]

    crashed = tmp_path / "crashed"
    argv = [str(a) for a in [*common, "--output_dir", crashed]]
    _kill_at_checkpoint([sys.executable, str(REPO_ROOT / "recipes" / "pretrain.py"), *argv], crashed, step=4)
    resumed_from = _plant_half_written_checkpoint(crashed)
    got = run_command(capsys, "pretrain", *argv, "--resume").results()
    step = int(resumed_from.rsplit("-", 1)[1])
    assert 4 <= step < 12
    # The resumed run kept the BPE the killed process trained (it is not trained again) ...
    assert (crashed / "tokenizer.json").read_text() == (Path(resumed_from) / "tokenizer.json").read_text()

    # ... so the unbroken reference run uses that same tokenizer; everything else is identical.
    unbroken = tmp_path / "unbroken"
    reference = [*common, "--output_dir", unbroken, "--tokenizer_name_or_path", resumed_from]
    expected = run_command(capsys, "pretrain", *reference).results()
    _assert_same_losses_after(step, got["log_history"], expected["log_history"])
    assert got["validation"]["eval_loss"] == pytest.approx(expected["validation"]["eval_loss"], rel=1e-6)
    assert _max_weight_diff(unbroken, crashed) < 1e-6


def test_glue_killed_and_resumed_matches_an_unbroken_run(tiny, rte_files, tmp_path, capsys):
    train, dev = rte_files
    unbroken = tmp_path / "unbroken"
    expected = run_command(capsys, "glue", *glue_argv(tiny, train, dev, unbroken)).results()

    crashed = tmp_path / "crashed"
    argv = glue_argv(tiny, train, dev, crashed)
    _kill_at_checkpoint([sys.executable, str(REPO_ROOT / "recipes" / "glue.py"), *argv], crashed, step=2)
    resumed_from = _plant_half_written_checkpoint(crashed)
    # the summary's time is the run's, the killed session's training included
    assert json.loads((Path(resumed_from) / COMPLETE_MARKER).read_text())["elapsed_s"] > 0
    resumed = run_command(capsys, "glue", *argv, "--resume")
    got = resumed.results()
    assert re.search(r"== glue rte: done in .+ \(.+ in this session, resumed after .+\) ==", resumed.stdout)

    assert got["validation"]["eval_validation_accuracy"] == expected["validation"]["eval_validation_accuracy"]
    assert got["validation"]["eval_validation_loss"] == pytest.approx(
        expected["validation"]["eval_validation_loss"], rel=1e-6
    )
    _assert_same_losses_after(int(resumed_from.rsplit("-", 1)[1]), got["log_history"], expected["log_history"])
    assert _max_weight_diff(unbroken, crashed) < 1e-6
    state = json.loads((crashed / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6  # 24 rows / 8 = 3 steps per epoch, 2 epochs: the resumed run went to the end


def _start_and_signal(argv: list[str], output_dir: Path, signals: list[int], step: int = 2):
    """Runs `recipes/glue.py argv` in a process, sends `signals` once checkpoint-`step` is complete; returns the
    process's exit status and stderr."""
    import signal as signal_module
    import subprocess
    import sys
    import time

    from hf_gpt1.training.checkpoints import COMPLETE_MARKER
    from tests.utils import REPO_ROOT

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, str(REPO_ROOT / "recipes" / "glue.py"), *argv]

    # As a terminal starts it, with Ctrl-C's default: a process that inherits SIGINT ignored (a shell's background
    # job, such as a test run started with `&`) keeps it ignored (hf_gpt1.process_control).
    def as_from_a_terminal() -> None:
        signal_module.signal(signal_module.SIGINT, signal_module.SIG_DFL)

    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal
    )
    marker = output_dir / f"checkpoint-{step}" / COMPLETE_MARKER
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert process.poll() is None, process.stderr.read()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.02)
    for signum in signals:
        process.send_signal(signum)
    try:
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert signal_module.SIGKILL != -process.returncode
    return process.returncode, err


def test_sigterm_saves_a_checkpoint_says_how_to_resume_and_resume_finishes(tiny, rte_files, tmp_path, capsys):
    import signal

    from hf_gpt1.training.checkpoints import last_complete_checkpoint
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=["--num_train_epochs", "60", "--save_steps", "2"])
    status, err = _start_and_signal(argv, out, [signal.SIGTERM])
    assert status == 128 + signal.SIGTERM, err[-2000:]
    stopped = [line for line in err.splitlines() if line.startswith("Stopped on SIGTERM at step")]
    assert len(stopped) == 1 and "Traceback" not in err, err[-2000:]
    step = int(stopped[0].split("at step ")[1].split(";")[0])
    assert last_complete_checkpoint(out) == str(out / f"checkpoint-{step}")  # saved where it stopped
    assert "--resume" in err.splitlines()[-1] and str(out) in err.splitlines()[-1]
    assert not (out / "all_results.json").exists()
    results = run_command(capsys, "glue", *argv, "--resume").results()  # the command it printed
    assert results["train"]["epoch"] == 60


def test_a_second_ctrl_c_stops_at_once_without_a_traceback(tiny, rte_files, tmp_path):
    import signal

    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=["--num_train_epochs", "60", "--save_steps", "2"])
    status, err = _start_and_signal(argv, out, [signal.SIGINT, signal.SIGINT])
    assert status == 128 + signal.SIGINT, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
