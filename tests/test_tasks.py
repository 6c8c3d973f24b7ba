"""The task table and the GLUE TSV loader (hf_gpt1.tasks), against the real GLUE files in ../shared/data."""

import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from hf_gpt1.tasks import FORMATS, TASKS, TaskSpec, get_task, load_glue_tsv, write_glue_submission
from tests.conftest import shared_data

ROW_COUNTS = {
    "cola": (8551, 1043, 1063),
    "sst2": (67349, 872, 1821),
    "mrpc": (3668, 408, 1725),
    "stsb": (5749, 1500, 1379),
    "rte": (2490, 277, 3000),
    "wnli": (635, 71, 146),
}
LABEL_NAMES = {
    "cola": ["0", "1"],
    "sst2": ["0", "1"],
    "mrpc": ["0", "1"],
    "rte": ["entailment", "not_entailment"],
    "wnli": ["0", "1"],
}
TEXT_COLUMNS = {"cola": ["sentence"], "sst2": ["sentence"]}


@pytest.mark.parametrize("task", sorted(ROW_COUNTS))
@pytest.mark.parametrize("split_index, split", [(0, "train"), (1, "dev"), (2, "test")])
def test_local_glue_tsv_loads(task, split_index, split):
    data_dir = shared_data("glue")
    dataset = load_glue_tsv(data_dir, task, split)
    assert len(dataset) == ROW_COUNTS[task][split_index]
    text_columns = TEXT_COLUMNS.get(task, ["sentence1", "sentence2"])
    assert all(isinstance(text, str) for column in text_columns for text in dataset[column])
    assert dataset["idx"] == list(range(len(dataset)))
    if split == "test":
        assert dataset.column_names == [*text_columns, "idx"], "the test split has no labels"
    elif task == "stsb":
        assert dataset.column_names == [*text_columns, "label", "idx"]
        assert dataset.features["label"] == datasets.Value("float32")
        assert 0.0 <= min(dataset["label"]) and max(dataset["label"]) <= 5.0
    else:
        assert dataset.column_names == [*text_columns, "label", "idx"]
        assert dataset.features["label"].names == LABEL_NAMES[task]
        assert set(dataset["label"]) == {0, 1}


def test_local_glue_tsv_content():
    data_dir = shared_data("glue")
    # MRPC's header starts with a UTF-8 BOM; its first row is a paraphrase (Quality 1).
    mrpc = load_glue_tsv(data_dir / "MRPC", "MRPC", "train")[0]
    assert mrpc["label"] == 1 and mrpc["sentence1"].startswith("Amrozi accused his brother")
    # Quotes are literal (csv.QUOTE_NONE): this dev pair starts its second sentence with one.
    assert load_glue_tsv(data_dir, "mrpc", "validation")[0]["sentence2"].startswith('" The foodservice')
    # CoLA train/dev have no header: label is field 1, the sentence field 3.
    cola = load_glue_tsv(data_dir, "cola", "dev")[0]
    assert cola == {"sentence": "The sailors rode the breeze clear of the rocks.", "label": 1, "idx": 0}
    rte = load_glue_tsv(data_dir, "rte", "validation")[0]
    assert rte["label"] == 1 and rte["sentence2"] == "Christopher Reeve had an accident."
    assert load_glue_tsv(data_dir, "sts-b", "train")[0]["label"] == 5.0


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_load_glue_tsv_errors(tmp_path):
    header = "index\tsentence1\tsentence2\tlabel\n"
    _write(tmp_path / "RTE" / "train.tsv", header + "0\ta\tb\tentailment\n1\ta\tb\n2\tc\td\tnot_entailment\n")
    with pytest.raises(
        ValueError, match=r"RTE/train.tsv:3: expected 4 tab-separated fields, got 3.*skip_bad_rows=True"
    ):
        load_glue_tsv(tmp_path, "rte", "train")
    assert load_glue_tsv(tmp_path, "rte", "train", skip_bad_rows=True)["label"] == [0, 1]

    _write(tmp_path / "RTE" / "dev.tsv", header + "0\ta\tb\tentailment\n1\ta\tb\tcontradiction\n")
    with pytest.raises(
        ValueError, match=r"RTE/dev.tsv:3: .*label 'contradiction' is not one of .*\['entailment', 'not_entailment'\]"
    ):
        load_glue_tsv(tmp_path, "rte", "validation")

    _write(tmp_path / "RTE" / "test.tsv", "index\tpremise\thypothesis\n0\ta\tb\n")
    with pytest.raises(ValueError, match=r"header lacks column\(s\) \['sentence1', 'sentence2'\]"):
        load_glue_tsv(tmp_path, "rte", "test")
    with pytest.raises(FileNotFoundError, match="<data_dir>/WNLI/"):
        load_glue_tsv(tmp_path, "wnli", "train")
    with pytest.raises(ValueError, match=r"no split 'dev_matched'; its GLUE TSV splits are \['train', 'validation'"):
        load_glue_tsv(tmp_path, "rte", "dev_matched")
    with pytest.raises(ValueError, match="not a GLUE task"):
        load_glue_tsv(tmp_path, "race", "train")


def test_load_glue_tsv_mnli_and_qqp_layouts(tmp_path):
    mnli_header = "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tlabel1\tgold_label\n"
    _write(tmp_path / "MNLI" / "dev_mismatched.tsv", mnli_header + "0\t1\t2\tfiction\tP\tH\tneutral\tneutral\n")
    dataset = load_glue_tsv(tmp_path, "mnli-mm", "dev_mismatched")
    assert dataset.split == "validation_mismatched"
    assert dataset[0] == {"premise": "P", "hypothesis": "H", "label": 1, "idx": 0}
    _write(tmp_path / "QQP" / "test.tsv", "id\tquestion1\tquestion2\n7\tq1\tq2\n")
    assert load_glue_tsv(tmp_path, "qqp", "test")[0] == {"question1": "q1", "question2": "q2", "idx": 7}


def test_get_task_names_and_aliases():
    assert get_task("SST-2") is get_task("sst2") is TASKS["sst2"]
    assert get_task("STS-B") is get_task("sts_b") is TASKS["stsb"]
    assert get_task("MNLI-mm") is get_task("mnli_matched") is TASKS["mnli"]
    assert get_task("StoryCloze") is TASKS["story_cloze"]
    assert get_task(TASKS["rte"]) is TASKS["rte"]
    with pytest.raises(KeyError, match=r"Unknown task 'glue'; valid tasks: \['bbc_news', 'cola'"):
        get_task("glue")


def test_table_is_consistent():
    expected = {"cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte", "wnli", "snli", "scitail"}
    assert expected | {"story_cloze", "race", "swag", "bbc_news"} == set(TASKS)
    for name, spec in TASKS.items():
        assert spec.name == name and spec.format in FORMATS and spec.metric_config and spec.main_metric
        if spec.glue_tsv is not None:
            assert spec.hub == ("nyu-mll/glue", name) and spec.glue_tsv.submission_files
            assert "label" in spec.glue_tsv.columns
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
    assert story.label_to_id(2) == 1 and story.label_to_id("1") == 0
    assert race.label_to_id("D") == 3 and race.label_to_id(3) == 3
    for spec, value, message in (
        (rte, 2, r"label 2 is not one of the names \['entailment', 'not_entailment'\] or the integer ids \[0, 1\]"),
        (rte, "Entailment", "label 'Entailment' is not one of"),
        (rte, True, "label True"),
        (story, 0, r"integer ids \[1, 2\]"),
        (stsb, "high", "'high' is not a finite number"),
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


def test_write_glue_submission(tmp_path):
    path = write_glue_submission("rte", [0, 1, 1], tmp_path)
    assert path.name == "RTE.tsv"
    assert path.read_text() == "index\tprediction\n0\tentailment\n1\tnot_entailment\n2\tnot_entailment\n"
    assert (
        write_glue_submission("sts-b", [4.25, 0.1], tmp_path).read_text() == "index\tprediction\n0\t4.250\n1\t0.100\n"
    )
    assert write_glue_submission("mnli", [2], tmp_path, split="test_mismatched").name == "MNLI-mm.tsv"
    with pytest.raises(ValueError, match="submission splits are"):
        write_glue_submission("mnli", [2], tmp_path)
    with pytest.raises(ValueError, match="is not a label id"):
        write_glue_submission("cola", [2], tmp_path)


def test_tasks_module_imports_no_torch():
    # Loaded from its file, so the package __init__ (which registers the models) is not in the way.
    path = Path(__file__).resolve().parents[1] / "hf_gpt1" / "tasks.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('tasks', {str(path)!r})\n"
        "module = sys.modules['tasks'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
