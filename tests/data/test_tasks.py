# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The task table (hf_gpt1.data.tasks): names, formats, labels and layouts of every task."""

import json
import re

import pytest
import yaml

from hf_gpt1.data.tasks import BUILTIN_TASKS, FORMATS, TASKS, TaskSpec, get_task, register_task, task_from_file


def test_get_task_names_and_aliases():
    assert get_task("SST-2") is get_task("sst2") is TASKS["sst2"]
    assert get_task("STS-B") is get_task("sts_b") is TASKS["stsb"]
    assert get_task("MNLI-mm") is get_task("mnli_matched") is TASKS["mnli"]
    assert get_task("StoryCloze") is TASKS["story_cloze"]
    assert get_task(TASKS["rte"]) is TASKS["rte"]
    with pytest.raises(KeyError, match=r"Unknown task 'glue'; valid tasks: \['ax', 'cola'"):
        get_task("glue")


def test_table_is_consistent():
    expected = {"cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte", "wnli", "snli", "scitail"}
    assert expected | {"ax", "story_cloze", "race", "swag"} == set(BUILTIN_TASKS) <= set(TASKS)
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


def _boolq(**overrides) -> TaskSpec:
    fields = dict(name="boolq_test", format="entailment", text_columns=("question", "passage"),
                  label_names=("False", "True"), label_column="answer", metric_config="accuracy",
                  main_metric="accuracy", aliases=("bq-test",))  # fmt: skip
    return TaskSpec(**{**fields, **overrides})


@pytest.fixture
def registered():
    """Tasks registered by a test are removed after it (the table is the process's)."""
    before = dict(TASKS)
    yield
    from hf_gpt1.data import tasks

    for name in set(TASKS) - set(before):
        for alias in (name, *TASKS[name].aliases):
            tasks._BY_NAME.pop(tasks._normalise_name(alias), None)
        del TASKS[name]


def test_a_task_registered_from_outside_is_a_task_everywhere(registered):
    spec = register_task(_boolq())
    assert get_task("BoolQ_Test") is spec is get_task("bq-test") and "boolq_test" in TASKS
    # a bool column (BoolQ's answer) reads as the label it names
    assert spec.label_to_id(True) == 1 and spec.label_to_id(False) == 0 and spec.label_to_id("True") == 1
    with pytest.raises(ValueError, match="Task name 'boolq_test' is already the registered task 'boolq_test'"):
        register_task(_boolq(text_columns=("passage", "question")))
    replaced = register_task(_boolq(text_columns=("passage", "question"), aliases=()), exist_ok=True)
    assert get_task("boolq_test") is replaced
    with pytest.raises(KeyError):
        get_task("bq-test")  # the replaced declaration's alias went with it
    with pytest.raises(ValueError, match="Task name 'rte' is already the built-in task 'rte'; choose another"):
        register_task(_boolq(name="rte"), exist_ok=True)
    with pytest.raises(ValueError, match="'sst-2' is already the built-in task 'sst2'"):
        register_task(_boolq(name="boolq_other", aliases=("sst-2",)))


def test_a_tasks_metric_is_checked_when_it_is_declared():
    with pytest.raises(ValueError, match=r"metric_config 'bleu' is not a config of the metric module; use one of"):
        _boolq(metric_config="bleu")
    with pytest.raises(ValueError, match=r"main_metric 'f1' is not a score of metric_config 'accuracy', which gives"):
        _boolq(main_metric="f1")
    with pytest.raises(ValueError, match="give both, or neither"):
        _boolq(main_metric=None)
    assert _boolq(metric_config="accuracy_f1", main_metric="f1").main_metric == "f1"
    assert TASKS["sst2"].label_to_id(True) == 1  # labels "0" and "1": a bool is the id


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_task_file_declares_a_task_for_the_command_line(registered, tmp_path, suffix):
    import json

    import yaml

    fields = {"name": "my_topics", "format": "classification", "text_columns": ["body"],
              "label_names": ["a", "b", "c"], "metric_config": "accuracy", "main_metric": "accuracy"}  # fmt: skip
    path = tmp_path / f"task{suffix}"
    path.write_text(json.dumps(fields) if suffix == ".json" else yaml.safe_dump(fields))
    spec = get_task(str(path))
    assert spec.name == "my_topics" and spec.text_columns == ("body",) and get_task("my_topics") is spec
    path.write_text(json.dumps({**fields, "labels": ["a"]}))
    path = path.rename(path.with_suffix(".json"))
    with pytest.raises(ValueError, match=r"task.json: 'labels' is no TaskSpec field; the fields are"):
        get_task(str(path))
    path.write_text(json.dumps({**fields, "main_metric": "f1"}))
    with pytest.raises(ValueError, match="task.json: Task 'my_topics': main_metric 'f1' is not a score"):
        get_task(str(path))
    with pytest.raises(KeyError, match="Task file .*missing.yaml does not exist"):
        get_task(str(tmp_path / "missing.yaml"))


# ----------------------------------------------------------------------------------------- task and argument files


@pytest.mark.parametrize("name", ["../../escaped", "runs/rte", "..", "a b", "", "café"])
def test_a_task_name_is_a_name_never_a_path(name, tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"name": name, "format": "classification", "text_columns": ["text"]}))
    with pytest.raises(ValueError, match=r"use ASCII letters \(a-z, A-Z\), digits, '_', '-' and '\.' only"):
        task_from_file(path)


def test_a_task_name_too_long_for_its_files_is_refused_when_read(tmp_path):
    """A name becomes file names (with suffixes): one that no file system takes is refused before any run."""
    from hf_gpt1.data.tasks import MAX_TASK_NAME

    path = tmp_path / "task.json"
    path.write_text(json.dumps({"name": "t" * 220, "format": "classification", "text_columns": ["text"]}))
    with pytest.raises(ValueError, match=f"has 220 characters: use at most {MAX_TASK_NAME}"):
        task_from_file(path)


def test_a_json_task_file_with_a_byte_order_mark_is_read(registered, tmp_path):
    """Windows editors write a UTF-8 byte-order mark: JSON files with one are read, as YAML and data files are."""
    path = tmp_path / "task.json"
    text = json.dumps({"name": "bom_task", "format": "classification", "text_columns": ["text"]})
    path.write_bytes("\ufeff".encode() + text.encode())
    assert task_from_file(path).name == "bom_task"


@pytest.mark.parametrize("field", ["label_names", "text_columns", "class_names", "aliases"])
def test_list_fields_must_be_lists(field, tmp_path):
    """`label_names: negative, positive` is one string: read as a list it was an 18-class head of characters."""
    fields = {"name": "mine", "format": "classification", "text_columns": ["text"], field: "negative, positive"}
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(fields))
    with pytest.raises(ValueError, match=rf"{field} must be a list of strings, got 'negative, positive'"):
        task_from_file(path)


def test_with_names_that_are_numbers_integers_are_ids_and_texts_names(tmp_path, monkeypatch):
    """datasets' ClassLabel rule (an integer is an id, a text a name), the same for a task read from a file."""
    from hf_gpt1.data import tasks

    monkeypatch.setattr(tasks, "TASKS", dict(tasks.TASKS))  # the file registers its task: in copies of the registry
    monkeypatch.setattr(tasks, "_BY_NAME", dict(tasks._BY_NAME))
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"name": "stars", "format": "classification", "text_columns": ["text"],
                                "label_names": ["1", "2", "3"]}))  # fmt: skip
    spec = task_from_file(path)
    assert [spec.label_to_id(v) for v in (0, 1, 2, "1", "3")] == [0, 1, 2, 0, 2]
    with pytest.raises(ValueError, match=r'an integer label is a class id .*; write the name as text, "3"\.$'):
        spec.label_to_id(3)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\nformat: !!python/object/apply:os.system ['touch PWNED']\n", r":2: YAML tags \(tag:yaml.org"),
        ("name: x\nname: y\nformat: classification\n", r":2: 'name' is given twice; keep one"),
        ("a: &a [1, 1, 1]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n", r":1: YAML anchors and aliases"),
    ],
)
def test_task_files_are_read_strictly(text, problem, tmp_path):
    path = tmp_path / "task.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}{problem}"):
        task_from_file(path)
    assert not (tmp_path / "PWNED").exists()


def test_a_json_key_given_twice_is_refused(tmp_path):
    path = tmp_path / "task.json"
    path.write_text('{"name": "a", "name": "b", "format": "classification", "text_columns": ["text"]}')
    with pytest.raises(ValueError, match="'name' is given twice; keep one"):
        task_from_file(path)


def test_an_argument_file_alias_bomb_is_refused_before_it_grows(tmp_path):
    """The billion-laughs YAML: refused at its first anchor, in bounded time and memory."""
    import resource

    from hf_gpt1.commands.command_line import argument_file_argv

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    path = tmp_path / "args.yaml"
    path.write_text("\n".join(lines) + "\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError, match=r"args.yaml:1: YAML anchors and aliases"):
        argument_file_argv(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB
    duplicated = tmp_path / "twice.yaml"
    duplicated.write_text("learning_rate: 1e-4\nseed: 1\nlearning_rate: 2e-4\n")
    with pytest.raises(ValueError, match=r"twice.yaml:3: 'learning_rate' is given twice; keep one"):
        argument_file_argv(duplicated)
