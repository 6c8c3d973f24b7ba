# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The `hf-gpt1` command (`hf_gpt1.commands`): the recipes and tools from any folder. Driven in-process through
`hf_gpt1.commands.main` (what the console script calls); the console script and `python -m` themselves run as real
processes once, in the full tier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.utils import COMMON, TINY_LM, run_command


def console(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """The `hf-gpt1` script `pip install` put beside this interpreter, as a user runs it."""
    script = Path(sys.executable).parent / "hf-gpt1"
    if not script.is_file():
        pytest.skip("the hf-gpt1 command is not installed here: scripts/setup.sh (pip install -e .) installs it")
    return subprocess.run([str(script), *argv], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_pretrain_from_another_folder(capsys, wikitext_slice, tmp_path, monkeypatch):
    """A command's relative paths are the caller's folder's (in-process: `hf_gpt1.commands.main`)."""
    monkeypatch.chdir(tmp_path)
    argv = ["pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", "run", *TINY_LM]
    argv += ["--max_steps", "2", "--per_device_train_batch_size", "4", "--eval_steps", "2", "--save_steps", "2"]
    done = run_command(capsys, *argv, *COMMON)
    assert done.code == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "run" / "all_results.json").read_text())["log_history"][-1]["step"] == 2
    assert "== pretrain: done in" in done.stdout


def test_every_command_is_listed_and_an_unknown_one_named(capsys):
    listed = run_command(capsys, "--help")
    assert listed.code == 0
    for name in ("pretrain", "glue", "multiple-choice", "zero-shot", "convert", "push", "reproduce"):
        assert f"\n  {name} " in listed.stdout
    unknown = run_command(capsys, "finetune")
    assert unknown.code != 0 and "unknown command 'finetune'; the commands are pretrain, glue" in unknown.stderr


@pytest.mark.parametrize("name", ["glue", "multiple-choice", "pretrain", "zero-shot", "convert", "push", "reproduce"])
def test_help_shows_the_commands_own_arguments(capsys, name):
    done = run_command(capsys, name, "--help")
    assert done.code == 0 and done.stdout.startswith(f"usage: hf-gpt1 {name}")
    if name == "glue":
        lines = done.stdout.splitlines()
        assert len(lines) < 300 and "--fsdp_config" not in done.stdout  # ~680 lines with every TrainingArgument
        assert "--lm_coef" in done.stdout and "--output_dir" in done.stdout and "--learning_rate" in done.stdout
        assert lines[-1].startswith("transformers' TrainingArguments take") and "--help_all" in lines[-1]
        everything = run_command(capsys, name, "--help_all").stdout
        assert "--fsdp_config" in everything and len(everything.splitlines()) > len(lines) + 200


def test_a_misspelled_flag_is_one_line_without_the_usage(capsys, tmp_path):
    done = run_command(capsys, "glue", "--task", "rte", "--learning_rat", "1e-4", "--output_dir", str(tmp_path / "x"))
    assert done.code == 2
    assert done.stderr.strip().splitlines()[0] == (
        "error: Unknown argument(s) in the command line: --learning_rat (did you mean --learning_rate?); `--help` "
        "lists the recipe's arguments."
    )
    assert "usage:" not in done.stderr and not (tmp_path / "x").exists()


def test_version(capsys):
    from hf_gpt1 import __version__

    for flag in ("--version", "-V"):
        done = run_command(capsys, flag)
        assert done.code == 0 and done.stdout == f"hf-gpt1 {__version__}\n"


@pytest.mark.slow
def test_the_console_script_and_python_m_are_the_command(tmp_path):
    """The real entry points, each in a fresh process as a user starts it: the `hf-gpt1` script (help, version, a
    refusal), `python -m hf_gpt1` and `python -m` of a command module (its refusal is the script's, byte for byte).
    Every other command module's `python -m` is the same two lines, proved in-process below."""
    from hf_gpt1 import __version__
    from hf_gpt1.commands import COMMANDS

    listed = console("--help", cwd=tmp_path)
    assert listed.returncode == 0 and "\n  reproduce " in listed.stdout
    done = console("-V", cwd=tmp_path)  # --version is the same branch (test_version, in-process)
    assert done.returncode == 0 and done.stdout == f"hf-gpt1 {__version__}\n"
    expected = console("glue", "--no_such_flag", "1", cwd=tmp_path)
    assert expected.returncode == 2 and "required: --task" in expected.stderr
    helped = subprocess.run([sys.executable, "-m", "hf_gpt1", "convert", "--help"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)  # fmt: skip
    assert helped.returncode == 0 and helped.stdout.startswith("usage: hf-gpt1 convert "), helped.stderr[-2000:]
    refused = subprocess.run([sys.executable, "-m", COMMANDS["glue"][0], "--no_such_flag", "1"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert refused.returncode == 2 and refused.stderr == expected.stderr


@pytest.mark.parametrize("name", ["glue", "multiple-choice", "pretrain", "zero-shot", "convert", "push", "reproduce"])
def test_python_m_of_each_command_module_is_the_command(name, capsys, monkeypatch):
    """`python -m hf_gpt1.commands.<name> --help`, run as `python -m` runs a module (`runpy`, as `__main__`), in this
    process: the command's help, exit 0 (never exit 0 having done nothing: a module without its `__main__` lines
    prints nothing). The process itself runs once, in the full tier (above)."""
    import runpy
    import warnings

    from hf_gpt1.commands import COMMANDS

    monkeypatch.setattr(sys, "argv", [COMMANDS[name][0], "--help"])
    with warnings.catch_warnings():  # runpy warns that the module was imported before it ran as __main__
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SystemExit) as done:
            runpy.run_module(COMMANDS[name][0], run_name="__main__")
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: hf-gpt1 {name}")


def test_convert_and_push_parse_as_every_command_does(tmp_path, capsys):
    """Exact names (a prefix is refused, the right name suggested), argument files first, checks in one line."""
    error = run_command(
        capsys, "convert", "--checkpoint_dir", "x", "--output_dir", tmp_path / "y", "--n_position", "8"
    ).error
    assert "--n_position (did you mean --n_positions?)" in error, error
    arguments = tmp_path / "convert.yaml"
    arguments.write_text(f"checkpoint_dir: {tmp_path}\noutput_dir: {tmp_path / 'out'}\nencoder_path: e.json\n")
    error = run_command(capsys, "convert", arguments).error
    assert "--encoder_path and --bpe_path go together" in error, error
    error = run_command(capsys, "push", tmp_path, "me/gpt1", "--privat").error
    assert "--privat (did you mean --private?)" in error, error
    assert not (tmp_path / "out").exists() and not (tmp_path / "y").exists()


def test_glue_reaches_trainer_train_through_the_plans_execution(tiny_lm, glue_slice, tmp_path, monkeypatch):
    """A reader goes from the command to `trainer.train()` through the command line, the command, the run and the
    execution of its plan (the plan was made and returned before; errors are a context around the command, not
    another frame)."""
    import inspect

    from hf_gpt1 import commands
    from hf_gpt1.training.trainer import GPT1Trainer
    from tests.utils import glue_args

    class Reached(Exception):
        pass

    frames = []

    def train(self, *args, **kwargs):
        frames.extend(f"{Path(f.filename).name}:{f.function}" for f in inspect.stack()[1:] if "hf_gpt1" in f.filename)
        raise Reached

    monkeypatch.setattr(GPT1Trainer, "train", train)
    with pytest.raises(Reached):
        commands.main(["glue", *glue_args("rte", tiny_lm, glue_slice, tmp_path / "out")])
    expected = ["finetune.py:execute_finetuning", "finetune.py:run_finetuning", "glue.py:main", "__init__.py:main"]
    assert frames == expected, frames


def test_the_command_table_the_readme_and_the_help_agree(capsys):
    """One table (`hf_gpt1.commands.COMMANDS`) names the commands: `hf-gpt1 --help` lists exactly it, in its order,
    the README's list of commands is it, and each entry's module is a module of `hf_gpt1.commands` with a `main`."""
    import importlib

    from hf_gpt1.commands import COMMANDS, main
    from tests.utils import REPO_ROOT

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert listed == list(COMMANDS)
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"`hf-gpt1 {' | '.join(COMMANDS)}`" in readme
    for name, (module, _) in COMMANDS.items():
        assert module == f"hf_gpt1.commands.{name.replace('-', '_')}", name
        assert callable(importlib.import_module(module).main)


# The tool commands' old homes: `python -m hf_gpt1.tools.<old>` and their names there warned for one release and
# were removed in 0.6.0 (CHANGELOG.md); each now answers as a wrong name does.
MOVED_COMMANDS = {"zero_shot": "zero-shot", "convert": "convert", "hub": "push", "reproduce": "reproduce"}


@pytest.mark.parametrize(
    ("old", "name"),
    [
        *((f"hf_gpt1.tools.{old}", "main") for old in MOVED_COMMANDS),
        ("hf_gpt1.tools.hub", "PushArguments"),
        ("hf_gpt1.tools.convert", "ConvertArguments"),
        ("hf_gpt1.tools.zero_shot", "ZeroShotArguments"),
    ],
)
def test_a_name_removed_in_0_6_is_gone(old, name):
    import importlib

    with pytest.raises(AttributeError, match=f"has no attribute {name!r}"):
        getattr(importlib.import_module(old), name)


def test_the_old_command_lines_modules_are_gone():
    # hf_gpt1.training.cli (the commands' machinery before hf_gpt1.commands.command_line) and log_once
    with pytest.raises(ModuleNotFoundError, match="hf_gpt1.training.cli"):
        import hf_gpt1.training.cli  # noqa: F401
    with pytest.raises(ImportError, match="log_once"):
        from hf_gpt1.training.results import log_once  # noqa: F401


@pytest.mark.parametrize(("old", "command"), MOVED_COMMANDS.items())
def test_python_m_of_a_tool_module_names_its_command_and_runs_nothing(old, command, tmp_path, monkeypatch):
    """`python -m hf_gpt1.tools.hub ...` (run in-process, as `python -m` runs it): one line naming the command that
    replaced it, exit status 1, never a silent exit 0 having done nothing."""
    import runpy
    import warnings

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["x", "--output_dir", "never"])
    with warnings.catch_warnings():  # runpy warns that the module was imported before it ran as __main__
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SystemExit) as done:
            runpy.run_module(f"hf_gpt1.tools.{old}", run_name="__main__")
    assert done.value.code == (
        f"error: python -m hf_gpt1.tools.{old} was removed in hf_gpt1 0.6.0: run hf-gpt1 {command} (or "
        f"python -m hf_gpt1.commands.{command.replace('-', '_')})."
    )
    assert not Path("never").exists()
