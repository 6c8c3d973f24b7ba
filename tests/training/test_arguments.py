# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf_gpt1.training.arguments` and `.launch`: every field holds what was given (or its documented default) from
parse to the end of the run; the run's data-driven decisions go through `final_arguments` only, and the launch's
environment is settled once, when a run starts."""

from __future__ import annotations

import dataclasses
import os

import pytest

from hf_gpt1.commands.command_line import parse_recipe_args
from hf_gpt1.training.arguments import (
    GPT1TrainingArguments,
    PretrainDataArguments,
    PretrainTrainingArguments,
    RecipeTrainingArguments,
    final_arguments,
)
from tests.utils import run_command

ARGUMENT_CLASSES = (RecipeTrainingArguments, GPT1TrainingArguments, PretrainTrainingArguments)


@pytest.mark.parametrize("cls", ARGUMENT_CLASSES)
@pytest.mark.parametrize("limit", [None, 0, 1, 5])
def test_the_checkpoint_limit_stays_as_given_through_replace_and_serialisation(cls, limit, tmp_path):
    args = cls(output_dir=str(tmp_path), report_to="none", save_total_limit=limit)
    assert args.save_total_limit == limit and args.to_dict()["save_total_limit"] == limit
    replaced = dataclasses.replace(args, learning_rate=1e-4)
    assert replaced.save_total_limit == limit and replaced.learning_rate == 1e-4
    final = final_arguments(args, warmup_steps=3)
    assert final.save_total_limit == limit and final.warmup_steps == 3
    assert not hasattr(args, "keep_checkpoints") and not hasattr(args, "fsdp_on_cpu")


@pytest.mark.parametrize("cls", ARGUMENT_CLASSES)
def test_building_the_arguments_writes_no_environment(cls, tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    before = dict(os.environ)
    cls(output_dir=str(tmp_path), report_to="none")
    assert dict(os.environ) == before


@pytest.mark.parametrize("cls", ARGUMENT_CLASSES)
def test_to_dict_is_what_a_rebuild_gives(cls, tmp_path):
    """What trackers and `training_args.bin` record is what the run used: rebuilding from the fields changes none."""
    args = cls(output_dir=str(tmp_path), report_to="none", save_total_limit=2, logging_steps=3)
    assert dataclasses.replace(args).to_dict() == args.to_dict()


def test_parsed_flags_are_held_as_given(tmp_path):
    argv = ["--output_dir", str(tmp_path), "--save_total_limit", "4", "--max_eval_windows", "0", "--report_to", "none"]
    data, training = parse_recipe_args((PretrainDataArguments, PretrainTrainingArguments), argv)
    assert training.save_total_limit == 4 and data.max_eval_windows == 0
    assert training.use_cpu is True  # this machine has no accelerator: the documented default, recorded
    assert training.to_dict()["use_cpu"] is True and training.to_dict()["torch_compile"] is False


def test_a_missing_reporting_integration_is_refused_before_the_folder_is_claimed(tiny, rte_files, tmp_path, capsys):
    import importlib.util

    from tests.utils import glue_argv

    if importlib.util.find_spec("tensorboard") or importlib.util.find_spec("tensorboardX"):
        pytest.skip("tensorboard is installed here: nothing to refuse")
    train, dev = rte_files
    out = tmp_path / "out"
    argv = [*glue_argv(tiny, train, dev, out), "--report_to", "tensorboard"]
    assert "--report_to tensorboard: not installed here" in run_command(capsys, "glue", *map(str, argv)).error
    assert not out.exists()


@pytest.mark.parametrize("how", ["--deepspeed", "ACCELERATE_USE_DEEPSPEED"])
def test_deepspeed_without_the_package_is_one_line_before_anything_is_written(how, tiny, rte_files, tmp_path,
                                                                               capsys, monkeypatch):  # fmt: skip
    """`--deepspeed cfg.json`, or `accelerate launch` with a DeepSpeed config (ACCELERATE_USE_DEEPSPEED=true), where
    the deepspeed package is missing: one line naming `pip install deepspeed`, not transformers' traceback from
    inside TrainingArguments, and no folder claimed. (`sys.modules["deepspeed"] = None` hides an installed one.)"""
    import sys

    from tests.utils import glue_argv

    monkeypatch.setitem(sys.modules, "deepspeed", None)
    config = tmp_path / "ds.json"
    config.write_text('{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}')
    train, dev = rte_files
    out = tmp_path / "out"
    argv = glue_argv(tiny, train, dev, out)
    if how == "--deepspeed":
        argv += ["--deepspeed", str(config)]
    else:
        monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    line = run_command(capsys, "glue", *map(str, argv)).error
    given = f"--deepspeed {config}" if how == "--deepspeed" else "ACCELERATE_USE_DEEPSPEED=true (accelerate launch)"
    assert line == (
        f"error: {given} trains with DeepSpeed, which is not installed here: pip install deepspeed, or launch "
        "without it."
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("rows", "batch", "accumulation", "epochs", "drop_last"),
    [(24, 4, 4, 1, True), (30, 4, 4, 2, False), (7, 2, 3, 1.5, True), (100, 8, 1, 3, True)],
)
def test_the_planned_updates_are_transformers_own(tmp_path, rows, batch, accumulation, epochs, drop_last):
    """`planned_updates` is the count `Trainer.train` reaches (`set_initial_training_values`): an epoch's last
    partial accumulation is an update, so a plan with accumulation says what runs."""
    import torch
    from transformers import Trainer

    from hf_gpt1.training.arguments import GPT1TrainingArguments, planned_updates

    args = GPT1TrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=batch, gradient_accumulation_steps=accumulation,
        num_train_epochs=epochs, dataloader_drop_last=drop_last, report_to="none",
    )  # fmt: skip
    loader = torch.utils.data.DataLoader(range(rows), batch_size=batch, drop_last=drop_last)
    trainer = Trainer.__new__(Trainer)  # only the arithmetic of its method is used
    trainer.args = args
    trainer.get_sp_size, trainer.get_total_train_batch_size = lambda: 1, lambda _: batch * accumulation
    assert planned_updates(args, range(rows)) == trainer.set_initial_training_values(args, loader)[-1]
