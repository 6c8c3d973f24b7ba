"""The task table (hf_gpt1.data.tasks): names, formats, labels and layouts of every task."""

import subprocess
import sys
from pathlib import Path

import pytest

from hf_gpt1.data.tasks import FORMATS, TASKS, TaskSpec, get_task


def test_get_task_names_and_aliases():
    assert get_task("SST-2") is get_task("sst2") is TASKS["sst2"]
    assert get_task("STS-B") is get_task("sts_b") is TASKS["stsb"]
    assert get_task("MNLI-mm") is get_task("mnli_matched") is TASKS["mnli"]
    assert get_task("StoryCloze") is TASKS["story_cloze"]
    assert get_task(TASKS["rte"]) is TASKS["rte"]
    with pytest.raises(KeyError, match=r"Unknown task 'glue'; valid tasks: \['ax', 'bbc_news', 'cola'"):
        get_task("glue")


def test_table_is_consistent():
    expected = {"cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte", "wnli", "snli", "scitail"}
    assert expected | {"ax", "story_cloze", "race", "swag", "bbc_news"} == set(TASKS)
    for name, spec in TASKS.items():
        assert spec.name == name and spec.format in FORMATS and spec.metric_config and spec.main_metric
        if spec.glue_tsv is not None:
            assert spec.hub == ("nyu-mll/glue", name) and spec.glue_tsv.submission_files
            assert ("label" in spec.glue_tsv.columns) == (spec.predicted_by is None)
    # GLUE's diagnostic set: test pairs only, MNLI's labels, predicted by the MNLI model, also from an MNLI run
    assert TASKS["ax"].predicted_by == "mnli" and TASKS["ax"].label_names == TASKS["mnli"].label_names
    assert TASKS["mnli"].glue_tsv.submission_files["test_ax"] == "AX.tsv"
    assert TASKS["stsb"].label_range == (0.0, 5.0) and TASKS["story_cloze"].id_column == "InputStoryid"
    assert TASKS["stsb"].is_regression and TASKS["stsb"].num_labels == 1 and TASKS["stsb"].format == "similarity"
    assert TASKS["mnli"].num_labels == 3 and TASKS["mnli"].id2label == {
        0: "entailment",
        1: "neutral",
        2: "contradiction",
    }
    assert TASKS["race"].num_labels is None and not TASKS["race"].is_regression
    assert TASKS["mnli"].glue_tsv.files["validation_mismatched"] == "dev_mismatched.tsv"
    assert TASKS["scitail"].hub == ("allenai/scitail", "tsv_format")


def test_label_to_id():
    rte, stsb, story, race = (TASKS[name] for name in ("rte", "stsb", "story_cloze", "race"))
    assert rte.label_to_id("not_entailment") == 1 and rte.label_to_id(0) == 0
    assert rte.label_to_id(-1) is None and rte.label_to_id(None) is None and TASKS["snli"].label_to_id("-") is None
    assert stsb.label_to_id("3.800") == pytest.approx(3.8) and stsb.label_to_id(-1.0) is None
    assert rte.label_to_id("") is None and rte.label_to_id(" ") is None
    assert story.label_to_id(2) == 1 and story.label_to_id("1") == 0
    assert race.label_to_id("D") == 3 and race.label_to_id(3) == 3
    for spec, value, message in (
        (rte, 2, r"label 2 is not one of the names \['entailment', 'not_entailment'\] or the integer ids \[0, 1\]"),
        (rte, "Entailment", "label 'Entailment' is not one of"),
        (rte, True, "label True"),
        (story, 0, r"integer ids \[1, 2\]"),
        (stsb, "high", "'high' is not a finite number"),
        (stsb, 5.5, r"score 5.5 is outside the task's range \[0, 5\]"),
    ):
        with pytest.raises(ValueError, match=message):
            spec.label_to_id(value)


def test_task_spec_validation():
    with pytest.raises(ValueError, match=r"unknown format 'pairs'; valid formats: \['classification'"):
        TaskSpec("mine", "pairs", ("a",))
    with pytest.raises(ValueError, match=r"format 'entailment' takes 2 text column\(s\), got \['a'\]"):
        TaskSpec("mine", "entailment", ("a",))
    with pytest.raises(ValueError, match="choice_columns are required for multiple_choice"):
        TaskSpec("mine", "multiple_choice", ("a",))


def test_tasks_module_imports_no_torch():
    # The package's __init__ (which registers the models) is kept out of the way: hf_gpt1 is an empty package here.
    package = Path(__file__).resolve().parents[2] / "hf_gpt1"
    code = (
        "import importlib, sys, types\n"
        "sys.modules['hf_gpt1'] = types.ModuleType('hf_gpt1')\n"
        f"sys.modules['hf_gpt1'].__path__ = [{str(package)!r}]\n"
        "importlib.import_module('hf_gpt1.data.tasks')\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
