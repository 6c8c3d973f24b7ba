# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The pre-training recipe (`hf_gpt1.training.pretrain`) on a WikiText-2 slice, and its argument checks."""

from __future__ import annotations

import json
import math
import re

import pytest

from hf_gpt1.training.arguments import PretrainTrainingArguments
from hf_gpt1.training.checkpoints import COMPLETE_MARKER, last_complete_checkpoint
from hf_gpt1.training.trainer import PretrainTrainer
from tests.utils import COMMON, overridden, plan_problems, run_command


def test_pretrain_wikitext_slice(tiny_lm):
    results = json.loads((tiny_lm / "all_results.json").read_text())
    for name in ("model.safetensors", "config.json", "tokenizer.json", "hf_gpt1_run.json"):
        assert (tiny_lm / name).is_file(), name
    assert last_complete_checkpoint(tiny_lm) == str(tiny_lm / "checkpoint-16")
    assert (tiny_lm / "checkpoint-8" / COMPLETE_MARKER).is_file()
    validation = results["validation"]
    loss, perplexity = validation["eval_loss"], validation["eval_perplexity"]
    assert math.isclose(perplexity, math.exp(loss), rel_tol=1e-6)
    # A 1,004-token vocabulary: a uniform guess has perplexity ~1004; 16 steps must already beat it, and a 2-layer
    # model cannot get near 1 on held-out text.
    assert 20 < perplexity < 1004
    assert results["train"]["train_loss"] < math.log(1004) + 0.1
    losses = [entry["loss"] for entry in results["log_history"] if "loss" in entry]
    assert len(losses) == 4 and losses[-1] < losses[0]
    # the final evaluation is the one logged at step 16, not a second pass over the held-out windows
    evaluations = [entry for entry in results["log_history"] if "eval_loss" in entry]
    assert len(evaluations) == 2 and evaluations[-1]["eval_loss"] == loss
    config = json.loads((tiny_lm / "config.json").read_text())
    assert (config["n_layer"], config["n_embd"], config["n_positions"]) == (2, 64, 64)
    assert config["original_embedding_table"] is True


def test_language_model_tokenizer_encodes_raw_text(tiny_lm):
    from hf_gpt1 import load_gpt1_tokenizer

    tokenizer = load_gpt1_tokenizer(tiny_lm)
    ids = tokenizer("the cat")["input_ids"]
    assert ids == tokenizer("the cat", add_special_tokens=False)["input_ids"]  # no `_start_ … _classify_`


def test_evaluation_never_builds_logits(tmp_path):
    from hf_gpt1 import GPT1LMHeadModel
    from tests.utils import tiny_config

    args = PretrainTrainingArguments(output_dir=str(tmp_path), report_to=[], eval_strategy="no")
    assert args.prediction_loss_only and args.retain_cpu_memory  # the pre-training recipe's defaults
    seen = []
    model = GPT1LMHeadModel(tiny_config())
    original = model.forward

    def spy(*a, **kw):
        out = original(*a, **kw)
        seen.append(out.logits)
        return out

    model.forward = spy
    trainer = PretrainTrainer(model=model, args=args)
    import torch

    batch = {"input_ids": torch.randint(0, 60, (2, 8)), "labels": torch.randint(0, 60, (2, 8))}
    loss, logits, _ = trainer.prediction_step(model, batch, prediction_loss_only=True)
    assert loss is not None and logits is None and seen == [None]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--n_positions", "1"], "a window needs at least 2 tokens"),
        (["--n_embd", "30", "--n_head", "4"], "not divisible by --n_head 4"),
        (["--dropout", "1.0"], "--dropout 1.0 must be in [0, 1)"),
        (["--dropout", "nan"], "--dropout nan is not a finite number"),
        (["--max_train_windows", "0"], "--max_train_windows 0 must be >= 1"),
        (["--preprocessing_num_workers", "0"], "--preprocessing_num_workers 0 must be >= 1"),
        (["--bpe_sample_mb", "0"], "--bpe_sample_mb 0.0 must be > 0"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(argv, fragment, capsys, wikitext_slice, tmp_path):
    out = tmp_path / "out"
    full = overridden(["--train_files", str(wikitext_slice["train"]), "--output_dir", str(out), *COMMON], argv)
    err = run_command(capsys, "pretrain", *map(str, full)).error
    assert fragment in err
    assert not out.exists()


def test_the_plan_says_every_problem_at_once(wikitext_slice, tmp_path):
    """The plan's refusals, arguments in and problems out: each found, all said in one error, nothing written."""
    out = tmp_path / "out"
    problems = plan_problems(
        "pretrain",
        {"model_name_or_path": tmp_path / "nowhere"},
        {"train_files": [str(wikitext_slice["train"])], "streaming": True},
        {"output_dir": out, "do_train": False},
    )
    assert problems[0] == "The pre-training recipe trains: --do_train false leaves it nothing to do."
    assert problems[1] == "A streamed corpus has no length: set --max_steps."
    assert problems[2].startswith(f"--model_name_or_path {tmp_path / 'nowhere'}: no such folder")
    assert len(problems) == 3
    assert not out.exists()


def test_compiled_pretraining_compiles_one_graph_for_the_whole_run(tmp_path):
    """Under `--torch_compile` (the default on a GPU) every training step has one shape: an epoch's partial last batch
    is dropped (5 windows, batches of 2), so the graph compiled at the first step serves the whole run (evaluation,
    with a partial last batch, runs uncompiled)."""
    import datasets
    import torch
    from transformers import TrainerCallback

    from hf_gpt1 import GPT1LMHeadModel
    from tests.utils import tiny_config

    windows = torch.randint(0, 60, (5, 16)).tolist()
    train = datasets.Dataset.from_dict({"input_ids": windows, "labels": windows})
    held_out = train.select(range(3))  # evaluation batches of 2: a partial last one
    args = PretrainTrainingArguments(
        output_dir=str(tmp_path), report_to=[], num_train_epochs=2, per_device_train_batch_size=2,
        per_device_eval_batch_size=2, eval_steps=2, save_strategy="no", warmup_steps=0, logging_steps=1,
        torch_compile=True, torch_compile_backend="eager", dataloader_num_workers=0, disable_tqdm=True,
    )  # fmt: skip
    graphs = []

    class CountGraphs(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            graphs.append(("step", state.global_step, torch._dynamo.utils.counters["stats"]["unique_graphs"]))

        def on_evaluate(self, args, state, control, **kwargs):
            graphs.append(("eval", state.global_step, torch._dynamo.utils.counters["stats"]["unique_graphs"]))

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    trainer = PretrainTrainer(
        model=GPT1LMHeadModel(tiny_config()), args=args, train_dataset=train, eval_dataset=held_out,
        callbacks=[CountGraphs()],
    )  # fmt: skip
    trainer.train()
    assert [(event, step) for event, step, _ in graphs] == [
        ("step", 1), ("step", 2), ("eval", 2), ("step", 3), ("step", 4), ("eval", 4),
    ]  # fmt: skip
    assert {count for _, _, count in graphs} == {1}, graphs
    assert trainer.speed.summary()["graphs_compiled_after_first_step"] == 0


def test_steady_state_speed_leaves_out_the_first_step_and_steps_interrupted_by_evaluation(tmp_path):
    """12 steps of 2 × 16 tokens, evaluated after steps 4, 8 and 12: steps 2-12 less 5 and 9 are the steady state."""
    import datasets
    import torch

    from hf_gpt1 import GPT1LMHeadModel
    from tests.utils import tiny_config

    windows = torch.randint(0, 60, (12, 16)).tolist()
    train = datasets.Dataset.from_dict({"input_ids": windows, "labels": windows})
    args = PretrainTrainingArguments(
        output_dir=str(tmp_path), report_to=[], num_train_epochs=2, per_device_train_batch_size=2, eval_steps=4,
        save_strategy="no", warmup_steps=0, dataloader_num_workers=0, disable_tqdm=True,
    )  # fmt: skip
    trainer = PretrainTrainer(
        model=GPT1LMHeadModel(tiny_config()), args=args, train_dataset=train, eval_dataset=train.select(range(2))
    )
    trainer.train()
    steady = trainer.speed.summary()
    assert steady["steps"] == 9
    assert steady["tokens_per_s"] == pytest.approx(2 * 16 * steady["steps_per_s"])
    assert steady["max_step_over_median"] >= 1 and steady["first_step_s"] > 0
    assert steady["graphs_compiled_after_first_step"] == 0


def test_compilation_is_the_default_on_a_cuda_gpu_only(tmp_path, monkeypatch):
    """The CUDA default is simulated here (this machine has none): the field's default, so a user's value wins."""
    import dataclasses

    import torch

    def args(**kwargs):
        return PretrainTrainingArguments(output_dir=str(tmp_path), report_to=[], **kwargs)

    assert args().torch_compile is False and args().dataloader_drop_last  # no CUDA GPU: the CUDA defaults never ran
    assert args(use_cpu=True).torch_compile is False
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    compile_field = next(f for f in dataclasses.fields(PretrainTrainingArguments) if f.name == "torch_compile")
    assert compile_field.default_factory() is True
    assert args(torch_compile=False).torch_compile is False


def test_resume_with_another_seed_is_refused(capsys, tiny_lm, wikitext_slice, tmp_path):
    """The seed is part of a pre-training run's identity, as of a fine-tuning run's: `--resume` with another seed
    would continue with other batches and dropout masks than the run it claims to continue."""
    import shutil

    from tests.utils import TINY_LM

    run = tmp_path / "run"
    shutil.copytree(tiny_lm, run)
    argv = ["--train_files", str(wikitext_slice["train"]), "--validation_files", str(wikitext_slice["validation"])]
    argv += ["--output_dir", str(run), *TINY_LM, "--dropout", "0", "--max_steps", "16"]
    argv += ["--per_device_train_batch_size", "8", "--warmup_steps", "4", "--eval_steps", "8", "--save_steps", "8"]
    argv += ["--logging_steps", "4", "--resume", *COMMON]
    err = run_command(capsys, "pretrain", *map(str, [*argv, "--seed", "2"])).error
    assert "seed" in err and "--resume" in err


def test_defaults_learn_on_a_short_budget_and_the_start_says_the_plan(capsys, wikitext_slice, tmp_path):
    # No --warmup_steps and no --vocab_size: the paper's 2000-update warm-up is capped at 10% of a 20-update run, and
    # the BPE is sized to the ~100 kB corpus (>= 100 training tokens per entry; at least 1,000).
    out = tmp_path / "out"
    argv = ["--train_files", str(wikitext_slice["train"]), "--validation_files", str(wikitext_slice["validation"])]
    argv += ["--output_dir", str(out), "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32"]
    argv += ["--max_steps", "20", "--per_device_train_batch_size", "8", "--eval_steps", "20", "--save_steps", "20"]
    argv += ["--logging_steps", "1", *COMMON]
    run = run_command(capsys, "pretrain", *argv)
    results, printed = run.results(), run.stdout
    assert "  warm-up: 2 of 20 updates (--warmup_steps 2000, capped at 10% of the run by --warmup_cap 0.1)" in printed
    # scoring is bounded by default, and the start says how much of the held-out text each evaluation reads
    assert re.search(
        r"  held-out perplexity: 200 windows of 32 tokens \(the first 200 of \d+: --max_eval_windows\), every 20 "
        r"updates",
        printed,
    ), printed
    assert "warning" not in printed
    rates = [entry["learning_rate"] for entry in results["log_history"] if "learning_rate" in entry]
    assert rates[:3] == pytest.approx([0, 1.25e-4, 2.5e-4])  # the peak after 2 warm-up updates, then the cosine
    assert json.loads((out / "config.json").read_text())["vocab_size"] == 1000 + 4  # the minimum, + 4 specials


@pytest.mark.parametrize(
    "argv, warning",
    [
        (
            ["--warmup_steps", "50", "--warmup_cap", "1"],
            "warning: the warm-up (50 updates) is as long as the run (20): the learning rate never reaches its peak; "
            "lower --warmup_steps or --warmup_cap.",
        ),
        (
            ["--vocab_size", "8000"],
            "tokens of training text per vocabulary entry (--vocab_size 8000): most entries will barely train; ",
        ),
    ],
)
def test_a_configuration_that_cannot_learn_is_warned_at_start(argv, warning, capsys, wikitext_slice, tmp_path):
    full = ["--train_files", str(wikitext_slice["train"]), "--output_dir", str(tmp_path / "out"), *COMMON, *argv]
    full = overridden(full, ["--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32",
                             "--max_steps", "20"])  # fmt: skip
    full += ["--per_device_train_batch_size", "8", "--eval_steps", "20", "--save_steps", "20"]
    run = run_command(capsys, "pretrain", *full)
    run.results()  # it finished
    printed = run.stdout
    start = printed[: printed.index("== pretrain: done")]
    assert warning in start, start


def test_the_start_says_the_planned_tokens_and_then_the_expected_time(capsys, wikitext_slice, tmp_path):
    from tests.utils import TINY_LM

    argv = [
        "--train_files", str(wikitext_slice["train"]), "--validation_files", str(wikitext_slice["validation"]),
        "--output_dir", str(tmp_path / "run"), *TINY_LM, "--max_steps", "14", "--per_device_train_batch_size", "4",
        "--gradient_accumulation_steps", "2", "--logging_steps", "12", "--eval_steps", "100", *COMMON,
    ]  # fmt: skip
    run = run_command(capsys, "pretrain", *argv)
    run.results()  # it finished
    printed = run.stdout
    assert (
        "  planned: 14 updates × 8 windows × 64 tokens = 7,168 tokens (the expected time is printed after 10"
        in printed
    )
    # the first log with 10 timed updates behind it (the first update left out): step 12, 2 updates left
    expected = re.search(
        r"^expected: about (.+) more for the remaining 2 of 14 updates \(([\d.e-]+) s per update", printed, re.M
    )
    assert expected and float(expected[2]) > 0, printed
    assert printed.index("planned:") < printed.index("expected:") < printed.index("== pretrain: done")


def test_a_pretraining_run_is_planned_from_dataclasses_then_executed(wikitext_slice, tmp_path):
    """`plan_pretraining` checks the arguments, the folder and the corpus (no tokenizer trained, no model built,
    nothing written); `execute_pretraining` refuses a corpus file changed since, then carries the plan out."""
    import dataclasses
    import shutil

    from hf_gpt1.training.arguments import PretrainDataArguments, PretrainModelArguments
    from hf_gpt1.training.pretrain import execute_pretraining, plan_pretraining

    corpus = shutil.copy(wikitext_slice["train"], tmp_path / "train.txt")
    out = tmp_path / "pt"
    args = PretrainTrainingArguments(
        output_dir=str(out), max_steps=2, per_device_train_batch_size=4, report_to="none", disable_tqdm=True,
        eval_strategy="no", save_strategy="no", dataloader_num_workers=0,
    )  # fmt: skip
    model_args = PretrainModelArguments(n_layer=1, n_embd=32, n_head=2, n_positions=32, vocab_size=300)
    plan = plan_pretraining(model_args, PretrainDataArguments(train_files=[str(corpus)]), args)
    assert not out.exists() and str(plan).startswith(f"pretrain: corpus {corpus}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.args = args
    original = corpus.read_text()
    corpus.write_text(original + "one more line\n")
    with pytest.raises(ValueError, match="changed after this run was planned"):
        execute_pretraining(plan)
    assert not out.exists()
    corpus.write_text(original)
    plan = plan_pretraining(model_args, PretrainDataArguments(train_files=[str(corpus)]), args)
    results = execute_pretraining(plan)
    assert (out / "all_results.json").is_file() and "train" in results
