# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Task data in and predictions out (hf_gpt1.data): the official GLUE TSVs of ../shared/data, local CSV/TSV/JSON
files read with their problems named by file and line, a recipe's splits from a folder and files, Story Cloze's split,
and submission / prediction files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest

from hf_gpt1.data.files import (
    load_corpus,
    load_glue_tsv,
    load_task_splits,
    read_data_file,
    story_cloze_split,
)
from hf_gpt1.data.tasks import get_task
from tests.utils import (
    COMMON,
    predict_args,
    run_command,
    shared_data,
    story_cloze_csv,
)

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
        # each label is the class its field names ("0"/"1" or RTE's names), and reading the stored ids again (as
        # tokenization does) changes none: a ClassLabel id is an id
        spec = get_task(task)
        assert dataset["label"] == [LABEL_NAMES[task].index(value) for value in _label_fields(data_dir, spec, split)]
        assert [spec.label_to_id(label_id) for label_id in dataset["label"]] == dataset["label"]


def _label_fields(data_dir: Path, spec, split: str) -> list[str]:
    """The label field of every row of a GLUE TSV, as the file writes it (tabs, no quoting, MRPC's BOM)."""
    import csv

    layout = spec.glue_tsv
    canonical = split.replace("dev", "validation")
    path = data_dir / layout.folder / layout.files[canonical]
    with path.open(encoding="utf-8-sig", newline="") as file:
        rows = list(csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE))
    column = layout.columns["label"]
    if canonical in layout.headerless_splits:
        return [row[column] for row in rows]
    position = [name.strip() for name in rows[0]].index(column)
    return [row[position] for row in rows[1:]]


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


def _table(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_tsv_files_are_read_without_quoting(tmp_path):
    """A TSV field that opens a `"` (QNLI's dev and test files have such rows) is literal text: every line one row."""
    path = _table(
        tmp_path / "test.tsv",
        'index\tquestion\tsentence\n0\t"What is it?\tIt is\n1\tWhy?\t"Because," she said.\n2\tHow?\tSo.\n\n\n',
    )
    rows = read_data_file(path, task=get_task("qnli"), split="test")
    assert rows["question"] == ['"What is it?', "Why?", "How?"]  # GLUE layout: the Hub's column names, the file's ids
    assert rows["sentence"][1] == '"Because," she said.' and rows["idx"] == [0, 1, 2]
    generic = read_data_file(path)  # no task: read by its header, the same rows
    assert generic.num_rows == 3 and generic.column_names == ["index", "question", "sentence"]


def test_csv_fields_stay_text(tmp_path):
    path = _table(tmp_path / "train.csv", 'sentence,label\n"NA, a comma",1\nnull,0\n"",1\n')
    rows = read_data_file(path)
    assert rows["sentence"] == ["NA, a comma", "null", ""] and rows["label"] == ["1", "0", "1"]


def test_glue_layout_of_a_headerless_cola_file(tmp_path):
    path = _table(tmp_path / "train.tsv", "gj04\t1\t\tOur friends won't buy it.\ngj04\t0\t*\tThey drank the pub.\n")
    rows = read_data_file(path, task=get_task("cola"), split="train")
    assert rows["sentence"] == ["Our friends won't buy it.", "They drank the pub."] and rows["label"] == [1, 0]


def test_a_folder_given_as_a_data_file_is_said_to_be_a_folder(tmp_path):
    """`--train_file runs/` (a folder, suffix or not) is named as a folder, not as a file of an unknown type."""
    for name in ("data", "data.csv"):
        (tmp_path / name).mkdir()
        with pytest.raises(FileNotFoundError, match="is a folder, not a file"):
            read_data_file(tmp_path / name)


@pytest.mark.parametrize(
    "name, content, fragment",
    [
        ("dup.csv", "sentence,label,label\na,1,0\n", "names column(s) ['label'] more than once"),
        ("empty.tsv", "", "is empty"),
        ("blank.tsv", "\n\n", "is empty: it needs a header"),
        ("header.csv", "sentence,label\n", "holds a header but no rows"),
        ("fields.tsv", "sentence\tlabel\na\t1\nb\t0\textra\n", "fields.tsv:3: expected 2 fields"),
        ("semicolon.csv", "sentence;label\na;1\n", "not comma-separated (it seems to use ';')"),
        ("noname.csv", "sentence,,label\na,b,1\n", "empty column name"),
        ("data.xlsx", "x", "unsupported file type 'xlsx'"),
    ],
)
def test_bad_local_files_are_named_with_their_line(name, content, fragment, tmp_path):
    with pytest.raises(ValueError, match=None) as info:
        read_data_file(_table(tmp_path / name, content))
    # the file and its line, in the data layer's words: no flag the library caller never passed
    assert (
        fragment in str(info.value)
        and str(info.value).startswith(str(tmp_path / name))
        and "--" not in str(info.value)
    )


def test_non_utf8_file_names_its_line(tmp_path):
    path = _table(tmp_path / "latin.tsv", "sentence\tlabel\nok\t1\ncaf\u00e9\t0\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"latin.tsv:3 is not UTF-8 text.*iconv"):
        read_data_file(path)


def test_glue_index_that_is_not_an_integer(tmp_path):
    folder = tmp_path / "RTE"
    folder.mkdir()
    (folder / "test.tsv").write_text("index\tsentence1\tsentence2\n0\ta\tb\nseven\tc\td\n")
    with pytest.raises(ValueError, match=r"RTE/test.tsv:3: the 'index' column holds 'seven', not an integer"):
        load_glue_tsv(tmp_path, "rte", "test")


def test_empty_glue_file(tmp_path):
    (tmp_path / "RTE").mkdir()
    (tmp_path / "RTE" / "dev.tsv").write_text("")
    with pytest.raises(ValueError, match="dev.tsv is empty"):
        load_glue_tsv(tmp_path, "rte", "validation")


def test_score_outside_the_tasks_range(tmp_path):
    (tmp_path / "STS-B").mkdir()
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
    (tmp_path / "STS-B" / "train.tsv").write_text(header + "0\tg\tf\t2012\t1\ts\ts\ta\tb\t7.5\n")
    with pytest.raises(ValueError, match=r"train.tsv:2: .*score '7.5' is outside the task's range \[0, 5\]"):
        load_glue_tsv(tmp_path, "stsb", "train")


def test_json_errors_name_the_file(tmp_path):
    path = _table(tmp_path / "rows.jsonl", '{"sentence": "a", "label": 1}\n{"sentence": \n')
    with pytest.raises(ValueError, match=r"rows.jsonl: cannot parse it as JSON"):
        read_data_file(path)
    assert read_data_file(_table(tmp_path / "ok.jsonl", '{"sentence": "a", "label": 1}\n'))["label"] == [1]


# ------------------------------------------------------------------------------------------------ a recipe's splits


def _rte_folder(root: Path, splits=("train", "dev", "test")) -> Path:
    folder = root / "RTE"
    folder.mkdir(parents=True)
    header = "index\tsentence1\tsentence2\tlabel\n"
    for name in splits:
        body = "".join(f"{i}\ta{i}\tb{i}\t{'entailment' if i % 2 else 'not_entailment'}\n" for i in range(3))
        if name == "test":
            (folder / "test.tsv").write_text("index\tsentence1\tsentence2\n0\tx\ty\n")
        else:
            (folder / f"{name}.tsv").write_text(header + body)
    return folder


def test_folder_and_files_combine(tmp_path):
    _rte_folder(tmp_path / "glue", splits=("dev", "test"))  # no train.tsv: a folder for prediction
    raw, sources = load_task_splits(get_task("rte"), data_dir=str(tmp_path / "glue"))
    assert set(raw) == {"validation", "test"} and sources["test"].endswith("RTE/test.tsv")
    extra = _table(tmp_path / "more.csv", "sentence1,sentence2,label\np,h,entailment\n")
    raw, sources = load_task_splits(get_task("rte"), data_dir=str(tmp_path / "glue"), train_file=str(extra))
    assert set(raw) == {"train", "validation", "test"} and sources["train"] == str(extra)
    assert raw["train"]["sentence1"] == ["p"]
    override = _table(tmp_path / "dev.csv", "sentence1,sentence2,label\nq,r,not_entailment\n")
    raw, _ = load_task_splits(get_task("rte"), data_dir=str(tmp_path / "glue"), validation_file=str(override))
    assert raw["validation"]["sentence1"] == ["q"]  # the file replaced the folder's dev.tsv


def test_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_task_splits(get_task("rte"), data_dir=str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds none of rte's GLUE files"):
        load_task_splits(get_task("rte"), data_dir=str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="not a GLUE task"):
        load_task_splits(get_task("race"), data_dir=str(tmp_path))


def test_story_cloze_protocol_split(tmp_path):
    """The 1,871 stories of the 2016 validation CSV → 1,497 train / 374 validation, the original's fixed split."""
    path, test = story_cloze_csv(tmp_path / "val2016.csv", 1871), story_cloze_csv(tmp_path / "test2016.csv", 10)
    task = get_task("story_cloze")
    files = {"train_file": str(path), "test_file": str(test)}
    splits, sources = load_task_splits(task, **files, story_cloze_protocol=True)
    assert {name: rows.num_rows for name, rows in splits.items()} == {"train": 1497, "validation": 374, "test": 10}
    train_ids, valid_ids = set(splits["train"]["InputStoryid"]), set(splits["validation"]["InputStoryid"])
    assert not train_ids & valid_ids and len(train_ids | valid_ids) == 1871
    again, _ = load_task_splits(task, **files, story_cloze_protocol=True)
    assert again["validation"]["InputStoryid"] == splits["validation"]["InputStoryid"]  # seed 3535999445, not random
    assert "validation part" in sources["validation"]


def test_story_cloze_protocol_errors(tmp_path):
    small = story_cloze_csv(tmp_path / "small.csv", 300)
    with pytest.raises(ValueError, match="holds 300 stories; the paper's protocol holds out 374"):
        story_cloze_split(read_data_file(small), str(small))
    task = get_task("story_cloze")
    # a library caller reads of its own arguments, by their names
    with pytest.raises(ValueError, match="`story_cloze_protocol` needs a `train_file`"):
        load_task_splits(task, test_file=str(small), story_cloze_protocol=True)
    with pytest.raises(ValueError, match="drop the `validation_file`"):
        load_task_splits(task, train_file=str(small), validation_file=str(small), story_cloze_protocol=True)


# ------------------------------------------------------------------------------------------------ corpora


def test_corpus_from_text_files(tmp_path):
    text = _table(tmp_path / "a.txt", "".join(f"line {i}\n" for i in range(40)))
    train, validation = load_corpus([str(text)], validation_split_percentage=5)
    assert (train.num_rows, validation.num_rows) == (38, 2) and validation["text"] == ["line 38", "line 39"]
    rows = _table(tmp_path / "b.jsonl", "".join(json.dumps({"body": f"doc {i}"}) + "\n" for i in range(4)))
    held = _table(tmp_path / "c.jsonl", "".join(json.dumps({"body": f"held {i}"}) + "\n" for i in range(4)))
    train, validation = load_corpus([str(rows)], [str(held)], text_column="body")
    assert train.column_names == ["text"] and validation.num_rows == 4
    with pytest.raises(ValueError, match="b.jsonl is the same file as `train_files` .*b.jsonl"):
        load_corpus([str(rows)], [str(rows)], text_column="body")  # held-out text would be trained on
    with pytest.raises(ValueError, match="no column 'text'; the columns are \\['body'\\]"):
        load_corpus([str(rows)])
    with pytest.raises(ValueError, match="share one type"):
        load_corpus([str(text), str(rows)])
    latin = _table(tmp_path / "latin.txt", "ok\ncaf\u00e9\n", encoding="latin-1")
    with pytest.raises(ValueError, match="latin.txt:2 is not UTF-8"):
        load_corpus([str(latin)])


def test_a_second_header_in_a_joined_file_is_refused_naming_its_line(rte_model, tmp_path, capsys, no_training):
    part = "sentence1,sentence2\nA man plays.,A person plays.\nA dog runs.,A cat sleeps.\n"
    test = tmp_path / "test.csv"
    test.write_text(part + part)  # cat a.csv b.csv
    argv = predict_args(rte_model, tmp_path, tmp_path / "out")
    argv[argv.index("--data_dir") : argv.index("--data_dir") + 2] = ["--test_file", str(test)]
    error = run_command(capsys, "glue", *map(str, argv)).error
    assert f"{test}:4 repeats the header row" in error, error
    assert not (tmp_path / "out").exists()


def test_a_glue_test_file_with_a_repeated_index_is_refused_naming_its_line(
    rte_model, glue_slice, tmp_path, capsys, no_training
):
    data = tmp_path / "glue"
    shutil.copytree(glue_slice / "RTE", data / "RTE")
    lines = (data / "RTE" / "test.tsv").read_text().splitlines(keepends=True)
    (data / "RTE" / "test.tsv").write_text("".join([*lines, lines[3]]))  # the row of index 2, again at the end
    error = run_command(capsys, "glue", *map(str, predict_args(rte_model, data, tmp_path / "out"))).error
    assert f"test.tsv:{len(lines) + 1}: 'index' 2 is also the id of the row at" in error and ":4" in error, error


def test_a_test_file_with_repeated_ids_is_refused(tiny_lm, tmp_path, capsys, no_training):
    stories = tmp_path / "test.csv"
    header = "InputStoryid,InputSentence1,InputSentence2,InputSentence3,InputSentence4,RandomFifthSentenceQuiz1,"
    header += "RandomFifthSentenceQuiz2\n"
    row = "{},A.,B.,C.,D.,E.,F.\n"
    stories.write_text(header + row.format("s1") + row.format("s2") + row.format("s1"))
    argv = [
        "--task", "story_cloze", "--model_name_or_path", str(tiny_lm), "--test_file", str(stories),
        "--do_train", "false", "--do_eval", "false", "--output_dir", str(tmp_path / "out"), *COMMON,
    ]  # fmt: skip

    error = run_command(capsys, "multiple-choice", *map(str, argv)).error
    assert "data row 3: 'InputStoryid' 's1' is also the id of the row at" in error, error


def test_glue_fields_may_hold_line_separators(tmp_path):
    from hf_gpt1.data.files import read_data_file
    from hf_gpt1.data.tasks import get_task

    path = tmp_path / "train.tsv"
    path.write_text("index\tsentence1\tsentence2\tlabel\n0\tA\u2028man plays.\tA person\u0085plays.\tentailment\n")
    rows = read_data_file(path, task=get_task("rte"))
    assert rows.num_rows == 1 and rows["sentence1"] == ["A\u2028man plays."]


def test_a_csv_label_written_as_an_id_is_that_id():
    from hf_gpt1.data.tasks import get_task

    assert get_task("rte").label_to_id("0") == 0 and get_task("rte").label_to_id(" 1") == 1
    with pytest.raises(ValueError, match="not one of"):
        get_task("rte").label_to_id("2")


def test_a_byte_order_mark_inside_a_jsonl_file_is_named_with_its_line(tmp_path):
    from hf_gpt1.data.files import read_data_file

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"sentence": "a", "label": 1}\n\xef\xbb\xbf{"sentence": "b", "label": 0}\n')
    with pytest.raises(ValueError, match=r"rows.jsonl:2 holds a byte-order mark \(U\+FEFF"):
        read_data_file(path)


def test_a_byte_order_mark_inside_a_field_is_text_as_in_qnlis_official_dev_tsv(tmp_path):
    from hf_gpt1.data.files import read_data_file
    from hf_gpt1.data.tasks import get_task

    qnli = tmp_path / "dev.tsv"  # QNLI dev.tsv line 62: U+FEFF inside a Wikipedia sentence (around coordinates)
    qnli.write_text(
        "index\tquestion\tsentence\tlabel\n0\tWhere is it?\tIt is at 51°N\ufeff 0°W in London.\tentailment\n"
        "1\tWho came?\tNobody came.\tnot_entailment\n",
        encoding="utf-8",
    )
    rows = read_data_file(qnli, get_task("qnli"), "validation")
    assert rows.num_rows == 2 and "\ufeff" in rows["sentence"][0]
    joined = tmp_path / "joined.tsv"  # a second file joined on with `cat`: its BOM starts a line
    joined.write_bytes(qnli.read_bytes() + "\ufeff2\tWhy?\tBecause.\tentailment\n".encode())
    with pytest.raises(ValueError, match=r"joined.tsv:4 holds a byte-order mark .* at its start"):
        read_data_file(joined, get_task("qnli"), "validation")


def test_every_shared_glue_tsv_is_read(tmp_path):
    from hf_gpt1.data.files import load_glue_tsv
    from hf_gpt1.data.tasks import get_task
    from tests.utils import shared_data

    root = shared_data("glue")
    for task, folder in [("cola", "CoLA"), ("sst2", "SST-2"), ("mrpc", "MRPC"), ("stsb", "STS-B"), ("rte", "RTE")]:
        for split in ("train", "validation", "test"):
            assert load_glue_tsv(root, get_task(task), split).num_rows > 0, (folder, split)
    assert load_glue_tsv(root, get_task("wnli"), "test").num_rows == 146
