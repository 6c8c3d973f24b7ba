# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The paper's published numbers (hf_gpt1.tools.paper_results) agree with each other as the paper prints them."""

from __future__ import annotations

import pytest

from hf_gpt1.data.tasks import get_task
from hf_gpt1.tools.paper_results import PAPER_RESULTS, TABLE5_AVERAGES, TABLE5_TASKS, paper_result


@pytest.mark.parametrize("condition", sorted(TABLE5_AVERAGES))
def test_table5_rows_recompute_to_their_printed_averages(condition):
    values = [row.value for row in PAPER_RESULTS if row.table == 5 and row.condition == condition]
    assert len(values) == len(TABLE5_TASKS) == 8
    assert abs(sum(values) / len(values) - TABLE5_AVERAGES[condition]) <= 0.05 + 1e-9  # printed to one decimal


def test_table5s_full_row_is_tables_2_and_4():
    for task in ("cola", "sst2", "mrpc", "stsb", "qqp", "qnli", "rte"):
        full = next(r for r in PAPER_RESULTS if r.table == 5 and r.task == task and r.condition == "full")
        published = next(r for r in PAPER_RESULTS if r.table in (2, 4) and r.task == task)
        assert full.value == published.value, task
    matched, mismatched = (paper_result(2, "mnli", f"accuracy_{s}").value for s in ("matched", "mismatched"))
    assert round((matched + mismatched) / 2, 1) == pytest.approx(paper_result(5, "mnli", "accuracy_mean").value)


def test_every_row_names_a_task_of_the_package_and_a_source():
    for row in PAPER_RESULTS:
        spec = get_task(row.task)
        assert row.metric.split("_")[0] in spec.main_metric or row.metric == spec.main_metric, row
        assert row.source.startswith(f"Table {row.table}, p. "), row
    with pytest.raises(KeyError, match="no rte f1"):
        paper_result(2, "rte", "f1")
