# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""scripts/setup.sh in a copy of the checkout's packaging files, with a `.venv/bin/python` that records what it is
asked to do (no pip, no network: what set-up decides, not what pip does)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.utils import REPO_ROOT

RECORDER = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../calls"
if [ "$1 $2" = "-m pip" ] && [ -f "$(dirname "$0")/../pip-fails" ]; then exit 1; fi
"""
INSTALL = "-m pip install -q -e .[dev]"


def checkout(root: Path) -> Path:
    """A checkout's set-up script and packaging files, and a venv whose python only records its calls."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "scripts" / "setup.sh", root / "scripts" / "setup.sh")
    (root / "setup.py").write_text("# setup\n")
    (root / "pyproject.toml").write_text("[tool.ruff]\n")
    (root / "hf_gpt1").mkdir()
    (root / "hf_gpt1" / "__init__.py").write_text('"""hf_gpt1"""\n__version__ = "1.0"\n')
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(RECORDER)
    python.chmod(0o755)
    return root


def set_up(root: Path, **env: str) -> tuple[int, list[str]]:
    """Runs the copy's set-up; its exit status and the calls its python recorded (then forgets them)."""
    done = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=root, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )
    calls = root / ".venv" / "calls"
    recorded = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return done.returncode, recorded


def test_set_up_again_of_the_same_checkout_skips_pip_and_a_change_installs_again(tmp_path):
    root = checkout(tmp_path / "repo")
    assert set_up(root) == (0, ["-c import torch", INSTALL])
    assert set_up(root) == (0, [])  # the same checkout, the same packaging: nothing to do
    (root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert set_up(root) == (0, ["-c import torch", INSTALL])
    init = root / "hf_gpt1" / "__init__.py"
    init.write_text(init.read_text() + "X = 1\n")  # code, not packaging: an editable install has it already
    assert set_up(root) == (0, [])
    init.write_text(init.read_text().replace('"1.0"', '"1.1"'))  # a new version: new metadata
    assert set_up(root) == (0, ["-c import torch", INSTALL])
    moved = tmp_path / "elsewhere"  # another checkout with the same files (a venv shared between them)
    shutil.copytree(root, moved)
    assert set_up(moved) == (0, ["-c import torch", INSTALL])


def test_a_failed_install_is_tried_again_by_the_next_set_up(tmp_path):
    root = checkout(tmp_path / "repo")
    (root / ".venv" / "pip-fails").touch()
    assert set_up(root) == (1, ["-c import torch", INSTALL])
    (root / ".venv" / "pip-fails").unlink()
    assert set_up(root) == (0, ["-c import torch", INSTALL])  # no stamp was left: it installs
    assert set_up(root) == (0, [])


def test_a_venv_made_again_over_its_old_folder_installs_again(tmp_path):
    """A venv whose python is gone is made again in the same folder, where the old stamp still lies: it says nothing
    about the new venv."""
    root = checkout(tmp_path / "repo")
    assert set_up(root) == (0, ["-c import torch", INSTALL])
    (root / ".venv" / "bin" / "python").unlink()
    maker = tmp_path / "python3"  # `python3 -m venv .venv`: makes the recording python again
    maker.write_text(f"#!/usr/bin/env bash\ncat > .venv/bin/python <<'END'\n{RECORDER}END\nchmod +x .venv/bin/python")
    maker.chmod(0o755)
    made_again = ["-m pip install -q --upgrade pip", "-c import torch", INSTALL]
    assert set_up(root, PYTHON=str(maker)) == (0, made_again)
