# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The plans of `pretrain`, `glue` and `multiple-choice`: `--dry_run` prints the plan and writes nothing, and each
command's wiring (argv in, the Trainer built with the planned arguments, then trained and evaluated)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.utils import COMMON, TINY_LM, plan_problems, run_command, story_cloze_csv


def _listing(root: Path) -> list[str]:
    """Every path under `root` (the test's whole tmp folder): what a dry run must leave as it found it."""
    return sorted(str(Path(folder, name)) for folder, dirs, files in os.walk(root) for name in [*dirs, *files])


def _glue(tiny: Path, glue_slice: Path, out: Path) -> list[str]:
    return ["glue", "--task", "rte", "--data_dir", str(glue_slice), "--model_name_or_path", str(tiny),
            "--output_dir", str(out), "--max_seq_length", "64", *COMMON]  # fmt: skip


@pytest.mark.parametrize("spelling", [["--dry_run"], ["--dry_run=true"], ["--dry-run"], ["--dry_run", "true"], "file"])
def test_glue_dry_run_prints_the_plan_and_writes_nothing(capsys, tiny, glue_slice, tmp_path, monkeypatch, spelling):
    """Every spelling the one parse takes (an argument file's `dry_run: true` too) prints the plan, exits 0 and
    leaves the tmp folder as it was: no output folder, no lock, no log."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    argv = _glue(tiny, glue_slice, out)
    if spelling == "file":
        (tmp_path / "args.yaml").write_text("dry_run: true\n")
        argv = [argv[0], str(tmp_path / "args.yaml"), *argv[1:]]
    else:
        argv += spelling
    before = _listing(tmp_path)
    result = run_command(capsys, *argv)
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before and not out.exists()
    plan = result.stdout
    assert plan.startswith("glue rte: entailment task"), plan
    for said in ("  train: ", "  validation: ", "updates", "warm-up", "evaluation:", "torch.compile:", "precision:",
                 "processes:", f"writes {out}", "dry run: nothing was written"):  # fmt: skip
        assert said in plan, (said, plan)


def test_multiple_choice_dry_run(capsys, tiny, tmp_path):
    """`hf-gpt1 multiple-choice --dry_run`: its plan, nothing written."""
    val = story_cloze_csv(tmp_path / "val.csv", 8)
    out = tmp_path / "run"
    before = _listing(tmp_path)
    result = run_command(
        capsys, "multiple-choice", "--task", "story_cloze", "--train_file", str(val), "--validation_file", str(val),
        "--model_name_or_path", str(tiny), "--output_dir", str(out), "--per_device_train_batch_size", "4", "--dry_run",
        *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before
    assert result.stdout.startswith("multiple_choice story_cloze: ") and "  train: 8 rows" in result.stdout
    assert "  inputs: at most 64 tokens" in result.stdout


def test_a_dry_run_refuses_a_bad_label(capsys, tiny, tmp_path):
    """The plan parses every label the run reads (the label kind's rule), so a bad label is refused by `--dry_run`
    as by the run, in the same words; a row past `--max_train_samples` is read by neither."""
    rows = "".join(f"A b {i}.,C d.,{'entailment' if i % 2 else 'not_entailment'}\n" for i in range(4))
    train = tmp_path / "t.csv"
    train.write_text(f"sentence1,sentence2,label\n{rows}A b.,C d.,maybe\n")
    argv = ["glue", "--task", "rte", "--train_file", str(train), "--model_name_or_path", str(tiny),
            "--output_dir", str(tmp_path / "run"), "--eval_strategy", "no", "--per_device_train_batch_size", "2",
            "--dry_run", *COMMON]  # fmt: skip
    result = run_command(capsys, *argv)
    assert result.code == 2 and not (tmp_path / "run").exists()
    assert result.error == (
        f"error: --train_file {train}: Row 4, column 'label': Task 'rte': label 'maybe' is not one of the names "
        "['entailment', 'not_entailment'] or the integer ids [0, 1]."
    )
    assert run_command(capsys, *argv, "--max_train_samples", "4").code == 0


def test_pretrain_dry_run_trains_no_tokenizer_and_writes_nothing(capsys, wikitext_slice, tmp_path):
    """`hf-gpt1 pretrain --dry_run` with no tokenizer given: the plan (the corpus's size, the updates and warm-up it
    gives, the evaluation), and no BPE trained or packed windows written in the output folder."""
    out = tmp_path / "pt"
    before = _listing(tmp_path)
    result = run_command(
        capsys, "pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", str(out), *TINY_LM,
        "--max_steps", "20", "--warmup_steps", "2", "--eval_steps", "5", "--dry_run", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before
    plan = result.stdout
    assert plan.startswith(f"pretrain: corpus {wikitext_slice['train']}"), plan
    for said in ("  train: ", "bytes", "tokens", "windows of 64 tokens", "20 updates", "warm-up: 2 of 20 updates",
                 "evaluation: every 5 updates", "precision:", "processes:", f"writes {out}"):  # fmt: skip
        assert said in plan, (said, plan)


def test_a_dry_run_overwrites_nothing(capsys, tiny, glue_slice, tmp_path):
    """`--dry_run --overwrite_output_dir` on a folder holding another run: the plan is printed and the folder stays
    as it was (a run empties it only when it claims it)."""
    from hf_gpt1.training.run_folder import RUN_FILE

    out = tmp_path / "run"
    out.mkdir()
    (out / RUN_FILE).write_text('{"recipe": "pretrain"}')
    (out / "model.safetensors").write_bytes(b"weights")
    before = _listing(tmp_path)
    result = run_command(capsys, *_glue(tiny, glue_slice, out), "--overwrite_output_dir", "--dry_run")
    assert result.code == 0, result.stderr
    assert _listing(tmp_path) == before and (out / "model.safetensors").read_bytes() == b"weights"


def test_the_plan_says_model_and_update_problems_with_the_others(tiny, rte_files, tmp_path):
    """Problems that need the model's config (`--max_seq_length` beyond its positions) or the rows' count (0 updates)
    are the plan's, said at once with the arguments' own: none waits for the model to load."""
    train, dev = rte_files
    problems = plan_problems(
        "glue",
        {"model_name_or_path": tiny},
        {"task": "rte", "train_file": train, "validation_file": dev, "max_seq_length": 4096},
        {"output_dir": tmp_path / "out", "per_device_train_batch_size": 64, "dataloader_drop_last": True},
    )
    assert len(problems) == 2, problems
    assert "0 optimizer steps: 24 training rows are fewer than one global batch of 64" in problems[0]
    assert "--max_seq_length 4096 exceeds the model's n_positions=64" in problems[1]
    assert not (tmp_path / "out").exists()


def test_a_prediction_plan_refuses_a_head_never_fine_tuned(capsys, tiny, rte_files, tmp_path):
    """`--do_train false` with a language model (no fine-tuned head): the plan refuses it, so a dry run does too."""
    _, dev = rte_files
    result = run_command(
        capsys, "glue", "--task", "rte", "--validation_file", str(dev), "--model_name_or_path", str(tiny),
        "--output_dir", str(tmp_path / "out"), "--do_train", "false", "--do_eval", "--dry_run", *COMMON,
    )  # fmt: skip
    assert result.code != 0 and "holds no head fine-tuned for a task" in result.error
    assert not (tmp_path / "out").exists()


def test_the_plan_counts_the_rows_with_a_gold_label(tiny, tmp_path):
    """Rows without a gold label (`-`, empty) are dropped before training: the plan's updates count the others."""
    from hf_gpt1.training.arguments import DataArguments, GPT1TrainingArguments, ModelArguments
    from hf_gpt1.training.finetune import plan_finetuning

    rows = [f'"a {i}","b",{"-" if i % 2 else "entailment"}\n' for i in range(16)]
    (tmp_path / "train.csv").write_text("sentence1,sentence2,label\n" + "".join(rows))
    plan = plan_finetuning(
        ModelArguments(model_name_or_path=str(tiny)),
        DataArguments(task="rte", train_file=str(tmp_path / "train.csv")),
        GPT1TrainingArguments(output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_train_epochs=1,
                              eval_strategy="no", report_to="none"),
    )  # fmt: skip
    assert plan.updates == 4 and plan.max_length == 64


def test_the_pretraining_plan_holds_the_final_arguments(tiny, wikitext_slice, tmp_path):
    """With `--max_steps` the plan decides the warm-up (capped by `--warmup_cap`) and its arguments are the run's; a
    continued model's window is its own config's, read by the plan (no weights loaded)."""
    from hf_gpt1.training.arguments import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments
    from hf_gpt1.training.pretrain import plan_pretraining

    plan = plan_pretraining(
        PretrainModelArguments(model_name_or_path=str(tiny), n_positions=512),
        PretrainDataArguments(train_files=[str(wikitext_slice["train"])]),
        PretrainTrainingArguments(output_dir=str(tmp_path / "pt"), max_steps=20, warmup_steps=5, report_to="none"),
    )
    assert (plan.updates, plan.args.warmup_steps, plan.window) == (20, 2, 64)
    assert "warm-up: 2 of 20 updates (--warmup_steps 5, capped at 10% of the run" in str(plan)
    assert "windows of 64 tokens" in str(plan)


def test_an_epoch_based_pretraining_plan_estimates_its_updates(capsys, wikitext_slice, tmp_path):
    """Without `--max_steps` the windows decide the updates once the corpus is tokenized: the plan gives its estimate
    and the warm-up's bound (`--warmup_cap`), and leaves the warm-up to execute."""
    result = run_command(
        capsys, "pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", str(tmp_path / "pt"),
        *TINY_LM, "--num_train_epochs", "2", "--per_device_train_batch_size", "4", "--warmup_steps", "50",
        "--dry_run", *COMMON,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert "updates (from the estimated windows; exact once the corpus is tokenized)" in result.stdout
    assert "warm-up: 50 updates, at most 10% of the run (--warmup_cap)" in result.stdout


def test_every_missing_file_is_named_at_once(tiny, tmp_path):
    """Two data files that are not there: both named, each by its flag, in one error (not the first alone)."""
    data = {"task": "rte", "train_file": tmp_path / "train.csv", "validation_file": tmp_path / "dev.csv"}
    problems = plan_problems("glue", {"model_name_or_path": tiny}, data, {"output_dir": tmp_path / "out"})
    assert problems == [f"--train_file {tmp_path / 'train.csv'} does not exist.",
                        f"--validation_file {tmp_path / 'dev.csv'} does not exist."]  # fmt: skip
    pretrain = {"train_files": [tmp_path / "a.txt", tmp_path / "b.txt"]}
    problems = plan_problems("pretrain", {}, {**pretrain, "validation_files": [tmp_path / "c.txt"]},
                             {"output_dir": tmp_path / "pt"})  # fmt: skip
    assert len(problems) == 3 and all("does not exist" in problem for problem in problems), problems


def test_the_plan_says_what_it_does_to_the_folder_and_the_hub(capsys, tiny, glue_slice, tmp_path):
    """Overwriting another run's folder, resuming (and from where), pushing to the Hub: each said by the plan."""
    from hf_gpt1.training.run_folder import RUN_FILE

    out = tmp_path / "run"
    out.mkdir()
    (out / RUN_FILE).write_text('{"recipe": "pretrain"}')
    plan = run_command(capsys, *_glue(tiny, glue_slice, out), "--overwrite_output_dir", "--push_to_hub",
                       "--hub_model_id", "me/rte", "--dry_run").stdout  # fmt: skip
    assert f"  writes {out} (data " in plan and "), emptying what it holds first (--overwrite_output_dir)" in plan
    assert "  pushes to the Hub as me/rte (--push_to_hub)" in plan
    # a run started and stopped before its first checkpoint: its folder holds its identity alone
    from hf_gpt1.commands.command_line import parse_recipe_args
    from hf_gpt1.commands.glue import ARGUMENTS
    from hf_gpt1.data.atomic import write_json_atomic
    from hf_gpt1.training.finetune import plan_finetuning

    started = tmp_path / "started"
    argv = _glue(tiny, glue_slice, started)[1:]
    write_json_atomic(started / RUN_FILE, plan_finetuning(*parse_recipe_args(ARGUMENTS, argv)).identity)
    plan = run_command(capsys, "glue", *argv, "--resume", "--dry_run").stdout
    assert "  resumes from the start (no complete checkpoint yet)" in plan, plan


def test_a_share_of_the_run_is_rounded_up_as_transformers_rounds_it(tmp_path):
    """`--eval_steps 0.25` of 9 updates: transformers evaluates every ceil(2.25) = 3 updates; the plan says so."""
    from hf_gpt1.training.arguments import GPT1TrainingArguments
    from hf_gpt1.training.plans import run_lines

    args = GPT1TrainingArguments(output_dir=str(tmp_path), eval_strategy="steps", eval_steps=0.25,
                                 save_strategy="steps", save_steps=0.25, report_to="none")  # fmt: skip
    assert "evaluation: every 25% of the run (3 updates); checkpoints: every 25% of the run (3 updates)" in "\n".join(
        run_lines(args, None, 9)
    )


def test_problems_of_several_splits_and_of_the_model_are_all_said(tiny, tmp_path):
    """A bad label in train and another in validation, a validation split without a gold label, a head never
    fine-tuned beside a too-long --max_seq_length: each said, none hidden by another."""
    header = "sentence1,sentence2,label\n"
    (tmp_path / "train.csv").write_text(header + "A b.,C d.,maybe\n" + "A b.,C d.,entailment\n" * 4)
    (tmp_path / "dev.csv").write_text(header + "A b.,C d.,perhaps\n")
    (tmp_path / "test.csv").write_text(header + "A b.,C d.,-\n")
    data = {"task": "rte", "train_file": tmp_path / "train.csv", "validation_file": tmp_path / "dev.csv"}
    training = {"output_dir": tmp_path / "out", "per_device_train_batch_size": 2}
    problems = plan_problems("glue", {"model_name_or_path": tiny}, data, training)
    assert len(problems) == 2 and "'maybe'" in problems[0] and "'perhaps'" in problems[1], problems
    data = {"task": "rte", "validation_file": tmp_path / "test.csv", "max_seq_length": 999}
    problems = plan_problems("glue", {"model_name_or_path": tiny}, data, {**training, "do_train": False})
    assert len(problems) == 3, problems
    assert "no row has a gold label in 'label'" in problems[0]
    assert "--max_seq_length 999 exceeds" in problems[1] and "holds no head fine-tuned" in problems[2]


def test_a_pretraining_plan_names_missing_corpus_files_with_its_other_problems(tmp_path):
    """The corpus's files are checked with the arguments, not only once every other check passed."""
    data = {"train_files": [tmp_path / "a.txt"], "validation_files": [tmp_path / "b.txt"]}
    problems = plan_problems("pretrain", {}, data, {"output_dir": tmp_path / "pt", "do_train": False})
    assert len(problems) == 3 and "--do_train false" in problems[0], problems
    assert all("does not exist" in problem for problem in problems[1:])


def test_the_plan_says_fp16_and_a_warm_up_as_long_as_the_run(tmp_path):
    from hf_gpt1.training.arguments import GPT1TrainingArguments
    from hf_gpt1.training.plans import run_lines

    args = GPT1TrainingArguments(output_dir=str(tmp_path), warmup_steps=50, report_to="none")
    args.fp16 = True  # set after: transformers refuses --fp16 on a machine without a GPU
    text = "\n".join(run_lines(args, None, 9))
    assert "fp16 mixed precision" in text and "warning: the warm-up is as long as the run (9 updates)" in text


def test_an_epoch_based_estimate_counts_the_windows_trained(capsys, wikitext_slice, tmp_path):
    """`--max_train_windows 10`: the estimate is of 10 windows' updates, not the corpus's."""
    result = run_command(
        capsys, "pretrain", "--train_files", str(wikitext_slice["train"]), "--output_dir", str(tmp_path / "pt"),
        *TINY_LM, "--num_train_epochs", "2", "--per_device_train_batch_size", "2", "--gradient_accumulation_steps",
        "2", "--max_train_windows", "10", "--dry_run", *COMMON,
    )  # fmt: skip
    assert "about 6 updates (from the estimated windows" in result.stdout, result.stdout


def test_the_plan_builds_the_optimizer_and_schedule_the_trainer_would_refuse(tiny, rte_files, tmp_path):
    """An optimizer whose package is missing, a schedule without its arguments: refused by the plan, with the rest,
    not by `Trainer.train()` once the folder is claimed."""
    import importlib.util

    train, dev = rte_files
    data = {"task": "rte", "train_file": train, "validation_file": dev}
    training = {"output_dir": tmp_path / "out", "per_device_train_batch_size": 4,
                "lr_scheduler_type": "cosine_with_min_lr"}  # fmt: skip
    for optim, package in (("adamw_bnb_8bit", "bitsandbytes"), ("adamw_anyprecision", "torchdistx"),
                           ("grokadamw", "grokadamw")):  # fmt: skip
        if importlib.util.find_spec(package) is not None:
            continue
        problems = plan_problems("glue", {"model_name_or_path": tiny}, data, {**training, "optim": optim})
        assert any("min_lr" in problem for problem in problems), problems
        assert any(f"--optim {optim}:" in problem and package in problem for problem in problems), problems
    # a schedule's argument of the wrong type fails when the schedule computes, not when it is built
    training = {**training, "lr_scheduler_type": "polynomial", "lr_scheduler_kwargs": {"power": "x"}}
    (problem,) = plan_problems("glue", {"model_name_or_path": tiny}, data, training)
    assert problem.startswith("--lr_scheduler_type polynomial:"), problem
    assert not (tmp_path / "out").exists()
