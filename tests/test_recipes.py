# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The recipes as a user types them: `python recipes/<name>.py --help`, an argument file, a real command line.

The recipes' machinery is tested module by module (tests/training/); here the scripts themselves run as `python`
runs them (`runpy`, `__name__ == "__main__"`, `sys.argv` set), in this process (TRL's way of testing its scripts).
"""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from hf_gpt1.commands.command_line import parse_recipe_args
from hf_gpt1.training import arguments
from tests.utils import REPO_ROOT, CommandResult, glue_args

RECIPES = ["glue.py", "multiple_choice.py", "pretrain.py", "zero_shot.py", "demo.py"]


def run_script(capsys, monkeypatch, script: str, *argv: str) -> CommandResult:
    """`python recipes/<script> <argv>` in this process: its exit status, stdout and stderr."""
    import runpy

    monkeypatch.setattr(sys, "argv", [str(REPO_ROOT / script), *argv])
    capsys.readouterr()
    try:
        runpy.run_path(str(REPO_ROOT / script), run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    captured = capsys.readouterr()
    return CommandResult(code, captured.out, captured.err)


@pytest.mark.parametrize("recipe", RECIPES)
def test_help_exits_0_and_lists_the_arguments(recipe, capsys, monkeypatch):
    proc = run_script(capsys, monkeypatch, f"recipes/{recipe}", "--help")
    assert proc.code == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage:")
    expected = {
        "glue.py": [
            "--output_dir",
            "--task",
            "--data_dir",
            "--test_file",
            "--lm_coef",
            "--do_train",
            "--story_cloze_protocol",
        ],
        "multiple_choice.py": ["--task", "--segment_cap", "--original_embedding_table", "--load_best_model_at_end"],
        "pretrain.py": [
            "--output_dir",
            "--train_files",
            "--vocab_size",
            "--n_positions",
            "--validation_split_percentage",
        ],
        "zero_shot.py": ["--model_name_or_path", "--task", "--calibration_split", "--output_file"],
        "demo.py": ["--output_dir", "--pretrain_steps", "--bf16"],
    }[recipe]
    for flag in expected:
        assert flag in proc.stdout, flag


def yaml_value(text: str):
    """A command-line value as its YAML type."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def test_glue_cli_from_yaml_with_an_override(tiny_lm, glue_slice, tmp_path, capsys, monkeypatch):
    """`python recipes/glue.py run.yaml --seed 3`: arguments from a YAML file, one overridden on the command line."""
    out = tmp_path / "rte"
    args = glue_args("rte", tiny_lm, glue_slice, out)
    config = {key.lstrip("-"): yaml_value(value) for key, value in zip(args[::2], args[1::2])}
    config["learning_rate"] = "1e-3"  # YAML 1.1 reads this as a string: the command line's float parsing takes it
    path = tmp_path / "rte.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = run_script(capsys, monkeypatch, "recipes/glue.py", str(path), "--seed", "3")
    assert proc.code == 0, proc.stderr[-3000:]
    results = json.loads((out / "all_results.json").read_text())
    assert results["train"]["epoch"] == 1.0
    assert json.loads((out / "hf_gpt1_run.json").read_text())["seed"] == 3
    assert "== glue rte: done in" in proc.stdout


def test_example_recipe_yaml_parses():
    """recipes/configs/presets/rte.yaml is a complete glue.py configuration with the paper's hyper-parameters."""
    model_args, data_args, training_args = parse_recipe_args(
        (arguments.ModelArguments, arguments.DataArguments, arguments.GPT1TrainingArguments),
        [str(REPO_ROOT / "recipes" / "configs" / "presets" / "rte.yaml")],
    )
    assert data_args.task == "rte" and data_args.data_dir
    assert model_args.lm_coef == 0.5
    assert training_args.learning_rate == 6.25e-5 and training_args.per_device_train_batch_size == 32
    assert training_args.num_train_epochs == 3


def test_paper_pretraining_preset_parses():
    """recipes/configs/presets/pretrain_paper.yaml holds the paper's pre-training settings."""
    model_args, data_args, args = parse_recipe_args(
        (arguments.PretrainModelArguments, arguments.PretrainDataArguments, arguments.PretrainTrainingArguments),
        [str(REPO_ROOT / "recipes" / "configs" / "presets" / "pretrain_paper.yaml"), "--train_files", "books.txt"],
    )
    assert model_args.vocab_size == 40478 and model_args.n_positions == 512 and model_args.dropout == 0.1
    assert (model_args.n_layer, model_args.n_embd, model_args.n_head) == (12, 768, 12)
    assert model_args.original_embedding_table
    assert args.learning_rate == 2.5e-4 and args.warmup_steps == 2000 and args.lr_scheduler_type == "cosine"
    assert args.num_train_epochs == 100 and args.weight_decay == 0.01
    assert args.per_device_train_batch_size * args.gradient_accumulation_steps == 64
    assert data_args.train_files == ["books.txt"]


PUBLIC_PACKAGES = ("hf_gpt1", "hf_gpt1.commands", "hf_gpt1.data", "hf_gpt1.tools", "hf_gpt1.training")


def test_the_recipes_the_demo_and_the_experiments_use_public_api_only():
    """What a checkout's scripts import from hf_gpt1 is a name its packages export (`__all__` of hf_gpt1,
    hf_gpt1.commands, .data, .tools, .training): never a module inside them, so a move inside never breaks them."""
    import ast
    import importlib

    scripts = sorted((REPO_ROOT / "recipes").rglob("*.py"))
    assert len(scripts) >= 6
    for path in scripts:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hf_gpt1"):
                assert node.module in PUBLIC_PACKAGES, f"{path.name} imports {node.module}"
                exported = importlib.import_module(node.module).__all__
                assert [a.name for a in node.names if a.name not in exported] == [], f"{path.name}: {node.module}"
            elif isinstance(node, ast.Import):
                assert not [a.name for a in node.names if a.name.startswith("hf_gpt1.")], path.name
