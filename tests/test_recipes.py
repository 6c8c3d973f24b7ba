"""End-to-end tests of the recipes on small slices of real data (../shared/data) with a tiny GPT-1.

A session fixture pre-trains a 2-layer, 64-wide model on a WikiText-2 slice (the pre-training recipe's own test); the
fine-tuning tests start from it. Runs are in-process (`finetune_main(..., argv)`) except one CLI run of a YAML
config through `recipes/glue.py`. Bad inputs must fail with a message naming the problem *before* training starts:
`Trainer.train` is patched to fail loudly in those tests.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file
from transformers import Trainer, TrainerCallback

from hf_gpt1 import finetuning
from hf_gpt1.finetuning import DataArguments, finetune_main, load_raw_splits
from hf_gpt1.pretraining import pretrain_main
from hf_gpt1.tasks import get_task
from hf_gpt1.training import COMPLETE_MARKER, last_complete_checkpoint, parse_recipe_args, run_recipe
from tests.conftest import REPO_ROOT, shared_data

TINY = ["--n_layer", "2", "--n_embd", "64", "--n_head", "4", "--n_positions", "64", "--vocab_size", "1000"]
COMMON = ["--report_to", "none", "--disable_tqdm", "true", "--use_cpu", "true", "--dataloader_num_workers", "0"]
GLUE_ROWS = {"train": 97, "dev": 49, "test": 31}  # lines kept per file, header included where the file has one


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def wikitext_slice(tmp_path_factory) -> dict[str, Path]:
    """~100 kB of WikiText-2 for training and a disjoint ~25 kB for held-out perplexity."""
    lines = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("wikitext")
    (folder / "train.txt").write_text("".join(lines[:400]), encoding="utf-8")
    (folder / "valid.txt").write_text("".join(lines[3000:3100]), encoding="utf-8")
    return {"train": folder / "train.txt", "validation": folder / "valid.txt"}


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory, wikitext_slice) -> Path:
    """A tiny GPT-1 pre-trained by `recipes/pretrain.py`'s code (dropout 0, so fine-tuning runs are reproducible)."""
    out = tmp_path_factory.mktemp("pretrain") / "run"
    results = pretrain_main(
        [
            "--train_files", str(wikitext_slice["train"]),
            "--validation_files", str(wikitext_slice["validation"]),
            "--output_dir", str(out),
            *TINY, "--dropout", "0",
            "--max_steps", "16", "--per_device_train_batch_size", "8", "--warmup_steps", "4",
            "--eval_steps", "8", "--save_steps", "8", "--logging_steps", "4", "--seed", "1",
            *COMMON,
        ]
    )  # fmt: skip
    out.joinpath("results_in_memory.json").write_text(json.dumps(results, default=str))
    return out


@pytest.fixture(scope="session")
def glue_slice(tmp_path_factory) -> Path:
    """The first rows of the real RTE, STS-B and CoLA TSVs, in the GLUE folder layout."""
    root = tmp_path_factory.mktemp("glue")
    for folder in ("RTE", "STS-B", "CoLA"):
        (root / folder).mkdir()
        for name, n in GLUE_ROWS.items():
            lines = shared_data("glue", folder, f"{name}.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
            (root / folder / f"{name}.tsv").write_text("".join(lines[:n]), encoding="utf-8")
    return root


def glue_args(task: str, model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--task", task, "--data_dir", str(data_dir), "--model_name_or_path", str(model), "--output_dir", str(out),
        "--num_train_epochs", "1", "--per_device_train_batch_size", "16", "--per_device_eval_batch_size", "32",
        "--max_seq_length", "64", "--learning_rate", "1e-3", "--logging_steps", "1", "--seed", "7",
        *COMMON, *extra,
    ]  # fmt: skip


# ------------------------------------------------------------------------------------------------ pre-training


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
    config = json.loads((tiny_lm / "config.json").read_text())
    assert (config["n_layer"], config["n_embd"], config["n_positions"]) == (2, 64, 64)


def test_retained_cpu_memory_is_reused_without_page_faults():
    """A freed 64 MiB tensor's pages serve the next one instead of being faulted in again (in a fresh process: the
    setting is process-wide)."""
    code = """
import resource, torch
from hf_gpt1.training import retain_freed_cpu_memory
def faults_of_an_allocation():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(1 << 24).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults_of_an_allocation()
plain = faults_of_an_allocation()
applied = retain_freed_cpu_memory()
faults_of_an_allocation()  # the first allocation after the switch grows the heap
print(plain, applied, faults_of_an_allocation())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    plain, applied, retained = out.stdout.split()
    if applied != "True":
        pytest.skip("retain_freed_cpu_memory needs glibc")
    assert int(plain) > 10_000  # 16,384 pages of 4 KiB, faulted in on every allocation
    assert int(retained) < 100


@pytest.mark.parametrize(
    "trainer_class, flag, expected",
    [("GPT1Trainer", None, False), ("PretrainTrainer", None, True), ("GPT1Trainer", True, True),
     ("PretrainTrainer", False, False)],
)  # fmt: skip
def test_trainers_retain_cpu_memory_where_batch_shapes_are_fixed(trainer_class, flag, expected, tmp_path, monkeypatch):
    from hf_gpt1 import GPT1Config, GPT1LMHeadModel, pretraining, training

    calls = []
    monkeypatch.setattr(training, "retain_freed_cpu_memory", lambda: calls.append(1) or True)
    args = training.RecipeTrainingArguments(
        output_dir=str(tmp_path), report_to=[], use_cpu=True, retain_cpu_memory=flag
    )
    model = GPT1LMHeadModel(GPT1Config(vocab_size=50, n_positions=8, n_embd=16, n_layer=1, n_head=2))
    getattr(pretraining, trainer_class)(model=model, args=args)
    assert calls == ([1] if expected else [])


# ------------------------------------------------------------------------------------------------ GLUE

METRICS = {
    "rte": {"accuracy": (0.0, 1.0)},
    "stsb": {"pearson": (-1.0, 1.0), "spearmanr": (-1.0, 1.0)},
    "cola": {"matthews_correlation": (-1.0, 1.0)},
}
SUBMISSIONS = {"rte": "RTE.tsv", "stsb": "STS-B.tsv", "cola": "CoLA.tsv"}


def check_glue_run(task: str, out: Path) -> dict:
    results = json.loads((out / "all_results.json").read_text())
    assert results["task"] == task
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"):
        assert (out / name).is_file(), name
    validation = results["validation"]
    for name, (low, high) in METRICS[task].items():
        value = validation[f"eval_validation_{name}"]
        assert low <= value <= high, (name, value)
    assert validation["eval_validation_loss"] > 0
    train_logs = [entry for entry in results["log_history"] if "loss" in entry]
    assert train_logs and all("clf_loss" in entry and "lm_loss" in entry for entry in train_logs)
    # The GLUE server's submission file: a header, then one `index<TAB>prediction` row per test row, in order.
    rows = (out / SUBMISSIONS[task]).read_text().splitlines()
    assert rows[0] == "index\tprediction" and len(rows) == GLUE_ROWS["test"]
    indices, predictions = zip(*(row.split("\t") for row in rows[1:]))
    assert [int(i) for i in indices] == list(range(GLUE_ROWS["test"] - 1))
    if task == "stsb":
        assert all(math.isfinite(float(p)) for p in predictions)
    else:
        assert set(predictions) <= set(get_task(task).label_names)
    return results


@pytest.mark.parametrize("task", ["stsb", "cola"])
def test_glue_recipe(task, tiny_lm, glue_slice, tmp_path):
    out = tmp_path / task
    results = finetune_main("glue", multiple_choice=False, argv=glue_args(task, tiny_lm, glue_slice, out))
    check_glue_run(task, out)
    assert results["task"] == task
    config = json.loads((out / "config.json").read_text())
    assert len(config["id2label"]) == (1 if task == "stsb" else 2)


def yaml_value(text: str):
    """A command-line value as its YAML type (PyYAML reads `1e-3` as a string: floats are written with a dot)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def test_glue_cli_from_yaml(tiny_lm, glue_slice, tmp_path):
    """`python recipes/glue.py run.yaml`: every argument from one YAML file, through the real command line (RTE)."""
    out = tmp_path / "rte"
    args = glue_args("rte", tiny_lm, glue_slice, out)
    config = {key.lstrip("-"): yaml_value(value) for key, value in zip(args[::2], args[1::2])}
    path = tmp_path / "rte.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "recipes/glue.py", str(path)], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = check_glue_run("rte", out)
    assert results["train"]["epoch"] == 1.0


def test_example_recipe_yaml_parses():
    """recipes/configs/rte.yaml is a complete glue.py configuration with the paper's hyper-parameters."""
    model_args, data_args, training_args = parse_recipe_args(
        (finetuning.ModelArguments, finetuning.DataArguments, finetuning.GPT1TrainingArguments),
        [str(REPO_ROOT / "recipes" / "configs" / "rte.yaml")],
    )
    assert data_args.task == "rte" and data_args.data_dir
    assert model_args.lm_coef == 0.5
    assert training_args.learning_rate == 6.25e-5 and training_args.per_device_train_batch_size == 32
    assert training_args.num_train_epochs == 3


# ------------------------------------------------------------------------------------------------ multiple choice

WORDS = "the a cat dog ran sat home park rain sun happy sad friend went saw ate cake played game won lost".split()


def sentence(rng: random.Random, n: int = 6) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def write_story_cloze(path: Path, n: int, seed: int) -> None:
    """A CSV with the ROCStories / Story Cloze 2016 columns (the right ending is a copy of sentence 4, learnable)."""
    rng = random.Random(seed)
    columns = ["InputStoryid", *(f"InputSentence{i}" for i in range(1, 5))]
    columns += ["RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2", "AnswerRightEnding"]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for i in range(n):
            story = [sentence(rng) for _ in range(4)]
            right, wrong = story[-1], sentence(rng)
            answer = rng.choice([1, 2])
            endings = [right, wrong] if answer == 1 else [wrong, right]
            writer.writerow([f"story-{i}", *story, *endings, answer])


def write_swag(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["video-id", "sent1", "sent2", "ending0", "ending1", "ending2", "ending3", "label"])
        for i in range(n):
            endings = [sentence(rng, 4) for _ in range(4)]
            writer.writerow([f"v{i}", sentence(rng), "Then they", *endings, rng.randrange(4)])


def mc_args(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--model_name_or_path", str(model), "--output_dir", str(out), "--num_train_epochs", "1",
        "--per_device_train_batch_size", "8", "--max_seq_length", "64", "--logging_steps", "1", *COMMON, *extra,
    ]  # fmt: skip


def test_story_cloze_recipe(tiny_lm, tmp_path):
    files = {split: tmp_path / f"{split}.csv" for split in ("train", "validation", "test")}
    for seed, (split, path) in enumerate(files.items()):
        write_story_cloze(path, {"train": 48, "validation": 24, "test": 20}[split], seed)
    out = tmp_path / "out"
    args = mc_args(tiny_lm, out, "--task", "story_cloze", "--segment_cap", "30")
    args += [f"--{split}_file={path}" for split, path in files.items()]
    finetune_main("multiple_choice", multiple_choice=True, argv=args)
    results = json.loads((out / "all_results.json").read_text())
    assert 0.0 <= results["validation"]["eval_validation_accuracy"] <= 1.0
    rows = Path(results["test_predictions"]).read_text().splitlines()
    assert rows[0] == "index\tprediction" and len(rows) == 21
    assert {row.split("\t")[1] for row in rows[1:]} <= {"0", "1"}


def test_swag_recipe(tiny_lm, tmp_path):
    train, validation = tmp_path / "train.csv", tmp_path / "val.csv"
    write_swag(train, 32, 0)
    write_swag(validation, 16, 1)
    out = tmp_path / "out"
    args = mc_args(tiny_lm, out, "--task", "swag", "--train_file", str(train), "--validation_file", str(validation))
    finetune_main("multiple_choice", multiple_choice=True, argv=args)
    results = json.loads((out / "all_results.json").read_text())
    assert 0.0 <= results["validation"]["eval_validation_accuracy"] <= 1.0
    assert results["train"]["train_loss"] > 0


def test_story_cloze_protocol_split(tmp_path):
    """--story_cloze_protocol: the 1,871 stories of the 2016 validation CSV → 1,497 train / 374 validation, fixed."""
    path, test = tmp_path / "val2016.csv", tmp_path / "test2016.csv"
    write_story_cloze(path, 1871, 0)
    write_story_cloze(test, 10, 1)
    data = DataArguments(task="story_cloze", train_file=str(path), test_file=str(test), story_cloze_protocol=True)
    splits = load_raw_splits(get_task("story_cloze"), data)
    assert {name: rows.num_rows for name, rows in splits.items()} == {"train": 1497, "validation": 374, "test": 10}
    train_ids, valid_ids = set(splits["train"]["InputStoryid"]), set(splits["validation"]["InputStoryid"])
    assert not train_ids & valid_ids and len(train_ids | valid_ids) == 1871
    again = load_raw_splits(get_task("story_cloze"), data)
    assert again["validation"]["InputStoryid"] == splits["validation"]["InputStoryid"]  # seed 3535999445, not random


# ------------------------------------------------------------------------------------------------ resume


class _Crash(RuntimeError):
    pass


class CrashAfterCheckpoint(TrainerCallback):
    """Simulates a run killed right after checkpoint `step` was written (and marked complete)."""

    def __init__(self, step: int):
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise _Crash(f"killed after checkpoint-{self.step}")


def test_resume_after_crash_matches_unbroken_run(tiny_lm, glue_slice, tmp_path, monkeypatch):
    """Stopped after checkpoint 4 of 12 (mid-epoch 1 of 2, dropout on), then `--resume`: same metrics and weights."""
    extra = ["--num_train_epochs", "2", "--save_strategy", "steps", "--save_steps", "4", "--eval_strategy", "no"]
    extra += ["--clf_pdrop", "0.1"]

    def args(out):
        return glue_args("rte", tiny_lm, glue_slice, out, *extra)

    unbroken = finetune_main("glue", multiple_choice=False, argv=args(tmp_path / "unbroken"))

    out = tmp_path / "crashed"
    crash = CrashAfterCheckpoint(4)
    original_init = finetuning.GPT1Trainer.__init__

    def init_with_crash(self, *a, **kw):
        original_init(self, *a, **kw)
        self.add_callback(crash)

    monkeypatch.setattr(finetuning.GPT1Trainer, "__init__", init_with_crash)
    with pytest.raises(_Crash):
        finetune_main("glue", multiple_choice=False, argv=args(out))
    monkeypatch.undo()
    assert last_complete_checkpoint(out) == str(out / "checkpoint-4")
    assert not (out / "all_results.json").exists()
    resumed = finetune_main("glue", multiple_choice=False, argv=[*args(out), "--resume", "true"])

    assert resumed["train"]["epoch"] == unbroken["train"]["epoch"] == 2.0
    for key, value in unbroken["validation"].items():
        if "runtime" not in key and "per_second" not in key:
            assert resumed["validation"][key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
    a, b = load_file(tmp_path / "unbroken" / "model.safetensors"), load_file(out / "model.safetensors")
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=1e-5, atol=1e-6, msg=name)
    # The logged loss of the steps after the checkpoint is the unbroken run's.
    before = {e["step"]: e["loss"] for e in unbroken["log_history"] if "loss" in e}
    after = {e["step"]: e["loss"] for e in resumed["log_history"] if "loss" in e and e["step"] > 4}
    assert after and all(after[s] == pytest.approx(before[s], rel=1e-5) for s in after)


# ------------------------------------------------------------------------------------------------ bad input


@pytest.fixture
def no_training(monkeypatch):
    """Bad input must be rejected before the first training step."""

    def train(self, *args, **kwargs):
        raise AssertionError("training started despite the bad input")

    monkeypatch.setattr(Trainer, "train", train)


def run_cli(capsys, recipe: str, argv: list[str]) -> str:
    """Runs a recipe's entry as its script does; returns the one-line error it printed (exit status 2)."""
    if recipe == "pretrain":
        main = lambda: pretrain_main(argv)  # noqa: E731
    else:
        main = lambda: finetune_main(recipe, multiple_choice=recipe == "multiple_choice", argv=argv)  # noqa: E731
    with pytest.raises(SystemExit) as exit_info:
        run_recipe(main)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    return lines[0]


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


RTE_ROWS = [["A man is here.", "Someone is here.", "entailment"], ["A cat.", "A dog.", "not_entailment"]] * 4


def csv_args(model: Path, out: Path, train: Path, *extra: str) -> list[str]:
    return ["--task", "rte", "--train_file", str(train), "--validation_file", str(train), *mc_args(model, out), *extra]


def test_bad_input_unknown_task(capsys, tiny_lm, tmp_path, no_training):
    err = run_cli(capsys, "glue", ["--task", "rtee", "--model_name_or_path", str(tiny_lm), "--output_dir", "x"])
    assert "Unknown task 'rtee'" in err and "rte" in err


def test_bad_input_wrong_recipe_for_task(capsys, tiny_lm, tmp_path, no_training):
    err = run_cli(capsys, "glue", ["--task", "story_cloze", "--output_dir", str(tmp_path / "o")])
    assert "multiple choice" in err and "multiple_choice.py" in err


def test_bad_input_misnamed_column(capsys, tiny_lm, tmp_path, no_training):
    rows = [["p", "h", "entailment"]] * 4
    train = write_csv(tmp_path / "train.csv", ["premise", "sentence2", "label"], rows)
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train))
    assert "'sentence1'" in err and "premise" in err


def test_bad_input_missing_label_column(capsys, tiny_lm, tmp_path, no_training):
    rows = [["p", "h", "entailment"]] * 4
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "gold"], rows)
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train))
    assert "'label'" in err and "gold" in err


def test_bad_input_missing_story_cloze_column(capsys, tiny_lm, tmp_path, no_training):
    path = tmp_path / "train.csv"
    write_story_cloze(path, 8, 0)
    text = path.read_text().replace("RandomFifthSentenceQuiz2", "Ending2", 1)
    path.write_text(text)
    argv = ["--task", "story_cloze", "--train_file", str(path), *mc_args(tiny_lm, tmp_path / "out")]
    err = run_cli(capsys, "multiple_choice", argv)
    assert "RandomFifthSentenceQuiz2" in err


def test_bad_input_label_outside_label_set(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], [*RTE_ROWS, ["a", "b", "maybe"]])
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train))
    assert "'maybe'" in err and "entailment" in err and "not_entailment" in err


def test_bad_input_label_outside_label_set_glue_tsv(capsys, tiny_lm, glue_slice, tmp_path, no_training):
    bad = tmp_path / "glue" / "RTE"
    bad.mkdir(parents=True)
    for name in ("train", "dev", "test"):
        text = (glue_slice / "RTE" / f"{name}.tsv").read_text()
        if name == "train":
            lines = text.splitlines(keepends=True)
            lines[3] = lines[3].rsplit("\t", 1)[0] + "\tcontradiction\n"
            text = "".join(lines)
        (bad / f"{name}.tsv").write_text(text)
    err = run_cli(capsys, "glue", glue_args("rte", tiny_lm, bad.parent, tmp_path / "out"))
    assert "train.tsv:4" in err and "'contradiction'" in err


def test_bad_input_unparsable_file(capsys, tiny_lm, tmp_path, no_training):
    train = tmp_path / "train.csv"
    train.write_text('sentence1,sentence2,label\n"a","b",entailment\n"c","d","not_entailment",extra,fields\n')
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train))
    assert "Could not parse" in err and str(train) in err


def test_bad_input_unparsable_json(capsys, tiny_lm, tmp_path, no_training):
    train = tmp_path / "train.jsonl"
    train.write_text('{"sentence1": "a", "sentence2": "b", "label": "entailment"}\n{"sentence1": "c", \n')
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train))
    assert "Could not parse" in err and str(train) in err


def test_bad_input_missing_file(capsys, tiny_lm, tmp_path, no_training):
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", tmp_path / "nope.csv"))
    assert "nope.csv" in err and "does not exist" in err


def test_bad_input_output_dir_of_another_run(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    err = run_cli(capsys, "glue", csv_args(tiny_lm, foreign, train))
    assert "already holds files that are not from an hf_gpt1 run" in err and "--overwrite_output_dir" in err
    assert (foreign / "notes.txt").is_file()  # nothing was deleted
    # An hf_gpt1 run of something else (here: the pre-training run) is named as such.
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tiny_lm, train))
    assert "already holds another run" in err and "'pretrain'" in err
    # --resume with other arguments refuses too.
    err = run_cli(capsys, "glue", [*csv_args(tiny_lm, tiny_lm, train), "--resume", "true"])
    assert "--resume" in err and "different run" in err


def test_overwrite_output_dir_is_checked_before_deleting(tiny_lm, tmp_path, no_training):
    """With --overwrite_output_dir the folder is replaced; the run then gets as far as training (patched away)."""
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    with pytest.raises(AssertionError, match="training started"):
        finetune_main("glue", False, csv_args(tiny_lm, foreign, train, "--overwrite_output_dir", "true"))
    assert not (foreign / "notes.txt").exists() and (foreign / "hf_gpt1_run.json").is_file()


def test_bad_input_max_seq_length_above_n_positions(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    err = run_cli(capsys, "glue", csv_args(tiny_lm, tmp_path / "out", train, "--max_seq_length", "65"))
    assert "--max_seq_length 65" in err and "n_positions=64" in err


def test_bad_input_pretrain_missing_and_empty_files(capsys, tmp_path, no_training):
    out = str(tmp_path / "out")
    err = run_cli(capsys, "pretrain", ["--train_files", str(tmp_path / "none.txt"), "--output_dir", out, *COMMON])
    assert "none.txt" in err and "does not exist" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    err = run_cli(capsys, "pretrain", ["--train_files", str(empty), "--output_dir", out, "--overwrite_output_dir",
                                       "true", *COMMON])  # fmt: skip
    assert "empty.txt" in err and "empty" in err
