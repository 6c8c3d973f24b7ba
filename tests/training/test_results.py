# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""What a run tells its user at its end (hf_gpt1.training.results): `all_results.json` is the result; the learning
curves (`curves.png`) are a figure, whose failure is a warning, never a failed run."""

from __future__ import annotations

import errno
import json

import pytest

from hf_gpt1.data.atomic import TEMP_PREFIX
from hf_gpt1.training import curves as curves_module
from tests.utils import fail_writes_to, glue_argv, run_command

# two updates, each logged (a curve of two points is drawn), no checkpoint, no test split
SHORT = ("--max_steps", "2", "--save_strategy", "no", "--do_predict", "false")


@pytest.mark.parametrize("failure", ["full disk", "drawing error"])
def test_a_figure_that_cannot_be_written_is_a_warning_and_the_run_completes(failure, tiny, rte_files, tmp_path, capsys,
                                                                            monkeypatch):  # fmt: skip
    """The disk fills while `curves.png` is written, after `all_results.json` is complete (was exit 2, "run again
    with --resume", which trains again); or the figure cannot be drawn at all."""
    if failure == "full disk":
        fail_writes_to(monkeypatch, "curves.png", OSError(errno.ENOSPC, "No space left on device"))
    else:

        def cannot_draw(figure, path, **kwargs):
            raise ValueError("Image size of 500x40000 pixels is too large")

        monkeypatch.setattr(curves_module, "write_figure_atomic", cannot_draw)
    train, dev = rte_files
    out = tmp_path / "out"
    run = run_command(capsys, "glue", *glue_argv(tiny, train, dev, out, extra=SHORT))
    results = run.results()
    assert json.loads((out / "all_results.json").read_text())["task"] == results["task"] == "rte"
    assert not (out / "curves.png").exists() and not list(out.glob(f"{TEMP_PREFIX}*"))
    why = "no space is left on its disk" if failure == "full disk" else "Image size of 500x40000 pixels is too large"
    assert (
        f"  warning: the learning curves were not drawn ({out / 'curves.png'}: {why}); the run is complete, its "
        f"results are in {out / 'all_results.json'}"
    ) in run.stdout, run.stdout
    assert "error" not in run.stderr and "--resume" not in run.stdout + run.stderr
