# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The task protocols a reproduction of the paper needs, on rows laid out as the Hub copies are: RACE (one id per
question, the article cut and the question kept, RACE-m and RACE-h from one model) and SNLI's unlabelled test rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from hf_gpt1.formats import multiple_choice
from tests.utils import COMMON, run_command

START, DELIM, EXTRACT = 1000, 1001, 1002
IDS = dict(start_token_id=START, delimiter_token_id=DELIM, extract_token_id=EXTRACT)


def test_race_truncation_cuts_the_article_and_keeps_the_question_and_every_option():
    article, question = list(range(900)), [1, 2, 3, 4, 5]
    answers = [[6, 7], [8], [9, 10, 11], [12]]
    sequences = multiple_choice(article, answers, question=question, max_length=64, **IDS)
    for sequence, answer in zip(sequences, answers):
        assert len(sequence) <= 64
        lead = sequence[1 : sequence.index(DELIM)]
        assert (
            lead[-5:] == question and lead[:-5] == article[: len(lead) - 5]
        )  # the article's start, then the question
        assert sequence[sequence.index(DELIM) + 1 : -1] == answer
    # every sequence has the same article tokens: the longest answer sets the room
    assert len(sequences[2]) == 64 and len(sequences[0][1 : sequences[0].index(DELIM)]) == 64 - 3 - 3 - 5 + 5
    # without a question the old rule holds (Story Cloze, SWAG): longest-first over context and answers
    assert multiple_choice(article, answers, max_length=64, **IDS)[0][1:-4] == article[:58]


def _race_rows(n_articles: int) -> list[dict]:
    """RACE as `ehovy/race` lays it out: example_id is the article's file, shared by its questions."""
    rows = []
    for i in range(n_articles):
        level = "middle" if i % 2 else "high"
        article = " ".join(f"word{(i * 7 + k) % 50}" for k in range(300))  # ~300 tokens: over --max_seq_length 64
        for q in range(2):
            rows.append(
                {"example_id": f"{level}{i}.txt", "article": article, "question": f"What is question {q} about?",
                 "options": ["the cat", "a dog", "the sun", "rain"], "answer": "ABCD"[(i + q) % 4]}
            )  # fmt: skip
    return rows


def test_race_from_its_hub_layout(tiny, tmp_path, capsys, caplog):
    files = {}
    for split, n in (("train", 8), ("validation", 4), ("test", 6)):
        files[split] = tmp_path / f"{split}.jsonl"
        files[split].write_text("".join(json.dumps(row) + "\n" for row in _race_rows(n)))
    argv = [
        "--task", "race", "--model_name_or_path", str(tiny), "--output_dir", str(tmp_path / "out"),
        "--train_file", str(files["train"]), "--validation_file", str(files["validation"]),
        "--test_file", str(files["test"]), "--max_seq_length", "64", "--num_train_epochs", "1",
        "--per_device_train_batch_size", "4", *COMMON,
    ]  # fmt: skip
    run = run_command(capsys, "multiple-choice", *argv)
    results = run.results()
    assert "the end of the article is cut, the question and every answer kept whole" in caplog.text + run.stderr
    test = results["test"]
    assert {"eval_test_accuracy", "eval_test_accuracy_middle", "eval_test_accuracy_high"} <= set(test)
    # 6 articles × 2 questions: each subset's accuracy is over its own 6 questions, and they average to the whole
    assert (
        abs((test["eval_test_accuracy_middle"] + test["eval_test_accuracy_high"]) / 2 - test["eval_test_accuracy"])
        < 1e-9
    )
    lines = Path(results["test_predictions"]).read_text().splitlines()
    ids = [line.split("\t")[0] if "\t" in line else line.split(",")[0] for line in lines[1:]]
    assert ids[:4] == ["high0.txt#0", "high0.txt#1", "middle1.txt#0", "middle1.txt#1"] and len(set(ids)) == 12


def test_a_test_split_with_rows_without_gold_label_scores_the_labelled_rows(tiny, tmp_path, capsys):
    """SNLI's Hub test split marks pairs without annotator consensus -1: every row is predicted, the labelled ones
    are scored, and the run says how many were not."""
    rows = [["A man is here.", "Someone is here.", 0], ["A cat.", "A dog.", 2], ["A car.", "A road.", 1]] * 4
    paths = {}
    for split, body in (("train", rows), ("test", [*rows[:5], ["A boy.", "A kid.", -1], ["Rain.", "Sun.", -1]])):
        paths[split] = tmp_path / f"{split}.csv"
        with paths[split].open("w", newline="") as f:
            csv.writer(f).writerows([["premise", "hypothesis", "label"], *body])
    argv = [
        "--task", "snli", "--model_name_or_path", str(tiny), "--output_dir", str(tmp_path / "out"),
        "--train_file", str(paths["train"]), "--validation_file", str(paths["train"]),
        "--test_file", str(paths["test"]), "--num_train_epochs", "1", "--per_device_train_batch_size", "4", *COMMON,
    ]  # fmt: skip
    run = run_command(capsys, "glue", *argv)
    results, printed = run.results(), run.stdout
    assert "test (5 rows): accuracy" in printed
    assert "7 predictions -> " in printed and "(2 rows without a gold label predicted, not scored)" in printed
    assert results["test"]["eval_test_unscored_rows"] == 2
    assert len(Path(results["test_predictions"]).read_text().splitlines()) == 1 + 7  # header + every row
