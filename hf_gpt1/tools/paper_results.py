# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The published results of GPT-1's paper, Tables 2–5, in the paper's units, as a reproduction compares against them.

Radford, Narasimhan, Salimans and Sutskever (2018), "Improving Language Understanding by Generative Pre-Training",
https://cdn.openai.com/research-covers/language-unsupervised/language_understanding_paper.pdf. Each row cites its table
and the PDF page. Units are the paper's: accuracy and F1 in %, Matthews and Pearson correlations × 100. `split` says
what the paper scored: GLUE's test server for the GLUE tasks (Table 4: "All task evaluations in this table were done
using the GLUE benchmark"), the test sets elsewhere. Table 5's MNLI column (81.8) is the mean of Table 2's matched and
mismatched accuracies (82.1, 81.4), rounded; its "Avg. Score" is the unweighted mean of its eight columns.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONDITIONS", "PAPER_RESULTS", "TABLE5_AVERAGES", "TABLE5_TASKS", "PaperResult", "paper_result"]

# Table 5's rows that a run can reproduce, by the name `reproduce` gives them: the full method, the transformer
# trained on the task from random weights, and fine-tuning without the auxiliary LM objective (λ = 0). Its fourth row
# (a 2048-unit LSTM) is another architecture and is not reproduced.
CONDITIONS = {"full": "Transformer w/ aux LM (full)", "no_pretraining": "Transformer w/o pre-training",
              "no_aux_lm": "Transformer w/o aux LM"}  # fmt: skip


@dataclass(frozen=True)
class PaperResult:
    """One published number.

    Args:
        table (`int`): The paper's table (2–5).
        task (`str`): The hf_gpt1 task name (`hf_gpt1.data.tasks`).
        column (`str`): The paper's column header.
        metric (`str`): The key of the task's metric output that the column reports; RACE's subsets are
            `accuracy_middle` and `accuracy_high`, MNLI's splits `accuracy_matched` and `accuracy_mismatched` (and
            `accuracy_mean`, their mean, in Table 5).
        value (`float`): The number as printed, in the paper's units.
        condition (`str`): A key of [`CONDITIONS`].
        split (`str`): What the paper scored: `"test"`, or `"glue_test_server"`.
        source (`str`): Table and page of the PDF.
    """

    table: int
    task: str
    column: str
    metric: str
    value: float
    condition: str = "full"
    split: str = "test"
    source: str = ""


def _row(table: int, page: int, task: str, column: str, metric: str, value: float, **kwargs) -> PaperResult:
    return PaperResult(table, task, column, metric, value, source=f"Table {table}, p. {page}", **kwargs)


_GLUE = {"split": "glue_test_server"}
PAPER_RESULTS: tuple[PaperResult, ...] = (
    # Table 2, p. 6: natural language inference, accuracy ("Finetuned Transformer LM (ours)")
    _row(2, 6, "mnli", "MNLI-m", "accuracy_matched", 82.1, **_GLUE),
    _row(2, 6, "mnli", "MNLI-mm", "accuracy_mismatched", 81.4, **_GLUE),
    _row(2, 6, "snli", "SNLI", "accuracy", 89.9),
    _row(2, 6, "scitail", "SciTail", "accuracy", 88.3),
    _row(2, 6, "qnli", "QNLI", "accuracy", 88.1, **_GLUE),
    _row(2, 6, "rte", "RTE", "accuracy", 56.0, **_GLUE),
    # Table 3, p. 6: question answering and commonsense reasoning, accuracy
    _row(3, 6, "story_cloze", "Story Cloze", "accuracy", 86.5),
    _row(3, 6, "race", "RACE-m", "accuracy_middle", 62.9),
    _row(3, 6, "race", "RACE-h", "accuracy_high", 57.4),
    _row(3, 6, "race", "RACE", "accuracy", 59.0),
    # Table 4, p. 7: semantic similarity and classification, GLUE test server
    _row(4, 7, "cola", "CoLA (mc)", "matthews_correlation", 45.4, **_GLUE),
    _row(4, 7, "sst2", "SST2 (acc)", "accuracy", 91.3, **_GLUE),
    _row(4, 7, "mrpc", "MRPC (F1)", "f1", 82.3, **_GLUE),
    _row(4, 7, "stsb", "STSB (pc)", "pearson", 82.0, **_GLUE),
    _row(4, 7, "qqp", "QQP (F1)", "f1", 70.3, **_GLUE),
    # Table 5, p. 8: ablations (MNLI: the mean of matched and mismatched)
    *(
        _row(5, 8, task, column, metric, value, condition=condition, **_GLUE)
        for condition, values in {
            "full": (45.4, 91.3, 82.3, 82.0, 70.3, 81.8, 88.1, 56.0),
            "no_pretraining": (18.9, 84.0, 79.4, 30.9, 65.5, 75.7, 71.2, 53.8),
            "no_aux_lm": (47.9, 92.0, 84.9, 83.2, 69.8, 81.1, 86.9, 54.4),
        }.items()
        for (task, column, metric), value in zip(
            (
                ("cola", "CoLA (mc)", "matthews_correlation"),
                ("sst2", "SST2 (acc)", "accuracy"),
                ("mrpc", "MRPC (F1)", "f1"),
                ("stsb", "STSB (pc)", "pearson"),
                ("qqp", "QQP (F1)", "f1"),
                ("mnli", "MNLI (acc)", "accuracy_mean"),
                ("qnli", "QNLI (acc)", "accuracy"),
                ("rte", "RTE (acc)", "accuracy"),
            ),
            values,
        )
    ),
)
TABLE5_TASKS = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte")
# Table 5, p. 8, "Avg. Score" as printed.
TABLE5_AVERAGES = {"full": 74.7, "no_pretraining": 59.9, "no_aux_lm": 75.0}


def paper_result(table: int, task: str, metric: str, condition: str = "full") -> PaperResult:
    """The published number of `task`'s `metric` in `table` under `condition`."""
    for row in PAPER_RESULTS:
        if (row.table, row.task, row.metric, row.condition) == (table, task, metric, condition):
            return row
    raise KeyError(f"The paper's Table {table} has no {task} {metric} under {condition!r}.")
