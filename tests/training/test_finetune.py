# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The fine-tuning recipes (`hf_gpt1.training.finetune`) end to end, on slices of the real GLUE files (../shared/data)
and on hand-made files in the official layouts, starting from the tiny GPT-1 that the pre-training recipe trains
(conftest).

What a user hands in must be right: submission files in input order with the file's ids (whatever the batching),
every row of a test file that GLUE's own loader would read, AX, Story Cloze test accuracy from the best-validation
checkpoint, prediction-only runs, one summary at the end. Bad input is rejected before training starts.
"""

from __future__ import annotations

import csv
import dataclasses
import errno
import json
import math
import random
import re
import shutil
from pathlib import Path

import datasets
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file
from transformers import AutoTokenizer, TrainerCallback, pipeline

from hf_gpt1 import GPT1ForSequenceClassification
from hf_gpt1.data.tasks import get_task
from hf_gpt1.data.transforms import rows_to_truncate, segment_lengths
from hf_gpt1.tokenization_gpt1 import load_gpt1_tokenizer
from hf_gpt1.training import finetune
from hf_gpt1.training.checkpoints import last_complete_checkpoint
from hf_gpt1.training.curves import learning_curves
from hf_gpt1.training.trainer import GPT1Trainer
from tests.utils import (
    COMMON,
    GLUE_ROWS,
    Killed,
    fail_writes_to,
    glue_args,
    overridden,
    plan_problems,
    predict_args,
    run_command,
    shared_data,
)

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
def test_glue_recipe(task, tiny_lm, glue_slice, tmp_path, capsys):
    out = tmp_path / task
    results = run_command(capsys, "glue", *glue_args(task, tiny_lm, glue_slice, out)).results()
    check_glue_run(task, out)
    assert results["task"] == task
    config = json.loads((out / "config.json").read_text())
    assert len(config["id2label"]) == (1 if task == "stsb" else 2)
    assert config["original_embedding_table"] is True  # the paper recipe's default


# ------------------------------------------------------------------------------------------------ predictions


def rte_folder(root: Path, train_rows: int, test_rows: int, quoted: bool = False) -> Path:
    """An RTE folder from the real files: `train_rows` training pairs, the dev file, and `test_rows` test pairs of
    varied lengths (dev pairs without their labels), optionally with fields that start with a quote."""
    source = shared_data("glue", "RTE")
    folder = root / "RTE"
    folder.mkdir(parents=True)
    train = source.joinpath("train.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "train.tsv").write_text("".join(train[: train_rows + 1]), encoding="utf-8")
    dev = source.joinpath("dev.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "dev.tsv").write_text("\n".join(dev[:41]) + "\n", encoding="utf-8")
    lines = ["index\tsentence1\tsentence2"]
    for i, row in enumerate(dev[1 : test_rows + 1]):
        _, s1, s2, _ = row.split("\t")
        if quoted and i % 3 == 0:  # as in QNLI's files: a field that opens a quote it never closes, and one that does
            s1, s2 = f'"{s1}', f'"{s2}" he said'
        lines.append(f"{i}\t{s1}\t{s2}")
    (folder / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def in_order_predictions(model_dir: Path, test_tsv: Path) -> list[tuple[str, float]]:
    """Each test row classified on its own, in file order, by the stock pipeline: (label, margin of its score)."""
    classifier = pipeline("text-classification", model=str(model_dir))
    rows = [line.split("\t") for line in test_tsv.read_text(encoding="utf-8").splitlines()[1:]]
    out = []
    for _, s1, s2 in rows:
        scores = classifier({"text": s1, "text_pair": s2}, top_k=None)
        top, second = sorted((d["score"] for d in scores), reverse=True)[:2]
        out.append((max(scores, key=lambda d: d["score"])["label"], top - second))
    return out


def test_test_predictions_are_in_input_order_whatever_the_batching(tiny_lm, tmp_path, capsys):
    """Length-grouped training batches (transformers then groups eval batches too) must not reorder the submission:
    row by row it equals an in-order pass of the saved model; GLUE's quoted fields are read as GLUE reads them."""
    folder = rte_folder(tmp_path / "glue", train_rows=64, test_rows=60, quoted=True)
    out = tmp_path / "out"
    extra = ["--train_sampling_strategy", "group_by_length", "--per_device_eval_batch_size", "8"]
    run_command(capsys, "glue", *glue_args("rte", tiny_lm, folder.parent, out, *extra)).results()
    written = [row.split("\t") for row in (out / "RTE.tsv").read_text().splitlines()[1:]]
    assert [int(index) for index, _ in written] == list(range(60))  # every row, the file's ids, in order
    expected = in_order_predictions(out, folder / "test.tsv")
    decided = [(label, (want, margin)) for (_, label), (want, margin) in zip(written, expected) if margin > 1e-4]
    assert len(decided) >= 50  # rows whose prediction is not a numerical tie
    assert all(label == want for label, (want, _) in decided)


def test_glue_tsv_given_as_files_is_read_like_glue(tiny_lm, tmp_path, capsys):
    """`--train_file/--validation_file/--test_file` with official TSVs: no CSV quoting (a field may start with `"`),
    the GLUE column names, and exactly one prediction per test line."""
    folder = rte_folder(tmp_path / "glue", train_rows=32, test_rows=12, quoted=True)
    out = tmp_path / "out"
    argv = ["--task", "rte", "--model_name_or_path", str(tiny_lm), "--output_dir", str(out)]
    argv += ["--train_file", str(folder / "train.tsv"), "--validation_file", str(folder / "dev.tsv")]
    argv += ["--test_file", str(folder / "test.tsv"), "--num_train_epochs", "1", "--max_seq_length", "64", *COMMON]
    run_command(capsys, "glue", *argv).results()
    assert len((out / "RTE.tsv").read_text().splitlines()) == 13


def test_rows_longer_than_max_seq_length_are_counted_per_split(tiny_lm, tmp_path, caplog, capsys):
    """Truncation changes what the model sees: each split says how many of its rows the collator will shorten."""
    folder = rte_folder(tmp_path / "glue", train_rows=24, test_rows=12)
    tokenizer = load_gpt1_tokenizer(str(tiny_lm))
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731

    def too_long(path: Path, first: int) -> int:  # rows of `<s> a <$> b <e>` over 48 tokens
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
        lengths = [len(encode(r[first])) + len(encode(r[first + 1])) + 3 for r in rows]
        return sum(length > 48 for length in lengths)

    expected = {name: too_long(folder / f"{name}.tsv", 1) for name in ("train", "dev", "test")}
    assert 0 < expected["train"] < 24  # the check means something: some rows are cut, some are not
    argv = glue_args("rte", tiny_lm, folder.parent, tmp_path / "out", "--max_seq_length", "48")
    with caplog.at_level("WARNING", logger="hf_gpt1.training.finetune"):
        run_command(capsys, "glue", *argv).results()
    for name, rows in (("train", 24), ("dev", 40), ("test", 12)):
        message = f"{folder / name}.tsv: {expected[name]} of {rows} rows are longer than 48 tokens"
        assert message in caplog.text, (message, caplog.text)


def test_rows_to_truncate_counts_what_the_collators_cut():
    """The count of cut rows follows each format's special tokens and the multiple-choice segment cap."""

    count = rows_to_truncate
    single = datasets.Dataset.from_dict({"segment_a": [[1] * 8, [1] * 9, [1] * 3]})
    assert count(single, "classification", 10, None) == 1  # s text e: 9 + 2 > 10
    pairs = datasets.Dataset.from_dict({"segment_a": [[1] * 4, [1] * 5], "segment_b": [[2] * 3, [2] * 3]})
    assert count(pairs, "entailment", 10, None) == 1  # s a $ b e: 5 + 3 + 3 > 10
    choices = datasets.Dataset.from_dict(
        {"context": [[1] * 4, [1] * 4, [1] * 6], "choices": [[[2] * 2, [2] * 3], [[2] * 2, [2] * 4], [[2], [2]]]}
    )
    # s context $ answer e, for the longest answer: 4 + 4 + 3 > 10
    assert count(choices, "multiple_choice", 10, None) == 1
    assert count(choices, "multiple_choice", 20, 5) == 1  # a segment over the cap is cut whatever the total
    filtered = choices.filter(lambda row: len(row["context"]) == 4)  # read through the filter's index mapping
    assert count(filtered, "multiple_choice", 10, None) == 1
    # the segment lengths: context + the longest answer, text a + text b (prepare_dataset's `length` column, which
    # group_by_length sorts on, is the same sum: tests/test_standard_tools.py::test_prepared_rows_carry_their_length)
    assert sum(segment_lengths(choices, "multiple_choice")).tolist() == [7, 8, 7]
    assert sum(segment_lengths(filtered, "multiple_choice")).tolist() == [7, 8]
    assert sum(segment_lengths(pairs, "entailment")).tolist() == [7, 8]


def test_prediction_only_run_from_a_folder_without_train_tsv(tiny_lm, tmp_path, capsys):
    """A fine-tuned model predicts a GLUE folder that holds dev and test files only (`--do_train false`); a file
    overrides one split of the folder."""
    folder = rte_folder(tmp_path / "glue", train_rows=32, test_rows=20)
    trained = tmp_path / "trained"
    run_command(capsys, "glue", *glue_args("rte", tiny_lm, folder.parent, trained)).results()
    (folder / "train.tsv").unlink()
    out = tmp_path / "predicted"
    base = ["--task", "rte", "--model_name_or_path", str(trained), "--data_dir", str(folder.parent)]
    predict = ["--output_dir", str(out), "--do_train", "false", "--max_seq_length", "64", *COMMON]
    results = run_command(capsys, "glue", *base, *predict).results()
    assert (out / "RTE.tsv").read_text() == (trained / "RTE.tsv").read_text()
    assert results["validation"]["eval_validation_accuracy"] == pytest.approx(
        json.loads((trained / "all_results.json").read_text())["validation"]["eval_validation_accuracy"]
    )
    assert "train" not in results
    # --test_file replaces the folder's test split: the first 5 rows only
    short = tmp_path / "short.tsv"
    short.write_text("".join((folder / "test.tsv").read_text().splitlines(keepends=True)[:6]))
    predict = ["--test_file", str(short), "--output_dir", str(tmp_path / "p2"), "--do_train", "false", *COMMON]
    run_command(capsys, "glue", *base, *predict).results()
    assert (tmp_path / "p2" / "RTE.tsv").read_text().splitlines() == (out / "RTE.tsv").read_text().splitlines()[:6]


def mnli_folder(root: Path) -> Path:
    """MNLI and diagnostic folders in the GLUE layout, with the real RTE sentences and random MNLI labels."""
    rng = random.Random(0)
    pairs = [row.split("\t")[1:3] for row in shared_data("glue", "RTE", "dev.tsv").read_text().splitlines()[1:61]]
    labels = ["entailment", "neutral", "contradiction"]
    (root / "MNLI").mkdir(parents=True)
    (root / "diagnostic").mkdir()

    def write(path: Path, rows: list[list[str]], header: list[str]) -> None:
        path.write_text("\n".join("\t".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")

    labelled = ["index", "genre", "sentence1", "sentence2", "gold_label"]
    write(
        root / "MNLI" / "train.tsv",
        [[str(i), "fiction", a, b, rng.choice(labels)] for i, (a, b) in enumerate(pairs)],
        labelled,
    )
    for name in ("dev_matched", "dev_mismatched"):
        write(
            root / "MNLI" / f"{name}.tsv",
            [[str(i), "x", a, b, rng.choice(labels)] for i, (a, b) in enumerate(pairs[:16])],
            labelled,
        )
    for name in ("test_matched", "test_mismatched"):
        write(root / "MNLI" / f"{name}.tsv", [[str(i), "x", a, b] for i, (a, b) in enumerate(pairs[:9])], labelled[:4])
    diagnostic = [[str(i), b, a] for i, (a, b) in enumerate(pairs[:7])]
    write(root / "diagnostic" / "diagnostic.tsv", diagnostic, ["index", "sentence1", "sentence2"])
    return root


def test_mnli_writes_ax_and_the_ax_task_predicts_with_an_mnli_model(tiny_lm, tmp_path, capsys):
    root = mnli_folder(tmp_path / "glue")
    out = tmp_path / "mnli"
    results = run_command(capsys, "glue", *glue_args("mnli", tiny_lm, root, out)).results()
    assert {"validation_matched", "validation_mismatched"} <= set(results)
    for name, rows in (("MNLI-m.tsv", 9), ("MNLI-mm.tsv", 9), ("AX.tsv", 7)):
        lines = (out / name).read_text().splitlines()
        assert lines[0] == "index\tprediction" and len(lines) == rows + 1, name
        assert {line.split("\t")[1] for line in lines[1:]} <= {"entailment", "neutral", "contradiction"}
    ax = tmp_path / "ax"
    argv = ["--task", "ax", "--model_name_or_path", str(out), "--data_dir", str(root), "--output_dir", str(ax)]
    run_command(capsys, "glue", *argv, "--do_train", "false", *COMMON).results()
    assert (ax / "AX.tsv").read_text() == (out / "AX.tsv").read_text()


def test_ax_cannot_be_trained(tiny_lm, tmp_path):
    problems = plan_problems("glue", {"model_name_or_path": tiny_lm}, {"task": "ax"}, {"output_dir": tmp_path / "x"})
    assert "predicted by a model fine-tuned on 'mnli'" in problems[0] and "--do_train false" in problems[0]


def test_summary_at_the_end_and_validation_evaluated_once(tiny_lm, glue_slice, tmp_path, capsys, monkeypatch):
    calls = []
    original = GPT1Trainer.evaluation_loop

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("metric_key_prefix"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GPT1Trainer, "evaluation_loop", counting)
    out = tmp_path / "rte"
    run = run_command(capsys, "glue", *glue_args("rte", tiny_lm, glue_slice, out))
    run.results()  # it finished
    assert calls.count("eval_validation") == 1 and calls.count("eval_test") == 1  # 1 epoch: 1 evaluation, 1 prediction
    printed = run.stdout
    assert (
        "glue rte: 1 process on cpu; weights float32; global batch 16 per device × 1 × 1 accumulation = 16" in printed
    )
    summary = printed[printed.index("== glue rte: done in") :].splitlines()
    assert summary[1].startswith("  training speed: ") and "tokens/s" in summary[1] and "first step" in summary[1]
    assert summary[2].startswith("  best checkpoint (by eval_validation_accuracy): ")
    # the task's metric, then L2 and L3 named, then the same metric of the majority class predicted for every row
    assert re.fullmatch(
        r"  validation \(48 rows\): accuracy 0\.\d{4}, L2 \(task\) loss \d\.\d{4}, L3 loss \d+\.\d{4}; "
        r"majority-class baseline: accuracy 0\.\d{4}",
        summary[3],
    ), summary[3]
    assert summary[4] == f"  test: 30 predictions -> {out / 'RTE.tsv'}"
    hyperparameters = json.loads((out / "all_results.json").read_text())["hyperparameters"]  # for the model card
    assert hyperparameters["global_batch_size"] == 16 and hyperparameters["learning_rate"] == 1e-3
    assert hyperparameters["seed"] == 7 and hyperparameters["lr_scheduler_type"] == "linear"
    steady = json.loads((out / "all_results.json").read_text())["train"]["steady_state"]
    assert steady["steps"] == 5  # 96 rows in batches of 16, less the first step
    assert 0 < steady["tokens_per_s"] < steady["steps_per_s"] * 16 * 64  # real tokens, fewer than 16 full rows
    assert summary[-3:] == [
        f"  model + tokenizer: {out}",
        f"  results: {out / 'all_results.json'}",
        f"  learning curves: {out / 'curves.png'}",
    ]


def test_a_model_that_answers_one_class_is_flagged(tiny_lm, glue_slice, tmp_path, capsys):
    # A head whose weights are zero and whose bias favours "not_entailment" answers it for every pair.
    head = GPT1ForSequenceClassification.from_pretrained(tiny_lm, num_labels=2)
    with torch.no_grad():
        head.score.weight.zero_()
        head.score.bias.copy_(torch.tensor([0.0, 1.0]))
    head.save_pretrained(tmp_path / "constant")
    AutoTokenizer.from_pretrained(tiny_lm).save_pretrained(tmp_path / "constant")
    out = tmp_path / "rte"
    argv = glue_args("rte", tmp_path / "constant", glue_slice, out, "--do_train", "false", "--ignore_head_checks")
    run = run_command(capsys, "glue", *argv, "--max_eval_samples", "20")
    results, printed = run.results(), run.stdout
    assert "validation (20 rows, the first 20 (--max_eval_samples)): accuracy " in printed
    assert results["evaluated_rows"]["validation"]["rows"] == 20 < results["evaluated_rows"]["validation"]["of"]
    assert "model_preparation_time" not in printed[printed.index("== glue rte") :]  # the summary: a timing, no score
    expected = [
        "validation: every prediction is 'not_entailment': the model answers the same whatever the input (check the "
        "learning rate, the number of updates and the labels).",
    ]
    assert results["warnings"][: len(expected)] == expected
    assert f"  warning: {expected[0]}" in printed.splitlines()
    assert json.loads((out / "all_results.json").read_text())["warnings"] == results["warnings"]


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
            writer.writerow([f"story-{seed}-{i}", *story, *endings, answer])


def write_swag(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["video-id", "sent1", "sent2", "ending0", "ending1", "ending2", "ending3", "label"])
        for i in range(n):
            endings = [sentence(rng, 4) for _ in range(4)]
            writer.writerow([f"v{i}", sentence(rng), "Then they", *endings, rng.randrange(4)])


def mc_args(model: Path, out: Path, *extra: str) -> list[str]:
    return overridden([
        "--model_name_or_path", str(model), "--output_dir", str(out), "--num_train_epochs", "1",
        "--per_device_train_batch_size", "8", "--max_seq_length", "64", "--logging_steps", "1", *COMMON,
    ], extra)  # fmt: skip


def test_story_cloze_protocol_reports_test_accuracy_from_the_best_checkpoint(tiny_lm, tmp_path, capsys):
    """The paper's protocol: train on the 2016 validation CSV (1,497/374 split), pick the best-validation epoch, and
    report the test CSV's accuracy, with predictions by story id in the CSV's 1/2 convention."""
    val2016, test2016 = tmp_path / "val2016.csv", tmp_path / "test2016.csv"
    write_story_cloze(val2016, 374 + 48, 0)
    write_story_cloze(test2016, 20, 1)
    out = tmp_path / "out"
    argv = ["--task", "story_cloze", "--story_cloze_protocol", "--train_file", str(val2016), "--test_file"]
    results = run_command(
        capsys, "multiple-choice", *argv, str(test2016), *mc_args(tiny_lm, out, "--num_train_epochs", "2")
    ).results()

    best = results["best_checkpoint"]
    assert best in {str(out / "checkpoint-6"), str(out / "checkpoint-12")}  # 48 stories / 8 = 6 steps per epoch
    logged = {
        e["step"]: e["eval_validation_accuracy"] for e in results["log_history"] if "eval_validation_accuracy" in e
    }
    assert results["best_metric"]["eval_validation_accuracy"] == max(logged.values())
    assert logged[int(best.rsplit("-", 1)[1])] == max(logged.values())
    assert results["validation"]["eval_validation_accuracy"] == max(logged.values())

    lines = Path(results["test_predictions"]).read_text().splitlines()
    assert lines[0] == "InputStoryid\tAnswerRightEnding" and len(lines) == 21
    with test2016.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [line.split("\t")[0] for line in lines[1:]] == [row["InputStoryid"] for row in rows]
    predicted = [line.split("\t")[1] for line in lines[1:]]
    assert set(predicted) <= {"1", "2"}
    accuracy = sum(p == row["AnswerRightEnding"] for p, row in zip(predicted, rows)) / len(rows)
    assert results["test"]["eval_test_accuracy"] == pytest.approx(accuracy)
    # the saved model is the best checkpoint's, and the predictions are its
    best_weights, final = load_file(Path(best) / "model.safetensors"), load_file(out / "model.safetensors")
    assert all(torch.equal(best_weights[name], final[name]) for name in final)
    # the protocol's per-segment cap (n_ctx // 2 - 2) travels with the model: pipeline() predicts every row as the
    # recipe did, without being told the cap
    assert json.loads((out / "config.json").read_text())["segment_cap"] == 30
    chooser = pipeline("multiple-choice", model=str(out))
    for row, p in zip(rows, predicted):
        context = " ".join(row[f"InputSentence{i}"] for i in range(1, 5))
        answers = [row["RandomFifthSentenceQuiz1"], row["RandomFifthSentenceQuiz2"]]
        scores = [d["score"] for d in chooser(context, answers=answers)]
        assert str(scores.index(max(scores)) + 1) == p


def test_story_cloze_with_own_files(tiny_lm, tmp_path, capsys):
    files = {split: tmp_path / f"{split}.csv" for split in ("train", "validation", "test")}
    for seed, (split, path) in enumerate(files.items()):
        write_story_cloze(path, {"train": 48, "validation": 24, "test": 20}[split], seed)
    out = tmp_path / "out"
    args = mc_args(tiny_lm, out, "--task", "story_cloze", "--segment_cap", "30")
    args += [f"--{split}_file={path}" for split, path in files.items()]
    results = run_command(capsys, "multiple-choice", *args).results()
    assert 0.0 <= results["validation"]["eval_validation_accuracy"] <= 1.0
    assert 0.0 <= results["test"]["eval_test_accuracy"] <= 1.0
    assert len(Path(results["test_predictions"]).read_text().splitlines()) == 21


def test_swag_recipe(tiny_lm, tmp_path, capsys):
    train, validation = tmp_path / "train.csv", tmp_path / "val.csv"
    write_swag(train, 32, 0)
    write_swag(validation, 16, 1)
    out = tmp_path / "out"
    results = run_command(
        capsys,
        "multiple-choice",
        *mc_args(tiny_lm, out, "--task", "swag", "--train_file", str(train), "--validation_file", str(validation)),
    ).results()
    assert 0.0 <= results["validation"]["eval_validation_accuracy"] <= 1.0
    assert results["train"]["train_loss"] > 0


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


def test_resume_after_crash_matches_unbroken_run(tiny_lm, glue_slice, tmp_path, monkeypatch, capsys):
    """Stopped after checkpoint 4 of 12 (mid-epoch 1 of 2, dropout on), then `--resume`: same metrics and weights."""
    extra = ["--num_train_epochs", "2", "--save_strategy", "steps", "--save_steps", "4", "--eval_strategy", "no"]
    extra += ["--clf_pdrop", "0.1"]

    def args(out):
        return glue_args("rte", tiny_lm, glue_slice, out, *extra)

    unbroken = run_command(capsys, "glue", *args(tmp_path / "unbroken")).results()

    out = tmp_path / "crashed"
    crash = CrashAfterCheckpoint(4)
    original_init = finetune.GPT1Trainer.__init__

    def init_with_crash(self, *a, **kw):
        original_init(self, *a, **kw)
        self.add_callback(crash)

    monkeypatch.setattr(finetune.GPT1Trainer, "__init__", init_with_crash)
    with pytest.raises(_Crash):  # a crash, not a refusal: it leaves the command as raised
        run_command(capsys, "glue", *args(out))
    monkeypatch.undo()
    assert last_complete_checkpoint(out) == str(out / "checkpoint-4")
    assert not (out / "all_results.json").exists()
    resumed = run_command(capsys, "glue", *args(out), "--resume", "true").results()

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


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


RTE_ROWS = [["A man is here.", "Someone is here.", "entailment"], ["A cat.", "A dog.", "not_entailment"]] * 4


def csv_args(model: Path, out: Path, train: Path, *extra: str) -> list[str]:
    return overridden(["--task", "rte", "--train_file", str(train), "--validation_file", str(train),
                       *mc_args(model, out)], extra)  # fmt: skip


def rte_plan_problem(model: Path, tmp_path: Path, train: Path) -> str:
    """The one problem the RTE plan finds with `train` as its train and validation file (the plan's refusals of the
    data: arguments in, problems out); nothing written."""
    data = {"task": "rte", "train_file": train, "validation_file": train}
    problems = plan_problems("glue", {"model_name_or_path": model}, data, {"output_dir": tmp_path / "out"})
    assert not (tmp_path / "out").exists()
    # the file is both splits: a problem of its rows is said once, or once per split when it names the split
    assert len(problems) == 1 or [p.replace("validation rows", "train rows") for p in problems[1:]] == problems[:1]
    return problems[0]


def test_bad_input_unknown_task(capsys, tiny_lm, no_training):
    err = run_command(
        capsys, "glue", "--task", "rtee", "--model_name_or_path", str(tiny_lm), "--output_dir", "x"
    ).error
    assert "Unknown task 'rtee'" in err and "rte" in err


def test_bad_input_wrong_recipe_for_task(tmp_path):
    problems = plan_problems("glue", {}, {"task": "story_cloze"}, {"output_dir": tmp_path / "o"})
    assert "multiple choice" in problems[0] and "run it with hf-gpt1 multiple-choice" in problems[0]


def test_bad_input_misnamed_column(tiny_lm, tmp_path):
    rows = [["p", "h", "entailment"]] * 4
    train = write_csv(tmp_path / "train.csv", ["premise", "sentence2", "label"], rows)
    err = rte_plan_problem(tiny_lm, tmp_path, train)
    assert "'sentence1'" in err and "premise" in err and "train.csv" in err


def test_bad_input_missing_label_column(tiny_lm, tmp_path):
    rows = [["p", "h", "entailment"]] * 4
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "gold"], rows)
    err = rte_plan_problem(tiny_lm, tmp_path, train)
    assert "'label'" in err and "gold" in err


def test_bad_input_missing_story_cloze_column(capsys, tiny_lm, tmp_path, no_training):
    path = tmp_path / "train.csv"
    write_story_cloze(path, 8, 0)
    path.write_text(path.read_text().replace("RandomFifthSentenceQuiz2", "Ending2", 1))
    argv = ["--task", "story_cloze", "--train_file", str(path), *mc_args(tiny_lm, tmp_path / "out")]
    err = run_command(capsys, "multiple-choice", *map(str, argv)).error
    assert "RandomFifthSentenceQuiz2" in err


def test_bad_input_label_outside_label_set(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], [*RTE_ROWS, ["a", "b", "maybe"]])
    err = run_command(capsys, "glue", *csv_args(tiny_lm, tmp_path / "out", train)).error
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
    err = run_command(capsys, "glue", *glue_args("rte", tiny_lm, bad.parent, tmp_path / "out")).error
    assert "train.tsv:4" in err and "'contradiction'" in err


def test_bad_input_row_with_extra_fields(tiny_lm, tmp_path):
    train = tmp_path / "train.csv"
    train.write_text('sentence1,sentence2,label\n"a","b",entailment\n"c","d","not_entailment",extra,fields\n')
    err = rte_plan_problem(tiny_lm, tmp_path, train)
    assert f"{train}:3" in err and "expected 3 fields" in err


def test_bad_input_unparsable_json(tiny_lm, tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text('{"sentence1": "a", "sentence2": "b", "label": "entailment"}\n{"sentence1": "c", \n')
    err = rte_plan_problem(tiny_lm, tmp_path, train)
    assert "cannot parse it as JSON" in err and str(train) in err


def test_bad_input_missing_file(tiny_lm, tmp_path):
    err = rte_plan_problem(tiny_lm, tmp_path, tmp_path / "nope.csv")
    assert "nope.csv" in err and "does not exist" in err


def test_bad_input_output_dir_of_another_run(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    err = run_command(capsys, "glue", *csv_args(tiny_lm, foreign, train)).error
    assert "already holds files that are not from an hf_gpt1 run" in err and "--overwrite_output_dir" in err
    assert (foreign / "notes.txt").is_file()  # nothing was deleted
    # An hf_gpt1 run of something else (here: the pre-training run) is named as such.
    err = run_command(capsys, "glue", *csv_args(tiny_lm, tiny_lm, train)).error
    assert "already holds another run" in err and "'pretrain'" in err
    # --resume with other arguments refuses too.
    err = run_command(capsys, "glue", *csv_args(tiny_lm, tiny_lm, train), "--resume", "true").error
    assert "--resume" in err and "different run" in err


def test_overwrite_output_dir_is_checked_before_deleting(tiny_lm, tmp_path, no_training, capsys):
    """With --overwrite_output_dir the folder is replaced; the run then gets as far as training (patched away)."""
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    with pytest.raises(AssertionError, match="training started"):
        run_command(capsys, "glue", *csv_args(tiny_lm, foreign, train, "--overwrite_output_dir", "true"))
    # emptied, then claimed; the start failed having written nothing, so its identity was taken back
    assert not (foreign / "notes.txt").exists() and not (foreign / "hf_gpt1_run.json").exists()


def test_bad_input_max_seq_length_above_n_positions(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    err = run_command(capsys, "glue", *csv_args(tiny_lm, tmp_path / "out", train, "--max_seq_length", "65")).error
    assert "--max_seq_length 65" in err and "n_positions=64" in err
    assert not (tmp_path / "out").exists()  # refused before the folder was claimed


def test_zero_step_run_is_refused_before_claiming(capsys, tiny_lm, tmp_path, no_training):
    train = write_csv(tmp_path / "train.csv", ["sentence1", "sentence2", "label"], RTE_ROWS)
    err = run_command(capsys, "glue", *csv_args(tiny_lm, tmp_path / "out", train, "--num_train_epochs", "0")).error
    assert "0 optimizer steps" in err and "--num_train_epochs" in err
    err = run_command(
        capsys, "glue", *csv_args(tiny_lm, tmp_path / "out", train, "--per_device_train_batch_size", "64")
    ).error
    assert "0 optimizer steps" in err and "--dataloader_drop_last false" in err  # 8 rows, a 64-row batch, dropped
    err = run_command(
        capsys,
        "glue",
        *csv_args(tiny_lm, tmp_path / "out", train, "--per_device_train_batch_size", "64", "--max_steps", "5"),
    ).error
    assert "0 optimizer steps" in err  # max_steps cannot train on a loader that yields no batch
    assert not (tmp_path / "out").exists()


def test_bad_input_pretrain_missing_and_empty_files(capsys, tmp_path, no_training):
    out = str(tmp_path / "out")
    err = run_command(
        capsys, "pretrain", *map(str, ["--train_files", str(tmp_path / "none.txt"), "--output_dir", out])
    ).error
    assert "none.txt" in err and "does not exist" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    err = run_command(capsys, "pretrain", *map(str, ["--train_files", str(empty), "--output_dir", out])).error
    assert "empty.txt" in err and "empty" in err


def test_a_run_draws_its_learning_curves_and_reports_to_tensorboard(tiny_lm, glue_slice, tmp_path, capsys):
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install -e '.[tensorboard]')")
    out = tmp_path / "rte"
    run = run_command(
        capsys,
        "glue",
        *glue_args("rte", tiny_lm, glue_slice, out, "--report_to", "tensorboard", "--eval_strategy", "epoch"),
    )
    results = run.results()
    curves = learning_curves(results["log_history"])
    logged = [e for e in results["log_history"] if "clf_loss" in e and "eval_validation_accuracy" not in e]
    assert curves["losses"]["training L2"] == [(e["step"], e["clf_loss"]) for e in logged]
    held_out = ["held-out validation_clf_loss", "held-out validation_loss"]  # L2 and L3 on validation
    assert sorted(curves["losses"]) == sorted(["training loss", "training L2", "training L1", *held_out])
    assert "validation_accuracy" in curves["validation"] and "learning_rate" in curves["learning rate"]
    with Image.open(out / "curves.png") as image:
        assert image.format == "PNG" and image.width == 1500
    assert f"  learning curves: {out / 'curves.png'}" in run.stdout
    assert list((out / "runs").rglob("events.out.tfevents.*"))  # transformers' TensorBoard callback wrote its events


def test_a_task_of_your_own_from_a_task_file(tiny_lm, tmp_path, capsys):
    """`--task boolq.yaml` on rows whose label column is bool (BoolQ's layout): the run trains and scores it, and
    leaves its declaration beside the model, from which a fresh process writes the model card."""
    import subprocess
    import sys

    import yaml

    task = tmp_path / "boolq.yaml"
    task.write_text(yaml.safe_dump({
        "name": "my_boolq", "format": "entailment", "text_columns": ["question", "passage"],
        "label_names": ["False", "True"], "label_column": "answer", "metric_config": "accuracy",
        "main_metric": "accuracy",
    }))  # fmt: skip
    rows = [{"question": f"is item {i} red", "passage": f"item {i} is {'red' if i % 2 else 'blue'} .",
             "answer": bool(i % 2)} for i in range(48)]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    argv = ["--task", str(task), "--model_name_or_path", str(tiny_lm), "--train_file", str(data),
            "--validation_file", str(data), "--output_dir", str(out), "--num_train_epochs", "1",
            "--per_device_train_batch_size", "16", "--do_predict", "false", *COMMON]  # fmt: skip
    results = run_command(capsys, "glue", *argv).results()
    assert results["task"] == "my_boolq" and 0 <= results["validation"]["eval_validation_accuracy"] <= 1
    assert yaml.safe_load(task.read_text())["name"] == json.loads((out / "task.json").read_text())["name"]
    card = subprocess.run(
        [sys.executable, "-c", "import sys; from hf_gpt1.tools.hub import model_card; "
         "print(model_card(sys.argv[1], 'me/boolq'))", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert card.returncode == 0, card.stderr[-2000:]
    assert '"text_pair": "second sentence"' in card.stdout  # a pair task: the card's example says so


def test_a_compiled_fine_tuning_run_compiles_a_few_lengths_not_one_per_batch(
    tiny_lm, glue_slice, tmp_path, monkeypatch, capsys
):
    """Under --torch_compile, batches of real CoLA rows (nearly every batch a new longest row) are padded to multiples
    of 64 tokens: GPT-1's 512 positions give at most 8 shapes, and this 64-position model one, so nothing recompiles
    after the first step."""
    from hf_gpt1.data.transforms import GPT1Collator

    lengths = []
    collate = GPT1Collator.__call__

    def recorded(self, features):
        batch = collate(self, features)
        lengths.append(batch["input_ids"].shape[-1])
        return batch

    out = tmp_path / "run"
    extra = ["--torch_compile", "true", "--torch_compile_backend", "aot_eager", "--max_steps", "6", "--eval_strategy"]
    extra += ["no", "--save_strategy", "no", "--do_predict", "false", "--per_device_train_batch_size", "4"]
    args = glue_args("cola", tiny_lm, glue_slice, out, *extra)
    monkeypatch.setattr(GPT1Collator, "__call__", recorded)
    results = run_command(capsys, "glue", *args).results()
    assert lengths and set(lengths) == {64}, lengths
    assert results["train"]["steady_state"]["graphs_compiled_after_first_step"] == 0
    assert finetune.compiled_padding(512) == 64 and finetune.compiled_padding(100) is None
    lengths.clear()  # uncompiled: padded to each batch's longest row
    run_command(capsys, "glue", *glue_args("cola", tiny_lm, glue_slice, tmp_path / "eager", *extra[4:])).results()
    assert len(set(lengths)) > 1, lengths


def _copy_without(model: Path, tensor: str, folder: Path) -> Path:
    """A copy of a saved model whose model.safetensors lacks `tensor`."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, folder)
    weights = load_file(folder / "model.safetensors")
    del weights[tensor]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_a_kill_during_the_final_save_leaves_the_previous_model_and_tokenizer_whole(
    rte_model, tiny_lm, glue_slice, tmp_path, monkeypatch, capsys
):
    import safetensors.torch
    import tokenizers
    import transformers.modeling_utils

    out = tmp_path / "run"
    shutil.copytree(rte_model, out)  # a previous complete model of this run stands in the folder
    args = glue_args("rte", tiny_lm, glue_slice, out, "--do_predict", "false", "--save_strategy", "no")
    run_command(capsys, "glue", *args, "--overwrite_output_dir").results()
    before = {name: (out / name).read_bytes() for name in ("model.safetensors", "tokenizer.json", "config.json")}

    real_save = tokenizers.Tokenizer.save

    def dying_tokenizer_save(self, path, *a, **k):
        real_save(self, path, *a, **k)
        Path(path).write_bytes(Path(path).read_bytes()[:100])  # half a tokenizer.json, then the kill
        raise Killed()

    monkeypatch.setattr(tokenizers.Tokenizer, "save", dying_tokenizer_save)
    with pytest.raises(Killed):  # a kill, not a refusal: it leaves the command as raised
        run_command(capsys, "glue", *args, "--resume")
    after = {name: (out / name).read_bytes() for name in before}
    assert after == before
    monkeypatch.undo()

    def dying_weights(tensors, filename, *a, **k):
        if "checkpoint-" not in str(filename):
            Path(filename).write_bytes(b"\x00" * 64)
            raise Killed()
        return safetensors.torch.save_file(tensors, filename, *a, **k)

    monkeypatch.setattr(transformers.modeling_utils, "safe_save_file", dying_weights)
    with pytest.raises(Killed):
        run_command(capsys, "glue", *args, "--resume")
    assert {name: (out / name).read_bytes() for name in before} == before


def test_predicting_with_a_pretrained_lm_is_refused(tiny_lm, glue_slice, tmp_path, capsys):
    out = tmp_path / "out"
    error = run_command(capsys, "glue", *map(str, predict_args(tiny_lm, glue_slice, out))).error
    assert "holds no head fine-tuned for a task" in error and "--ignore_head_checks" in error, error
    assert not (out / "RTE.tsv").exists()


def test_a_fine_tuned_model_missing_a_weight_is_refused_naming_it(rte_model, glue_slice, tmp_path, capsys):
    damaged = _copy_without(rte_model, "score.bias", tmp_path / "damaged")
    error = run_command(capsys, "glue", *map(str, predict_args(damaged, glue_slice, tmp_path / "out"))).error
    assert "lacks ['score.bias']" in error and "random values" in error, error


def test_a_backbone_weight_missing_from_the_pretrained_model_is_refused(tiny, glue_slice, tmp_path, capsys):
    damaged = _copy_without(tiny, "transformer.h.1.mlp.c_proj.weight", tmp_path / "damaged")
    args = glue_args("rte", damaged, glue_slice, tmp_path / "out")
    error = run_command(capsys, "glue", *map(str, args)).error
    assert "lacks ['transformer.h.1.mlp.c_proj.weight']" in error, error


def test_a_model_of_another_task_is_refused_unless_asked(rte_model, tmp_path, capsys):
    wnli = tmp_path / "WNLI"
    wnli.mkdir()
    (wnli / "test.tsv").write_text(
        "index\tsentence1\tsentence2\n0\tA man plays.\tHe plays.\n1\tA dog runs.\tIt runs.\n"
    )
    argv = predict_args(rte_model, wnli, tmp_path / "out")
    argv[argv.index("rte")] = "wnli"
    error = run_command(capsys, "glue", *map(str, argv)).error
    assert "was fine-tuned on 'rte', not 'wnli'" in error and "--ignore_head_checks" in error, error
    run_command(capsys, "glue", *argv, "--ignore_head_checks").results()  # knowingly
    assert len((tmp_path / "out" / "WNLI.tsv").read_text().splitlines()) == 3


def test_a_fine_tuned_model_records_its_task_and_labels(rte_model):
    config = json.loads((rte_model / "config.json").read_text())
    assert config["finetuned_task"] == "rte" and config["id2label"] == {"0": "entailment", "1": "not_entailment"}


def test_the_trainers_label_smoothing_is_refused_for_the_one_inside_l3(capsys, tiny, rte_files, tmp_path):
    from tests.utils import glue_argv

    train, dev = rte_files
    argv = glue_argv(tiny, train, dev, tmp_path / "out", extra=["--label_smoothing_factor", "0.1"])
    error = run_command(capsys, "glue", *map(str, argv)).error
    assert "--label_smoothing_factor 0.1 would replace L3" in error and "--clf_label_smoothing" in error, error


def test_label_smoothing_of_a_regression_task_is_refused(capsys, tiny_lm, glue_slice, tmp_path, no_training):
    args = glue_args("stsb", tiny_lm, glue_slice, tmp_path / "out", "--clf_label_smoothing", "0.1")
    assert "applies to classes; 'stsb' is a regression task" in run_command(capsys, "glue", *map(str, args)).error


def test_a_full_disk_at_the_final_save_is_one_line_and_leaves_no_partial_model(
    tiny, rte_files, tmp_path, monkeypatch, capsys
):
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "out"
    # the final save copies the model's code beside it (remote code): that copy finds the disk full
    fail_writes_to(monkeypatch, "modeling_gpt1.py", OSError(errno.ENOSPC, "No space left on device"))
    error = run_command(
        capsys, "glue", *map(str, glue_argv(tiny, train, dev, out, extra=["--save_strategy", "no"]))
    ).error
    assert f"Could not write {out}: no space is left on its disk" in error, error
    assert not (out / "model.safetensors").exists() and not (out / "config.json").exists()


def test_pad_to_multiple_of_that_does_not_divide_the_length_names_itself(tiny, rte_files, tmp_path, capsys):
    from tests.utils import glue_argv

    train, dev = rte_files
    argv = glue_argv(tiny, train, dev, tmp_path / "out", extra=("--pad_to_multiple_of", "7"))
    error = run_command(capsys, "glue", *map(str, argv)).error
    assert error.startswith("error: --pad_to_multiple_of 7 does not divide the longest input, 64 tokens"), error
    assert "--train_file" not in error


def test_a_race_row_with_fewer_options_is_refused_at_load_naming_it(tiny, tmp_path, capsys):
    rows = [
        {"example_id": f"high{i}.txt", "article": f"Article {i} is long.", "question": "What is it?",
         "options": ["one", "two", "three", "four"], "answer": "A"}
        for i in range(12)
    ]  # fmt: skip
    rows[7]["options"] = ["one", "two", "three"]
    train = tmp_path / "race.jsonl"
    train.write_text("".join(json.dumps(row) + "\n" for row in rows))
    argv = ["--task", "race", "--model_name_or_path", str(tiny), "--train_file", str(train), "--output_dir",
            str(tmp_path / "out"), "--eval_strategy", "no", "--do_predict", "false", *COMMON]  # fmt: skip
    error = run_command(capsys, "multiple-choice", *map(str, argv)).error
    assert f"{train}: data row 8 has 3 options in 'options' where the other rows have 4" in error, error


# ------------------------------------------------------------------------------------------ plan, then execute


def test_a_run_is_planned_from_dataclasses_then_executed(tiny_lm, glue_slice, tmp_path):
    """`plan_finetuning` is a function of the argument dataclasses and the data: it reads, checks and decides (the
    evaluation plan, the best checkpoint's metric) and writes nothing of the run; `execute_finetuning` carries the
    frozen plan out."""

    from hf_gpt1.training.arguments import DataArguments, GPT1TrainingArguments, ModelArguments
    from hf_gpt1.training.finetune import execute_finetuning, plan_finetuning

    out = tmp_path / "rte"
    args = GPT1TrainingArguments(
        output_dir=str(out), num_train_epochs=1, per_device_train_batch_size=16, max_steps=2, report_to="none",
        disable_tqdm=True, dataloader_num_workers=0, do_predict=False,
    )  # fmt: skip
    plan = plan_finetuning(
        ModelArguments(model_name_or_path=str(tiny_lm)), DataArguments(task="rte", data_dir=str(glue_slice)), args
    )
    assert not out.exists()  # nothing written: the folder is claimed by the execution
    assert plan.eval_names == ("validation",) and set(plan.splits) == {"train", "validation"}
    assert plan.args.load_best_model_at_end and plan.args.metric_for_best_model == "eval_validation_accuracy"
    assert args.load_best_model_at_end is None  # the arguments given are left as they were
    text = str(plan)
    assert text.startswith("glue rte: entailment task") and "keeps the checkpoint of the highest" in text
    assert f"  train: {plan.splits['train'].num_rows:,} rows (" in text
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.recipe = "multiple_choice"
    results = execute_finetuning(plan)
    assert results["task"] == "rte" and results["data_sha256"] == plan.data_sha256
    assert (out / "all_results.json").is_file()


@pytest.mark.parametrize(("given", "max_steps", "bf16", "expected"), [
    (None, 7500, True, True), (None, 7499, True, False), (None, 9000, False, False), (False, 9000, True, False),
    (True, 10, True, True),
])  # fmt: skip
def test_the_plan_compiles_a_long_bf16_run_on_cuda_by_default(tiny, glue_slice, tmp_path, monkeypatch, given,
                                                               max_steps, bf16, expected):  # fmt: skip
    """`--torch_compile` left out: on a CUDA GPU (stood in for here) a run of at least 7,500 updates under --bf16
    compiles, a shorter one does not, and the start screen's plan says which; a given flag is kept as given. A
    compiled run replays its steps as CUDA graphs (`--torch_compile_mode reduce-overhead`), and says so."""
    from hf_gpt1.training import launch
    from hf_gpt1.training.arguments import DataArguments, GPT1TrainingArguments, ModelArguments
    from hf_gpt1.training.finetune import plan_finetuning

    args = GPT1TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=max_steps, report_to="none", bf16=bf16, torch_compile=given,
    )  # fmt: skip
    monkeypatch.setattr(launch.torch.cuda, "is_available", lambda: True)  # after the arguments: they stay on the CPU
    data = DataArguments(task="rte", data_dir=str(glue_slice))
    plan = plan_finetuning(ModelArguments(model_name_or_path=str(tiny)), data, args)
    assert plan.args.torch_compile is expected and args.torch_compile is given
    assert plan.args.torch_compile_mode == ("reduce-overhead" if expected else None)
    notes = list(plan.notes)
    if given is None:
        note = notes.pop(0)
        assert note.startswith(f"torch.compile: {'on' if expected else 'off'} by default ({max_steps:,} updates"), note
    if expected:
        note = notes.pop(0)
        assert note.startswith("CUDA graphs: on by default (--torch_compile_mode reduce-overhead)"), note
    assert notes == []
    if expected:  # a mode given is kept, and so are graphs off
        args = dataclasses.replace(args, torch_compile_mode="default")
        plan = plan_finetuning(ModelArguments(model_name_or_path=str(tiny)), data, args)
        assert plan.args.torch_compile_mode == "default" and not any("CUDA graphs" in n for n in plan.notes)


def test_execute_refuses_inputs_changed_since_the_plan(tiny, glue_slice, tmp_path):
    """The plan records its inputs' digests; a model file replaced before the execution is refused in one line, with
    nothing trained or written."""
    import shutil

    from hf_gpt1.training.arguments import DataArguments, GPT1TrainingArguments, ModelArguments
    from hf_gpt1.training.finetune import execute_finetuning, plan_finetuning

    model = shutil.copytree(tiny, tmp_path / "model")
    args = GPT1TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=1, report_to="none", do_predict=False)
    plan = plan_finetuning(
        ModelArguments(model_name_or_path=str(model)), DataArguments(task="rte", data_dir=str(glue_slice)), args
    )
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + bytes(8))  # the same size, other weights
    with pytest.raises(ValueError, match=f"{weights} changed after this run was planned"):
        execute_finetuning(plan)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------------- multi-label


def test_multi_label_classification_from_a_task_file_end_to_end(tiny_lm, tmp_path, capsys):
    """A multi-label task of one's own (transformers' `problem_type="multi_label_classification"`): label sets from a
    CSV (names separated by ","), a JSONL (lists) and a TSV test file; BCE inside L3, micro and macro F1 with the
    constant baseline, predictions in input order as sets of names, every label's sigmoid score from the stock
    pipeline, and the scores in the card's model-index."""
    import yaml

    from hf_gpt1.tools.hub import card_facts

    names = ["sports", "politics", "science"]
    task = tmp_path / "topics.yaml"
    task.write_text(yaml.safe_dump({
        "name": "topics", "format": "classification", "text_columns": ["text"], "label_names": names,
        "label_column": "topics", "label_kind": "multi_label", "metric_config": "multi_label",
        "main_metric": "micro_f1",
    }))  # fmt: skip
    rng = random.Random(0)
    rows = [(f"{sentence(rng)} number {i} .", sorted(rng.sample(names, rng.randint(0, 2)))) for i in range(40)]
    train = write_csv(tmp_path / "train.csv", ["text", "topics"], [[text, ", ".join(s)] for text, s in rows[:32]])
    validation = tmp_path / "validation.jsonl"
    validation.write_text("".join(json.dumps({"text": text, "topics": s}) + "\n" for text, s in rows[32:]))
    test = tmp_path / "test.tsv"
    test.write_text("text\n" + "".join(f"{text}\n" for text, _ in rows[::-1]))  # reversed: the order is the file's
    out = tmp_path / "out"
    argv = ["--task", str(task), "--model_name_or_path", str(tiny_lm), "--train_file", str(train),
            "--validation_file", str(validation), "--test_file", str(test), "--output_dir", str(out),
            "--num_train_epochs", "1", "--per_device_train_batch_size", "8", "--logging_steps", "1",
            *COMMON]  # fmt: skip
    results = run_command(capsys, "glue", *argv).results()

    validation_scores = results["validation"]
    for name in ("micro_f1", "macro_f1", "subset_accuracy", "baseline_micro_f1"):
        assert 0 <= validation_scores[f"eval_validation_{name}"] <= 1, name
    config = json.loads((out / "config.json").read_text())
    assert config["problem_type"] == "multi_label_classification" and config["id2label"] == dict(
        (str(i), name) for i, name in enumerate(names)
    )
    for entry in [e for e in results["log_history"] if "clf_loss" in e and "loss" in e]:  # L3 = L2 + 0.5·L1
        assert entry["loss"] == pytest.approx(entry["clf_loss"] + 0.5 * entry["lm_loss"], rel=1e-3)

    # predictions: one row per test row, in the file's order, each a set of the task's names
    lines = (out / "topics_test_predictions.tsv").read_text().splitlines()
    assert lines[0] == "index\ttopics" and len(lines) == len(rows) + 1
    predicted = [json.loads(line.split("\t")[1]) for line in lines[1:]]
    assert [line.split("\t")[0] for line in lines[1:]] == [str(i) for i in range(len(rows))]
    assert all(set(labels) <= set(names) for labels in predicted)
    # the stock pipeline: every label's sigmoid score, and the same sets above 0.5
    classifier = pipeline("text-classification", model=str(out))
    for (text, _), labels in zip(rows[::-1], predicted):
        scores = classifier(text, top_k=None)
        assert sorted(d["label"] for d in scores) == sorted(names) and all(0 < d["score"] < 1 for d in scores)
        assert sorted(d["label"] for d in scores if d["score"] > 0.5) == sorted(labels)
    # the card's model-index carries the multi-label scores
    metrics = {r.metric_type for r in card_facts(out, "me/topics")["card_data"].eval_results}
    assert {"micro_f1", "macro_f1", "subset_accuracy"} <= metrics


def test_bad_input_a_label_set_with_an_unknown_name(capsys, tiny_lm, tmp_path, no_training):
    task = tmp_path / "topics.json"
    task.write_text(json.dumps({
        "name": "topics", "format": "classification", "text_columns": ["text"], "label_names": ["sports", "science"],
        "label_kind": "multi_label", "metric_config": "multi_label", "main_metric": "macro_f1",
    }))  # fmt: skip
    train = write_csv(tmp_path / "train.csv", ["text", "label"], [["a goal", "sports"], ["a vote", "sports|politics"]])
    out = tmp_path / "out"
    err = run_command(capsys, "glue", "--task", str(task), "--train_file", str(train), "--validation_file", str(train),
                      *mc_args(tiny_lm, out, "--per_device_train_batch_size", "2")).error  # fmt: skip
    assert err.count("\n") <= 1 and "train.csv" in err and "Row 1, column 'label'" in err, err
    assert "label 'sports|politics' is not one of the names ['sports', 'science']" in err
    assert "write a label set as names separated by ',' (CSV/TSV) or as a list (JSON)." in err
    assert not out.exists()  # refused before anything is written


def test_a_prediction_run_refuses_a_head_trained_for_another_kind_of_label():
    """A multi-label head read as one label per row (or the reverse) would predict with the other loss's meaning: the
    head's `problem_type` must be the task's."""
    from types import SimpleNamespace

    from hf_gpt1.training.finetune import _check_head

    spec = get_task("rte")
    saved = SimpleNamespace(finetuned_task="rte", id2label=spec.id2label, problem_type="multi_label_classification")
    with pytest.raises(ValueError, match=r"its head was fine-tuned for multi_label_classification, not 'rte''s "
                       r"single_label_classification"):  # fmt: skip
        _check_head(spec, saved, SimpleNamespace(model_name_or_path="m"))
    saved.problem_type = None  # a head saved before problem_type was recorded: its labels are checked, as before
    _check_head(spec, saved, SimpleNamespace(model_name_or_path="m"))
