# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Helpers the tests share: the one tiny model config, the ../shared/data location, recipe arguments, and the runner
that checks a recipe's one-line error."""

from __future__ import annotations

import builtins
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

# The tiny model every unit test builds: a 64-token vocabulary whose last four ids are GPT-1's special tokens.
V, START, DELIM, EXTRACT, PAD = 64, 60, 61, 62, 63

# (device, dtype) pairs the parity tests run on, as litgpt's do: CUDA cases skip without a GPU.
DEVICE_DTYPES = [
    pytest.param("cpu", torch.float32, id="cpu-fp32"),
    pytest.param("cpu", torch.bfloat16, id="cpu-bf16"),
    pytest.param(
        "cuda",
        torch.float32,
        id="cuda-fp32",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine"),
    ),
    pytest.param(
        "cuda",
        torch.bfloat16,
        id="cuda-bf16",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine"),
    ),
]

# Recipe arguments shared by the in-process recipe tests.
TINY_LM = ["--n_layer", "2", "--n_embd", "64", "--n_head", "4", "--n_positions", "64", "--vocab_size", "1000"]
COMMON = ["--report_to", "none", "--disable_tqdm", "true", "--dataloader_num_workers", "0"]
SENTENCES = [
    "A man is playing a guitar on the stage.",
    "The dog chased the cat across the garden.",
    "Two women are drinking coffee in a small cafe.",
    "The weather today is cold and rainy in the city.",
    "Children are reading books at the public library.",
] * 8
GLUE_ROWS = {"train": 97, "dev": 49, "test": 31}  # lines kept per file, header included where the file has one


def tiny_config(**overrides):
    """The one tiny `GPT1Config` of the unit tests (2 blocks × 32, 4 heads, 32 positions)."""
    from hf_gpt1 import GPT1Config

    fields = dict(
        vocab_size=V,
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=4,
        start_token_id=START,
        delimiter_token_id=DELIM,
        extract_token_id=EXTRACT,
        pad_token_id=PAD,
    )
    fields.update(overrides)
    return GPT1Config(**fields)


def tiny_config_for(tokenizer, **overrides):
    """`tiny_config` sized for a GPT-1 tokenizer (its vocabulary, its special-token ids)."""
    from hf_gpt1 import add_gpt1_special_tokens

    ids = add_gpt1_special_tokens(tokenizer)
    special = {f"{name}_token_id": token_id for name, token_id in ids.items()}
    return tiny_config(vocab_size=len(tokenizer), **{**special, **overrides})


def shared_data(*parts: str) -> Path:
    """Path under ../shared/data, or skip the test with the reason when that real data is absent (a user's clone)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data {path} is absent (it lives in ../shared/data beside the repo, never in it)")
    return path


def write_glue_slice(root: Path, folders: tuple[str, ...]) -> Path:
    """The first `GLUE_ROWS` lines of the real GLUE TSVs of `folders` (RTE, SST-2, ...), in the GLUE folder layout."""
    for folder in folders:
        (root / folder).mkdir(parents=True)
        for name, n in GLUE_ROWS.items():
            lines = shared_data("glue", folder, f"{name}.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
            (root / folder / f"{name}.tsv").write_text("".join(lines[:n]), encoding="utf-8")
    return root


def overridden(base: Sequence[object], later: Sequence[object]) -> list[str]:
    """`base` then `later`, without the arguments of `base` that `later` gives again: one argument given twice on a
    command line is refused (hf_gpt1.training.parse), so a test's own values replace a helper's defaults."""

    def name(word: str) -> str:
        return word.split("=")[0].replace("-", "_").removeprefix("__no_").removeprefix("__")

    base, later = [str(word) for word in base], [str(word) for word in later]
    given = {name(word) for word in later if word.startswith("--")}
    kept, dropping = [], False
    for word in base:
        if word.startswith("--"):
            dropping = name(word) in given
        if not dropping:
            kept.append(word)
    return [*kept, *later]


def glue_args(task: str, model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    """Arguments of a short `recipes/glue.py` run on a GLUE folder (`extra` replaces the defaults it gives again)."""
    base = [
        "--task", task, "--data_dir", str(data_dir), "--model_name_or_path", str(model), "--output_dir", str(out),
        "--num_train_epochs", "1", "--per_device_train_batch_size", "16", "--per_device_eval_batch_size", "32",
        "--max_seq_length", "64", "--learning_rate", "1e-3", "--logging_steps", "1", "--seed", "7", *COMMON,
    ]  # fmt: skip
    return overridden(base, extra)


@dataclass
class CommandResult:
    """What `hf-gpt1 <argv>` did, run in this process ([`run_command`])."""

    code: int
    stdout: str
    stderr: str
    argv: tuple[str, ...] = ()

    @property
    def error(self) -> str:
        """The refusal's message: its one `error: ...` line and the indented lines that continue it (a list of
        problems). Asserts a refusal (exit status 2), exactly one error line (progress bars may precede it on
        stderr) and no traceback."""
        assert self.code == 2 and "Traceback" not in self.stderr, (self.code, self.stderr[-2000:])
        lines = self.stderr.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("error: ")]
        assert len(starts) == 1, self.stderr[-2000:]
        end = starts[0] + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        return "\n".join(lines[starts[0] : end])

    def results(self) -> dict[str, Any]:
        """What the finished run wrote to its `--output_dir`, read as a user's tools read it: through the run
        folder's owner (`RunFolder.results`, strict). Asserts the command finished (exit status 0, its stderr shown
        when not) and that the folder records its results. A method, not a property: it reads the disk."""
        from hf_gpt1.training.run_folder import RunFolder

        assert self.code == 0, (self.code, self.stderr[-3000:])
        results = RunFolder(output_dir_of(self.argv)).results()
        assert results is not None, f"{output_dir_of(self.argv)} records no results"
        return results


def output_dir_of(argv: Sequence[str]) -> str:
    """The `--output_dir` of a command line (`--output_dir X`, `--output_dir=X`, or dashed: `--output-dir`)."""
    for i, word in enumerate(argv):
        name, equals, value = word.partition("=")
        if name in ("--output_dir", "--output-dir"):
            return value if equals else argv[i + 1]
    raise AssertionError(f"no --output_dir in {list(argv)}")


def run_command(capsys, *argv: str | os.PathLike) -> CommandResult:
    """`hf-gpt1 <argv>` in this process, through `hf_gpt1.commands.main` (what the console script calls): its exit
    status, stdout and stderr, as a subprocess would give them, without a fresh interpreter's seconds of imports. The
    one way the tests drive a command in-process: read `.error` for a refusal, `.results()` for a finished run.
    Paths are passed as their text, as a shell would."""
    from hf_gpt1.commands import main

    argv = tuple(os.fspath(word) if isinstance(word, os.PathLike) else str(word) for word in argv)
    capsys.readouterr()
    try:
        main(list(argv))
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if isinstance(stop.code, str):  # sys.exit("message"): Python prints it to stderr
            print(stop.code, file=sys.stderr)
    captured = capsys.readouterr()
    return CommandResult(code, captured.out, captured.err, argv)


def glue_error(capsys, tiny: Path, tmp_path: Path, *extra: object, train=None, task="rte", model=None) -> str:
    """`hf-gpt1 glue` refused: a one-step run of `task` on `tiny` (or `model`), `extra` overriding its arguments;
    returns the error ([`CommandResult.error`]) and asserts the output folder was not claimed."""
    from hf_gpt1.training.run_folder import RUN_FILE

    out = tmp_path / "out"
    argv = ["--task", task, "--model_name_or_path", model or tiny, "--output_dir", out, "--report_to", "none"]
    argv += [
        "--max_steps",
        "1",
        "--per_device_train_batch_size",
        "1",
        "--save_strategy",
        "no",
        "--eval_strategy",
        "no",
    ]
    if train is not None:
        argv += ["--train_file", train]
    message = run_command(capsys, "glue", *overridden([str(a) for a in argv], [str(a) for a in extra])).error
    assert not (out / RUN_FILE).exists(), "a failed start must not claim the output folder"
    return message


def glue_argv(model, train, dev, output_dir, seed=11, extra=()):
    argv = ["--task", "rte", "--model_name_or_path", model, "--train_file", train, "--validation_file", dev]
    argv += ["--output_dir", output_dir, "--num_train_epochs", "2", "--per_device_train_batch_size", "8"]
    argv += ["--max_seq_length", "64", "--save_strategy", "steps", "--save_steps", "2", "--eval_strategy", "no"]
    argv += ["--logging_steps", "1", "--report_to", "none", "--seed", str(seed), "--use_cpu", "--full_determinism"]
    return overridden([str(a) for a in argv], [str(a) for a in extra])


def story_cloze_csv(path: Path, n: int) -> Path:
    """A Story Cloze 2016-format CSV of `n` stories (the layout of cloze_test_val__spring2016.csv)."""
    columns = ["InputStoryid", *(f"InputSentence{i}" for i in range(1, 5))]
    columns += ["RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2", "AnswerRightEnding"]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows([f"s{i}", "a", "b", "c", "d", "e", "f", 1 + i % 2] for i in range(n))
    return path


def openai_gpt_folder(folder: Path, n_layer: int = 6) -> Path:
    """A tiny `openai-gpt` checkpoint in transformers' own format: OpenAIGPT classes, the original 40,478-token BPE as
    vocab.json + merges.txt; 6 blocks by default, so that `--transfer_layers 6` has them."""
    from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel

    bpe = shared_data("gpt1_bpe")
    config = OpenAIGPTConfig(vocab_size=40478, n_positions=512, n_embd=16, n_layer=n_layer, n_head=2)
    OpenAIGPTLMHeadModel(config).save_pretrained(folder)
    (folder / "vocab.json").write_bytes((bpe / "encoder_bpe_40000.json").read_bytes())
    (folder / "merges.txt").write_bytes((bpe / "vocab_40000.bpe").read_bytes())
    return folder


class Killed(BaseException):
    """A kill at an exact moment (BaseException: no `except Exception` on the way may swallow it)."""


class _DyingWriter:
    """A file being written that gets half of its first write onto the disk, then `failure`."""

    def __init__(self, real, failure: BaseException):
        self.real, self.failure = real, failure

    def write(self, data):
        self.real.write(data[: max(1, len(data) // 2)])
        self.real.flush()
        raise self.failure

    def fileno(self):  # no file descriptor: copies (shutil) must go through write() too
        raise io.UnsupportedOperation("fileno")

    def __getattr__(self, name):
        return getattr(self.real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.real.close()


def fail_writes_to(monkeypatch, name: str, failure: BaseException) -> None:
    """Every file opened for writing whose name contains `name` dies half-way through its first write."""
    real_open = builtins.open

    def dying_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and name in os.fspath(file) and any(m in mode for m in "wxa"):
            return _DyingWriter(handle, failure)
        return handle

    monkeypatch.setattr(builtins, "open", dying_open)
    monkeypatch.setattr(io, "open", dying_open)


def predict_args(model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    return overridden([
        "--task", "rte", "--model_name_or_path", str(model), "--data_dir", str(data_dir), "--output_dir", str(out),
        "--do_train", "false", "--per_device_eval_batch_size", "8", *COMMON,
    ], extra)  # fmt: skip


def _same_size_and_time(path: Path, text: str) -> None:
    """Replaces a file's content with `text` of the same length, keeping its modification time."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _rte_jsonl(labels: list[str]) -> str:
    rows = [
        {"sentence1": f"A man number {i:02d} plays.", "sentence2": "A person plays.", "label": label}
        for i, label in enumerate(labels)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def _train_loss(results: dict) -> list[float]:
    return [entry["loss"] for entry in results["log_history"] if "loss" in entry]


def plan_problems(recipe: str, model: dict, data: dict, training: dict) -> list[str]:
    """The problems the plan of `recipe` ("pretrain", "glue" or "multiple_choice") finds with these arguments (each
    dataclass built from its dict, as the parse builds it): arguments in, the plan's problem lines out. For the plan's
    refusals; the parse's stay on argv (`run_command`)."""
    from hf_gpt1.errors import ArgumentProblems
    from hf_gpt1.training import arguments as a

    if recipe == "pretrain":
        from hf_gpt1.training.pretrain import plan_pretraining as plan

        classes = (a.PretrainModelArguments, a.PretrainDataArguments, a.PretrainTrainingArguments)
    else:
        from hf_gpt1.training.finetune import plan_finetuning

        def plan(*built):
            return plan_finetuning(*built, recipe=recipe)

        classes = (a.ModelArguments, a.DataArguments, a.GPT1TrainingArguments)
    training = {"report_to": "none", **training}
    built = [cls(**{k: str(v) if isinstance(v, Path) else v for k, v in values.items()})
             for cls, values in zip(classes, (model, data, training))]  # fmt: skip
    with pytest.raises((ValueError, OSError)) as caught:  # alone, a missing path is a FileNotFoundError
        plan(*built)
    err = caught.value
    return err.problems if isinstance(err, ArgumentProblems) else [str(err)]


def recording_trainer(monkeypatch, module, name: str) -> list[tuple[str, Any]]:
    """Replaces the Trainer class `module.<name>` (the one a recipe builds) by a recorder that records how it was
    built and what was called (`("init", kwargs)`, `("train", ...)`, `("evaluate", ...)`), and runs the real one;
    also records the plan the recipe made (`("plan", plan)`, first). Returns the records, in order."""
    calls: list[tuple[str, Any]] = []
    real = getattr(module, name)

    class Recorder(real):
        def __init__(self, *args, **kwargs):
            calls.append(("init", kwargs))
            super().__init__(*args, **kwargs)

        def train(self, *args, **kwargs):
            calls.append(("train", kwargs))
            return super().train(*args, **kwargs)

        def evaluate(self, *args, **kwargs):
            calls.append(("evaluate", kwargs))
            return super().evaluate(*args, **kwargs)

    planner = next(getattr(module, f) for f in ("plan_finetuning", "plan_pretraining") if hasattr(module, f))

    def plan(*args, **kwargs):
        made = planner(*args, **kwargs)
        calls.append(("plan", made))
        return made

    monkeypatch.setattr(module, name, Recorder)
    monkeypatch.setattr(module, planner.__name__, plan)
    return calls


def trainer_arguments(tmp_path: Path, **overrides: Any) -> Any:
    """The training arguments of a Trainer test: under tmp_path/out, reporting nowhere, logging every step."""
    from hf_gpt1.training.arguments import RecipeTrainingArguments

    fields = dict(output_dir=str(tmp_path / "out"), report_to=[], disable_tqdm=True, logging_steps=1, seed=0)
    fields.update(overrides)
    return RecipeTrainingArguments(**fields)


def lm_windows(n: int, length: int = 16) -> Any:
    """`n` seeded language-model windows of `length` tokens (a `datasets.Dataset` of input_ids and labels)."""
    import datasets

    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 60, (n, length), generator=generator).tolist()
    return datasets.Dataset.from_dict({"input_ids": ids, "labels": ids})


def lm_trainer(tmp_path: Path, n: int = 16, **overrides: Any) -> Any:
    """A GPT1Trainer of the tiny language model on `n` windows ([`trainer_arguments`] with `overrides`)."""
    from transformers import default_data_collator

    from hf_gpt1 import GPT1LMHeadModel
    from hf_gpt1.training.trainer import GPT1Trainer

    return GPT1Trainer(
        model=GPT1LMHeadModel(tiny_config()),
        args=trainer_arguments(tmp_path, per_device_train_batch_size=4, **overrides),
        train_dataset=lm_windows(n),
        data_collator=default_data_collator,
    )


def error_task(metric_config: str = "mse_mae", main_metric: str = "mse") -> Any:
    """Registers "stars", a 0-5 score task measured by an error (mse by default); use with `own_registry`."""
    from hf_gpt1.data.tasks import TaskSpec, register_task

    return register_task(
        TaskSpec(name="stars", format="classification", text_columns=("text",), label_range=(0.0, 5.0),
                 metric_config=metric_config, main_metric=main_metric)
    )  # fmt: skip
