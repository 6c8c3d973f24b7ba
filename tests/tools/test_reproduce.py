"""`hf-gpt1 reproduce report` on canned runs: the rows beside the paper's numbers, the comparability rules, Table 5's
averages (MNLI the mean of matched and mismatched), and the golden REPORT.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hf_gpt1.tools.reproduce import main

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "reproduce_report.md"


def _run(root: Path, task: str, condition: str, seed: int, **splits: dict[str, float]) -> None:
    folder = root / task / condition / f"seed-{seed}"
    folder.mkdir(parents=True)
    results = {split: {f"eval_{split}_{k}": v for k, v in metrics.items()} for split, metrics in splits.items()}
    (folder / "all_results.json").write_text(json.dumps(results))


@pytest.fixture
def runs(tmp_path) -> Path:
    root = tmp_path / "reproduce"
    for seed, accuracy in ((0, 0.60), (1, 0.62), (2, 0.50)):
        _run(root, "rte", "full", seed, validation={"accuracy": accuracy})
    _run(root, "snli", "full", 0, test={"accuracy": 0.88})
    _run(root, "race", "full", 0, test={"accuracy": 0.55, "accuracy_middle": 0.60, "accuracy_high": 0.53})
    _run(root, "qnli", "full", 0, validation={"accuracy": 0.87})
    glue = {"cola": ("matthews_correlation", 0.40), "sst2": ("accuracy", 0.90), "mrpc": ("f1", 0.80),
            "stsb": ("pearson", 0.81), "qqp": ("f1", 0.70)}  # fmt: skip
    for task, (metric, value) in glue.items():
        _run(root, task, "full", 0, validation={metric: value})
    _run(root, "mnli", "full", 0, validation_matched={"accuracy": 0.81}, validation_mismatched={"accuracy": 0.80})
    _run(root, "rte", "no_aux_lm", 0, validation={"accuracy": 0.55})
    (root / "rte" / "full" / "seed-3").mkdir()  # an unfinished run: no all_results.json, not counted
    return root


def test_report_rows_follow_the_comparability_rules(runs, capsys):
    report = main(["report", "--output_dir", str(runs)])
    rows = {(r["table"], r["column"], r["condition"]): r for r in report["rows"]}
    rte = rows[(2, "RTE", "full")]
    assert rte["seeds"] == {"0": 60.0, "1": 62.0, "2": 50.0} and rte["median"] == 60.0 and rte["paper"] == 56.0
    assert rte["split"] == "validation" and not rte["like_for_like"] and rte["delta"] is None
    assert "GLUE test server" in rte["note"]
    snli = rows[(2, "SNLI", "full")]
    assert snli["like_for_like"] and snli["delta"] == pytest.approx(88.0 - 89.9) and snli["split"] == "test"
    qnli = rows[(2, "QNLI", "full")]
    assert "dataset changed since the paper" in qnli["note"] and qnli["delta"] is None
    assert rows[(3, "RACE-m", "full")]["median"] == 60.0 and rows[(3, "RACE-h", "full")]["delta"] == pytest.approx(
        -4.4
    )
    assert rows[(2, "MNLI-m", "full")]["median"] == 81.0 and rows[(2, "MNLI-mm", "full")]["median"] == 80.0
    assert rows[(5, "MNLI (acc)", "full")]["median"] == 80.5  # the mean of matched and mismatched
    assert rows[(3, "Story Cloze", "full")]["median"] is None  # no run
    averages = report["averages"]
    assert averages["full"] == {
        "paper": 74.7,
        "ours": pytest.approx((40 + 90 + 80 + 81 + 70 + 80.5 + 87 + 60) / 8, abs=0.005),
        "tasks": 8,
    }
    assert averages["no_aux_lm"] == {"paper": 75.0, "ours": None, "tasks": 1}
    results = json.loads((runs / "results.json").read_text())
    assert len(results["rows"]) == len(report["rows"]) and set(results["averages"]) == {
        "full",
        "no_pretraining",
        "no_aux_lm",
    }
    assert (runs / "REPORT.md").read_text() == GOLDEN.read_text() and capsys.readouterr().out == GOLDEN.read_text()


def test_report_of_some_tables_and_bad_arguments(runs, capsys):
    rows = main(["report", "--output_dir", str(runs), "--tables", "3"])["rows"]
    assert {r["table"] for r in rows} == {3} and len(rows) == 4
    with pytest.raises(SystemExit):
        main(["report", "--output_dir", str(runs), "--tables", "6"])
    assert "the paper's result tables are 2, 3, 4 and 5" in capsys.readouterr().err
