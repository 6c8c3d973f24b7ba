# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The recipes' command line (hf_gpt1.commands.command_line): argument files, and one error line for every mistake."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from hf_gpt1.commands.command_line import parse_recipe_args, run_recipe
from hf_gpt1.training.trainer import TrainingError
from tests.utils import COMMON, plan_problems, run_command

# ------------------------------------------------------------------------------------------------ argument files


@dataclass
class Options:
    name: str = field(default="x")
    rate: float = field(default=0.5)
    files: list[str] | None = field(default=None)
    flag: bool = field(default=False)


def test_argument_files_and_overrides(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("name: from-yaml\nrate: 1e-3\nfiles: [a.txt, b.txt]\nflag: true\n")
    (options,) = parse_recipe_args((Options,), [str(config), "--rate", "0.25"])
    assert (options.name, options.rate, options.files, options.flag) == ("from-yaml", 0.25, ["a.txt", "b.txt"], True)
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps({"rate": 2, "flag": False}))
    (options,) = parse_recipe_args((Options,), [str(as_json)])
    assert (options.rate, options.flag) == (2.0, False)


def test_every_spelling_of_an_argument_is_its_one_name(tmp_path):
    """A dash or underscore spelling, on the command line or in a file, is the field's one name; two spellings of
    one argument in one place are refused like a duplicate key."""

    @dataclass
    class Run:
        learning_rate: float = 1.0
        output_dir: str = "out"

    (run,) = parse_recipe_args((Run,), ["--learning-rate", "0.5", "--output-dir=there"])
    assert (run.learning_rate, run.output_dir) == (0.5, "there")
    config = tmp_path / "run.yaml"
    config.write_text("learning-rate: 0.25\n")
    (run,) = parse_recipe_args((Run,), [str(config), "--output-dir", "here"])
    assert (run.learning_rate, run.output_dir) == (0.25, "here")
    config.write_text("learning_rate: 0.25\nlearning-rate: 0.5\n")
    with pytest.raises(ValueError, match="'learning_rate' and 'learning-rate' are one argument, given twice"):
        parse_recipe_args((Run,), [str(config)])
    with pytest.raises(ValueError, match="--learning_rate and --learning-rate are one argument, given twice"):
        parse_recipe_args((Run,), ["--learning_rate", "1", "--learning-rate", "2"])


def test_an_argument_file_that_is_no_regular_file_says_what_it_is(tmp_path):
    import os

    folder = tmp_path / "args.yaml"
    folder.mkdir()
    with pytest.raises(ValueError, match="args.yaml is a folder, not a file of arguments"):
        parse_recipe_args((Options,), [str(folder)])
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    with pytest.raises(ValueError, match=r"pipe.json is not a regular file \(a pipe, socket or device\)"):
        parse_recipe_args((Options,), [str(pipe)])


def test_a_json_argument_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "run.json"
    path.write_bytes("\ufeff".encode() + json.dumps({"rate": 0.125}).encode())
    (options,) = parse_recipe_args((Options,), [str(path)])
    assert options.rate == 0.125


@pytest.mark.parametrize(
    "name, content, error, fragment",
    [
        ("empty.yaml", "", ValueError, "holds no arguments"),
        ("list.yaml", "- a\n- b\n", ValueError, "holds no arguments"),
        ("syntax.yaml", "name: x\nrate: [1, 2\n", ValueError, "syntax.yaml:3: not valid YAML"),
        ("damaged.json", '{"rate": ', ValueError, "damaged.json:1: not valid JSON"),
        ("absent.yaml", None, FileNotFoundError, "absent.yaml does not exist"),
    ],
)
def test_bad_argument_files_are_one_line(name, content, error, fragment, tmp_path):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(error) as info:
        parse_recipe_args((Options,), [str(path)])
    assert fragment in str(info.value)


def test_wrong_values_in_an_argument_file_get_the_command_lines_checks(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text("rate: fast\n")
    with pytest.raises(SystemExit) as info:  # argparse: usage and the error, exit status 2
        parse_recipe_args((Options,), [str(path)])
    assert info.value.code == 2 and "argument --rate: invalid float value: 'fast'" in capsys.readouterr().err
    path.write_text("unknown_key: 1\n")
    with pytest.raises(
        ValueError, match=r"Unknown argument\(s\) in the .*run.yaml or the command line: --unknown_key;"
    ):
        parse_recipe_args((Options,), [str(path)])


# ------------------------------------------------------------------------------------------------ one line


@pytest.mark.parametrize(
    "error",
    [
        ValueError("a bad value"),
        KeyError("Unknown task 'x'"),
        NotADirectoryError("--output_dir x is a file"),
        PermissionError("not writable"),
        TrainingError("Training stopped"),
    ],
)
def test_run_recipe_prints_one_line_and_exits_2(error, capsys, monkeypatch):
    monkeypatch.delenv("HF_GPT1_TRACEBACK", raising=False)

    def main():
        raise error

    with pytest.raises(SystemExit) as info:
        run_recipe(main)
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {error.args[0]}" and "HF_GPT1_TRACEBACK=1" in err[1]
    monkeypatch.setenv("HF_GPT1_TRACEBACK", "1")
    with pytest.raises(type(error)):
        run_recipe(main)


OFFLINE = "the Hugging Face Hub cannot be reached (offline mode: HF_HUB_OFFLINE=1)"


@pytest.mark.parametrize(
    "recipe, argv, fragments",
    [
        (  # the default model is a Hub id
            "glue",
            ["--task", "rte", "--data_dir", "GLUE"],
            ["--model_name_or_path openai-community/openai-gpt", OFFLINE, "give a local folder"],
        ),
        (  # no local data: the task's Hub copy
            "glue",
            ["--task", "rte", "--model_name_or_path", "TINY"],
            ["--task rte reads nyu-mll/glue", "cannot be reached (offline mode", "--data_dir", "--train_file"],
        ),
        (
            "pretrain",
            ["--dataset_name", "wikitext", "--dataset_config_name", "wikitext-2-raw-v1"],
            ["--dataset_name wikitext", "cannot be reached (offline mode", "--train_files"],
        ),
    ],
)
def test_an_unreachable_hub_names_what_was_asked_and_the_local_flag(
    recipe, argv, fragments, capsys, tiny_lm, glue_slice, tmp_path
):
    argv = [{"GLUE": str(glue_slice), "TINY": str(tiny_lm)}.get(a, a) for a in argv]
    out = tmp_path / "out"
    err = run_command(capsys, recipe, *argv, "--output_dir", str(out), *COMMON).error
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()


def test_the_arguments_a_run_decides_are_checked_by_transformers(tmp_path):
    """`final_arguments` rebuilds the arguments with the run's decisions, so TrainingArguments' own checks see them
    (a best-model metric with nothing to evaluate is refused by transformers), while every other field keeps its
    value."""
    from hf_gpt1.training.arguments import GPT1TrainingArguments, final_arguments

    args = GPT1TrainingArguments(output_dir=str(tmp_path), report_to="none", save_total_limit=2)
    final = final_arguments(args, load_best_model_at_end=True, metric_for_best_model="eval_validation_accuracy")
    assert final.load_best_model_at_end and final.save_total_limit == 2
    assert final is not args and not args.load_best_model_at_end
    with pytest.raises(ValueError):  # transformers': best model with evaluation at other points than saving
        final_arguments(args, load_best_model_at_end=True, eval_strategy="steps", save_strategy="epoch")


def test_argument_problems_are_reported_together(tmp_path, no_training, capsys):
    """Every problem of the arguments in one error, each on its line; the task-and-recipe checks likewise."""
    base = ["--task", "rte", "--output_dir", str(tmp_path / "out"), "--report_to", "none"]
    error = run_command(capsys, "glue", *base, "--per_device_train_batch_size", "0", "--learning_rate", "-1",
                        "--resume", "true", "--overwrite_output_dir", "true").error  # fmt: skip
    lines = error.splitlines()
    assert lines[0] == "error: 3 problems with the arguments:" and len(lines) == 4
    assert "--per_device_train_batch_size 0 must be a positive integer." in lines[1] and "--resume" in lines[3]
    assert not (tmp_path / "out").exists()


def test_the_fine_tuning_plan_says_every_problem_at_once(tiny, tmp_path):
    """The plan's refusals (the task and the recipe together, the data, the model), arguments in and problems out:
    each found, all said in one error, nothing written."""
    out = tmp_path / "out"
    problems = plan_problems(
        "glue",
        {"model_name_or_path": tmp_path / "nowhere"},
        {"task": "rte", "segment_cap": 5, "story_cloze_protocol": True, "train_file": tmp_path / "none.csv"},
        {"output_dir": out},
    )
    assert problems[0] == "--segment_cap applies to multiple-choice tasks (Story Cloze, RACE, SWAG) only."
    assert problems[1].startswith("--story_cloze_protocol is Story Cloze's")
    assert "none.csv" in problems[2] and problems[3].startswith(f"--model_name_or_path {tmp_path / 'nowhere'}: no")
    assert len(problems) == 4 and not out.exists()


def test_a_misspelt_key_in_an_argument_file_is_not_taken_for_another(tiny, rte_files, tmp_path, capsys):
    from tests.utils import glue_argv

    train, dev = rte_files
    preset = tmp_path / "run.yaml"
    preset.write_text("learning_rat: 1e-4\n")
    error = run_command(capsys, "glue", *map(str, [str(preset), *glue_argv(tiny, train, dev, tmp_path / "out")])).error
    assert "--learning_rat (did you mean --learning_rate?)" in error, error


def test_an_argument_file_after_a_flag_says_it_must_come_first(tmp_path, capsys):

    config = tmp_path / "run.yaml"
    config.write_text("task: rte\noutput_dir: out\n")
    error = run_command(capsys, "glue", *map(str, ["--seed", "3", str(config)])).error
    assert f"{config} is an argument file: it must come first" in error and f"{config} --seed 3" in error, error
    assert "are required" not in error


def test_a_data_file_named_json_is_not_taken_for_an_argument_file(tmp_path):
    from hf_gpt1.commands.command_line import parse_recipe_args
    from hf_gpt1.training.arguments import DataArguments

    rows = tmp_path / "train.json"
    rows.write_text('{"sentence1": "a", "sentence2": "b", "label": "entailment"}\n')
    (parsed,) = parse_recipe_args((DataArguments,), ["--task", "rte", "--train_file", str(rows)])
    assert parsed.train_file == str(rows)


def test_a_wrong_typed_value_in_an_argument_file_names_the_file(tmp_path, capsys):
    from hf_gpt1.commands.command_line import parse_recipe_args
    from hf_gpt1.training.arguments import DataArguments

    config = tmp_path / "run.yaml"
    config.write_text("task: rte\nmax_train_samples: many\n")
    with pytest.raises(SystemExit):
        parse_recipe_args((DataArguments,), [str(config)])
    assert f"{config}: argument --max_train_samples" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # given on the command line: the line's, not the file's
        parse_recipe_args((DataArguments,), [str(config), "--max_train_samples", "lots"])
    err = capsys.readouterr().err
    assert "argument --max_train_samples" in err and f"{config}:" not in err


# ------------------------------------------------------------------------------------------------ the one parse


@pytest.mark.parametrize(
    "given",
    [
        ["--overwrite_output_dir=true"],
        ["--overwrite-output-dir", "true"],
        ["--overwrite_output_dir"],
        ["--resume=false", "--overwrite_output_dir", "1"],
    ],
)
def test_the_continue_command_continues_the_run_however_overwrite_was_spelt(given, monkeypatch):
    """The "Continue with:" line after a stop: the same command with --resume, and without the argument that would
    delete the run, in any spelling the parser takes (issue 50: `--overwrite_output_dir=true` stayed in it)."""
    import shlex

    from hf_gpt1.commands.glue import ARGUMENTS
    from hf_gpt1.process_control import resume_command
    from hf_gpt1.training.parse import given_arguments

    monkeypatch.setattr("sys.argv", ["hf-gpt1", "glue", "--task", "rte", *given, "--output_dir", "out"])
    words = shlex.split(resume_command())[3:]  # after python, hf-gpt1 and glue
    values = given_arguments(ARGUMENTS, words).values
    assert values == {"task": "rte", "output_dir": "out", "resume": True}


def test_the_no_twin_of_a_bool_in_an_argument_file_is_read_as_its_flag(tmp_path):
    """`no_do_train: true` in a YAML or JSON file is `--no_do_train`, as the command line gives it (it was refused as
    an unknown argument `true`)."""
    from hf_gpt1.commands.command_line import parse_recipe_args
    from hf_gpt1.training.arguments import DataArguments, GPT1TrainingArguments

    for name, text in (
        ("run.yaml", "task: rte\nno_do_train: true\n"),
        ("run.json", '{"task": "rte", "no-do-train": true}'),
    ):
        path = tmp_path / name
        path.write_text(text)
        data, args = parse_recipe_args((DataArguments, GPT1TrainingArguments), [str(path), "--output_dir", "out"])
        assert data.task == "rte" and args.do_train is False, name
