# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The one strict reader of the JSON files a user writes (hf_gpt1.data.strict_files): every reader of such a file —
the GLUE server's scores, data files, corpora, task files, the original release's files — reads a file that starts
with a UTF-8 byte-order mark (Windows editors write one), and refuses a key given twice in one line naming it (JSON
keeps the last silently)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hf_gpt1.data.strict_files import DuplicateKeyError, loads_strict, read_json

BOM = b"\xef\xbb\xbf"


def _scores(path: Path):
    from hf_gpt1.tools.reproduce_report import read_glue_test_results

    return read_glue_test_results(path)


def _data_file(path: Path):
    from hf_gpt1.data.files import read_data_file

    return read_data_file(path).to_list()


def _corpus(path: Path):
    from hf_gpt1.data.files import load_corpus

    train, _ = load_corpus([str(path)], validation_split_percentage=50)
    return train["text"]


def _packed_corpus(path: Path):
    from hf_gpt1.data.packing import TextCorpus

    corpus = TextCorpus([str(path)], validation_split_percentage=50)
    return [*corpus.documents(), *corpus.documents(corpus.validation)]


@pytest.fixture(autouse=True)
def _registry_copy(monkeypatch):
    """A task file registers its task: in copies of the registry, so that other tests see the built-in one."""
    from hf_gpt1.data import tasks

    monkeypatch.setattr(tasks, "TASKS", dict(tasks.TASKS))
    monkeypatch.setattr(tasks, "_BY_NAME", dict(tasks._BY_NAME))


def _task(path: Path):
    from hf_gpt1.data.tasks import task_from_file

    return task_from_file(path).name


def _encoder(path: Path):
    from hf_gpt1.tokenization_gpt1 import original_tokenizer

    (path.parent / "vocab.bpe").write_text("#version: 0.2\na b</w>\n", encoding="utf-8")
    return original_tokenizer(path, path.parent / "vocab.bpe").tokenize("ab")


ROW = '{"sentence1": "a b", "sentence2": "c d", "label": "entailment"}'
TASK = '{"name": "mine", "format": "classification", "text_columns": ["text"], "label_names": ["no", "yes"]}'
# (reader, file name, a valid text, the text with a key given twice, that key)
READERS: dict[str, tuple[Callable[[Path], object], str, str, str, str]] = {
    "glue server scores": (_scores, "server.json", '{"RTE": 53.1}', '{"RTE": 53.1, "MRPC": 80, "RTE": 50.0}', "RTE"),
    "data file (.json)": (_data_file, "dev.json", f"[{ROW}]", f'[{ROW[:-1]}, "label": "not_entailment"}}]', "label"),
    "data file (.jsonl)": (_data_file, "dev.jsonl", ROW + "\n", ROW[:-1] + ', "label": "x"}\n', "label"),
    "corpus (.json)": (
        _corpus,
        "docs.json",
        json.dumps([{"text": "one"}, {"text": "two"}]),
        '[{"text": "one"}, {"text": "two", "text": "three"}]',
        "text",
    ),
    "corpus (.jsonl, packed)": (
        _packed_corpus,
        "docs.jsonl",
        '{"text": "one"}\n{"text": "two"}\n',
        '{"text": "one"}\n{"text": "a", "text": "b"}\n',
        "text",
    ),
    "task file": (_task, "task.json", TASK, TASK[:-1] + ', "name": "other"}', "name"),
    "release encoder": (
        _encoder,
        "encoder.json",
        '{"<unk>": 0, "a": 1, "b</w>": 2, "ab</w>": 3}',
        '{"<unk>": 0, "a": 1, "b</w>": 2, "ab</w>": 3, "a": 4}',
        "a",
    ),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_every_user_json_file_is_read_with_a_byte_order_mark(reader, tmp_path):
    read, name, text, _, _ = READERS[reader]
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    plain.mkdir()
    marked.mkdir()
    (plain / name).write_text(text, encoding="utf-8")
    (marked / name).write_bytes(BOM + text.encode())
    expected = read(plain / name)
    assert read(marked / name) == expected


@pytest.mark.parametrize("reader", list(READERS))
def test_every_user_json_file_refuses_a_key_given_twice_in_one_line_naming_it(reader, tmp_path):
    read, name, _, twice, key = READERS[reader]
    path = tmp_path / name
    path.write_text(twice, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read(path)
    message = str(info.value)
    assert f"{key!r} is given twice; keep one" in message and name in message and "\n" not in message, message


def test_the_release_shapes_file_is_read_with_a_byte_order_mark(tmp_path):
    from hf_gpt1.tools.convert import _expected_shapes, read_layout

    shapes = [[512, 16], [40478, 16], *_expected_shapes(16, 64)]  # one block
    (tmp_path / "params_shapes.json").write_bytes(BOM + json.dumps(shapes).encode())
    assert read_layout(tmp_path)[1].n_layer == 1


def test_the_reader_names_the_line_of_a_syntax_error_and_the_key_given_twice(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": 1,\n  "b": \n}')
    with pytest.raises(ValueError, match=r"x.json:4: not valid JSON \(Expecting value\)"):
        read_json(path)
    path.write_text('{"outer": {"a": 1, "a": 2}}')
    with pytest.raises(ValueError, match=r"x.json: 'a' is given twice; keep one"):
        read_json(path)
    path.write_bytes(b"\xff{}")
    with pytest.raises(ValueError, match=r"x.json: not UTF-8 text"):
        read_json(path)
    with pytest.raises(DuplicateKeyError, match="'a' is given twice"):
        loads_strict('{"a": 1, "a": 2}')
    assert loads_strict("\ufeff[1]") == [1] and loads_strict(BOM + b'{"a": 1}') == {"a": 1}


def test_a_model_config_with_a_key_given_twice_is_refused_naming_it(tiny, tmp_path):
    """config.json edited by hand (`n_layer` added again below): transformers would keep the last value."""
    import shutil

    from hf_gpt1 import GPT1LMHeadModel
    from hf_gpt1.training.checkpoints import load_checkpoint

    folder = tmp_path / "model"
    shutil.copytree(tiny, folder)
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text.rstrip().removesuffix("}") + ', "n_layer": 1\n}\n')
    with pytest.raises(ValueError, match=r"config.json: 'n_layer' is given twice; keep one; correct it or re-save"):
        load_checkpoint(GPT1LMHeadModel, folder)
