# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""The bad-input catalogue (docs/BAD_INPUT.md): every case gets one error naming the problem, the offending value /
column / file / line and the fix, raised before any training step and without a traceback from inside torch.

Recipe cases run in-process through `run_command`, that is `hf_gpt1.commands.main` (exactly what the console script
does: an `error: ...` line on stderr and exit status 2). A failed start must also leave the output folder unclaimed,
which shows the error came before the Trainer (and any training step) existed.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch

from hf_gpt1 import GPT1ForSequenceClassification, GPT1LMHeadModel
from hf_gpt1.data.transforms import GPT1ClassificationCollator, GPT1SimilarityCollator
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
from hf_gpt1.tools.convert import ConversionError, convert_openai_checkpoint
from hf_gpt1.training.run_folder import RUN_FILE
from tests.utils import SENTENCES, glue_error, overridden, plan_problems, run_command, tiny_config

# ------------------------------------------------------------------------------------------------ fixtures


def _variant(tiny, tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(tiny, folder)
    return folder


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


GOOD_RTE = (
    "sentence1,sentence2,label\nA man plays.,A person plays.,entailment\nA dog runs.,A cat sleeps.,not_entailment\n"
)


def pretrain_error(capsys, tmp_path, *argv):
    out = tmp_path / "pt_out"
    base = ["--output_dir", out, "--report_to", "none", "--vocab_size", "100", "--n_layer", "1", "--n_embd", "32"]
    base += ["--n_head", "2", "--n_positions", "64", "--max_steps", "1"]
    message = run_command(capsys, "pretrain", *overridden([str(a) for a in base], [str(a) for a in argv])).error
    assert not (out / RUN_FILE).exists()
    return message


# ------------------------------------------------------------------------------------------------ recipe: data files

BAD_FILES = {
    # case: (file name, content, task, expected fragments of the message)
    "label outside the label set": (
        "t.csv",
        GOOD_RTE + "A b.,C d.,maybe\n",
        "rte",
        ["'maybe'", "Row 2", "column 'label'", "'entailment'"],
    ),
    "integer label out of range": ("t.csv", GOOD_RTE + "A b.,C d.,7\n", "rte", ["label '7'", "integer ids [0, 1]"]),
    "float label for a classification task": ("t.csv", GOOD_RTE + "A b.,C d.,1.5\n", "rte", ["label '1.5'"]),
    "NaN regression target": (
        "t.csv",
        "sentence1,sentence2,label\nA b.,C d.,2.5\nA b.,C d.,nan\n",
        "stsb",
        ["'nan'", "not a finite number"],
    ),
    "inf regression target": (
        "t.csv",
        "sentence1,sentence2,label\nA b.,C d.,inf\n",
        "stsb",
        ["'inf'", "finite", "Row 0"],
    ),
    "non-numeric regression target": (
        "t.csv",
        "sentence1,sentence2,label\nA b.,C d.,high\n",
        "stsb",
        ["'high'", "finite"],
    ),
    "misnamed column": (
        "t.csv",
        "sentence1,hypothesis,label\nA b.,C d.,entailment\n",
        "rte",
        ["needs column(s) ['sentence2']", "'hypothesis'"],
    ),
    "missing label column in train": ("t.csv", "sentence1,sentence2\nA b.,C d.\n", "rte", ["no label column 'label'"]),
    "missing text value": (
        "t.csv",
        "sentence1,sentence2,label\nA b.,,entailment\n",
        "rte",
        ["data row 1 has an empty 'sentence2'", "fill in the text or drop the row"],
    ),
    "empty file": ("t.csv", "", "rte", ["is empty"]),
    "header without rows": ("t.csv", "sentence1,sentence2,label\n", "rte", ["header but no rows"]),
    "unbalanced quote": (
        "t.csv",
        'sentence1,sentence2,label\n"A b.,C d.,entailment\n',
        "rte",
        ["t.csv:2: expected 3 fields", "got 1", "unbalanced quote"],
    ),
    "row with extra fields": (
        "t.csv",
        GOOD_RTE + "A,B,C,D\n",
        "rte",
        ["t.csv:4: expected 3 fields", "got 4"],
    ),
    "wrong delimiter": ("t.csv", "sentence1;sentence2;label\nA b.;C d.;entailment\n", "rte", ["seems to use ';'"]),
    "tabs in a .csv": (
        "t.csv",
        "sentence1\tsentence2\tlabel\nA b.\tC d.\tentailment\n",
        "rte",
        ["seems to use '\\t'"],
    ),
    "broken JSON lines": (
        "t.jsonl",
        '{"sentence1": "A", "sentence2": "B", "label": 0}\n{"sentence1": \n',
        "rte",
        ["t.jsonl"],
    ),
    "unsupported file type": ("t.txt", "hello\n", "rte", ["unsupported file type 'txt'"]),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_data_file(case, capsys, tiny, tmp_path):
    name, content, task, fragments = BAD_FILES[case]
    path = _write(tmp_path / name, content)
    message = glue_error(capsys, tiny, tmp_path, train=path, task=task)
    for fragment in [str(path), *fragments] if case != "unsupported file type" else fragments:
        assert fragment in message, (fragment, message)


def test_file_not_utf8(capsys, tiny, tmp_path):
    path = _write(tmp_path / "latin1.csv", "sentence1,sentence2,label\nA caf\u00e9.,C d.,entailment\n", "latin-1")
    message = glue_error(capsys, tiny, tmp_path, train=path)
    assert str(path) in message and "not UTF-8" in message and "iconv" in message


def test_missing_file(capsys, tiny, tmp_path):
    message = glue_error(capsys, tiny, tmp_path, train=tmp_path / "nope.csv")
    assert "--train_file" in message and "nope.csv does not exist" in message


def test_bad_row_in_a_glue_tsv_folder(capsys, tiny, tmp_path):
    folder = tmp_path / "glue" / "RTE"
    folder.mkdir(parents=True)
    rows = 'index\tsentence1\tsentence2\tlabel\n0\tA b.\tC d.\tentailment\n1\tA "quoted\tC d.\n'
    _write(folder / "train.tsv", rows)
    message = glue_error(capsys, tiny, tmp_path, "--data_dir", tmp_path / "glue")
    assert f"{folder / 'train.tsv'}:3" in message and "expected 4 tab-separated fields, got 3" in message


def test_glue_tsv_folder_missing(capsys, tiny, tmp_path):
    message = glue_error(capsys, tiny, tmp_path, "--data_dir", tmp_path / "nowhere")
    assert "--data_dir" in message and "nowhere is not a folder" in message


def test_extra_columns_are_ignored_and_rows_without_label_are_reported(capsys, tiny, tmp_path, caplog):
    """Not errors: extra columns are dropped, unlabelled rows are dropped with a warning that counts them."""
    path = _write(
        tmp_path / "t.csv", "sentence1,sentence2,label,note\n" + "A b.,C d.,entailment,x\nE f.,G h.,,y\n" * 2
    )
    argv = ["--task", "rte", "--model_name_or_path", tiny, "--output_dir", tmp_path / "out", "--report_to", "none"]
    argv += ["--train_file", path, "--max_steps", "1", "--per_device_train_batch_size", "2", "--save_strategy", "no"]
    argv += ["--eval_strategy", "no"]
    with caplog.at_level("WARNING", logger="hf_gpt1.training.finetune"):
        results = run_command(capsys, "glue", *argv).results()
    assert results["train"]["train_samples_per_second"] > 0
    assert "dropped 2 of 4 rows without a gold label" in caplog.text


# ------------------------------------------------------------------------------------------------ recipe: arguments


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--task", "rtee"], ["Unknown task 'rtee'", "valid tasks", "'rte'"]),
        (["--max_seq_length", "100"], ["--max_seq_length 100 exceeds", "n_positions=64", "at most 64"]),
        (["--max_seq_length", "0"], ["--max_seq_length 0", "at least 3"]),
        (["--lm_coef", "-1"], ["--lm_coef -1.0 must be >= 0"]),
        (["--clf_pdrop", "1.5"], ["--clf_pdrop 1.5 must be in [0, 1)"]),
        (["--max_train_samples", "0"], ["--max_train_samples 0 must be >= 1"]),
        (["--transfer_layers", "5"], ["--transfer_layers must be in [0, 2], got 5"]),
        (["--seed", "4294967296"], ["--seed 4294967296: NumPy takes seeds in [0, 2**32)"]),
    ],
    ids=[
        "unknown-task",
        "seq-too-long",
        "seq-zero",
        "neg-lm-coef",
        "clf-pdrop",
        "zero-samples",
        "layers",
        "seed-too-large",
    ],
)
def test_bad_argument(argv, fragments, capsys, tiny, tmp_path):
    train = _write(tmp_path / "t.csv", GOOD_RTE)
    argv = [*argv] if "--task" in argv else ["--task", "rte", *argv]
    args = [*argv, "--model_name_or_path", tiny, "--output_dir", tmp_path / "out", "--report_to", "none"]
    args += ["--eval_strategy", "no", "--per_device_train_batch_size", "2"]  # a run that trains, but for `argv`
    if "--data_dir" not in argv:
        args += ["--train_file", train]
    message = run_command(capsys, "glue", *map(str, args)).error
    assert not (tmp_path / "out" / RUN_FILE).exists()
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        ({"task": "race"}, ["multiple choice", "run it with hf-gpt1 multiple-choice"]),
        ({"task": "snli", "data_dir": "/x"}, ["--data_dir reads GLUE TSV", "not a GLUE task", "--train_file"]),
    ],
    ids=["mc-task", "snli-tsv"],
)
def test_the_plan_refuses(data, fragments, tiny, tmp_path):
    """The plan's refusals of the task and its data, arguments in and problems out (the parse's: above, on argv)."""
    data = {"train_file": _write(tmp_path / "t.csv", GOOD_RTE), **data} if "data_dir" not in data else data
    problems = plan_problems(
        "glue", {"model_name_or_path": tiny}, data, {"output_dir": tmp_path / "out", "eval_strategy": "no"}
    )
    assert not (tmp_path / "out").exists()
    for fragment in fragments:
        assert fragment in problems[0], (fragment, problems)


def test_evaluation_without_validation_rows(tiny, tmp_path):
    train = _write(tmp_path / "t.csv", GOOD_RTE)
    data = {"task": "rte", "train_file": train}  # the recipe's default is --eval_strategy epoch
    (message,) = plan_problems("glue", {"model_name_or_path": tiny}, data, {"output_dir": tmp_path / "out"})
    assert "--eval_strategy epoch needs validation rows" in message and "--validation_file" in message
    assert not (tmp_path / "out").exists()


def test_output_dir_holding_another_run(tiny, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_FILE).write_text(json.dumps({"recipe": "pretrain"}))
    data = {"task": "rte", "train_file": _write(tmp_path / "t.csv", GOOD_RTE)}
    training = {"output_dir": out, "eval_strategy": "no", "per_device_train_batch_size": 2}
    (message,) = plan_problems("glue", {"model_name_or_path": tiny}, data, training)
    assert str(out) in message and "another run" in message and "--overwrite_output_dir" in message
    assert json.loads((out / RUN_FILE).read_text()) == {"recipe": "pretrain"}, "the other run must stay untouched"


def test_output_dir_holding_unknown_files(capsys, tiny, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    message = glue_error(capsys, tiny, tmp_path, train=_write(tmp_path / "t.csv", GOOD_RTE))
    assert "files that are not from an hf_gpt1 run" in message and (tmp_path / "out" / "notes.txt").exists()


def test_resume_without_a_run(capsys, tiny, tmp_path):
    message = glue_error(capsys, tiny, tmp_path, "--resume", train=_write(tmp_path / "t.csv", GOOD_RTE))
    assert "--resume" in message and "holds no run to resume" in message


# ------------------------------------------------------------------------------------------------ recipe: checkpoints


def test_model_folder_missing(capsys, tiny, tmp_path):
    message = glue_error(capsys, tiny, tmp_path, train=_write(tmp_path / "t.csv", GOOD_RTE), model=tmp_path / "no")
    assert f"--model_name_or_path {tmp_path / 'no'}: no such folder" in message


def test_tokenizer_without_gpt1_special_tokens(capsys, tiny, tmp_path):
    folder = _variant(tiny, tmp_path, "plain_tok")
    data = json.loads((folder / "tokenizer.json").read_text())
    data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("_")]
    data["post_processor"] = None  # a plain BPE tokenizer.json: nothing of GPT-1's input format
    (folder / "tokenizer.json").write_text(json.dumps(data))
    message = glue_error(capsys, tiny, tmp_path, train=_write(tmp_path / "t.csv", GOOD_RTE), model=folder)
    assert "holds no GPT-1 tokenizer" in message and "special tokens" in message


def test_checkpoint_head_does_not_match_num_labels(capsys, tiny, tmp_path):
    folder = tmp_path / "rte_model"
    GPT1ForSequenceClassification.from_pretrained(tiny, num_labels=2).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny / name, folder / name)
    train = _write(tmp_path / "t.csv", "premise,hypothesis,label\nA b.,C d.,neutral\n")
    message = glue_error(capsys, tiny, tmp_path, train=train, task="mnli", model=folder)
    assert "2-label head" in message and "needs 3 label(s)" in message and "pre-trained" in message


@pytest.mark.parametrize("damage", ["truncated", "random bytes"])
def test_corrupt_safetensors(damage, capsys, tiny, tmp_path):
    folder = _variant(tiny, tmp_path, "damaged")
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2] if damage == "truncated" else os.urandom(4096))
    message = glue_error(capsys, tiny, tmp_path, train=_write(tmp_path / "t.csv", GOOD_RTE), model=folder)
    assert str(folder) in message and "truncated or corrupt model.safetensors" in message


class _Payload:
    """Unpickling this runs a shell command: the weights-only loader must refuse it."""

    def __init__(self, flag):
        self.flag = flag

    def __reduce__(self):
        return (os.system, (f"touch {self.flag}",))


def test_pickled_bin_with_code_is_refused(capsys, tiny, tmp_path):
    folder = _variant(tiny, tmp_path, "evil")
    (folder / "model.safetensors").unlink()
    flag = tmp_path / "PWNED"
    state = GPT1LMHeadModel.from_pretrained(tiny).state_dict()
    torch.save({**state, "payload": _Payload(flag)}, folder / "pytorch_model.bin")
    message = glue_error(capsys, tiny, tmp_path, train=_write(tmp_path / "t.csv", GOOD_RTE), model=folder)
    assert "weights-only loading refuses" in message and not flag.exists()


def test_local_checkpoints_load_without_trust_remote_code(tiny, tmp_path):
    """With hf_gpt1 imported, the Auto classes resolve `gpt1` to the package's own classes: the modelling code copied
    beside the weights (auto_map) is never imported, and no trust_remote_code is needed."""
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    folder = _variant(tiny, tmp_path, "no_remote")
    (folder / "modeling_gpt1.py").write_text("raise RuntimeError('the copied remote code was executed')\n")
    assert type(AutoModelForCausalLM.from_pretrained(folder)) is GPT1LMHeadModel
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)
    assert type(model) is GPT1ForSequenceClassification
    assert (folder / "model.safetensors").is_file() and not list(folder.glob("*.bin"))


# ------------------------------------------------------------------------------------------------ recipe: pre-training


def test_pretrain_empty_text_file(capsys, tmp_path):
    path = _write(tmp_path / "empty.txt", "")
    assert f"--train_files {path} is empty" in pretrain_error(capsys, tmp_path, "--train_files", path)


def test_pretrain_corpus_too_small_to_hold_out(capsys, tmp_path):
    path = _write(tmp_path / "one.txt", "just one line of text\n")
    message = pretrain_error(capsys, tmp_path, "--train_files", path)
    assert "1 document(s)" in message and "--validation_files" in message


def test_pretrain_mixed_file_types(capsys, tmp_path):
    a, b = _write(tmp_path / "a.txt", "x\n"), _write(tmp_path / "b.csv", "text\nx\n")
    assert "share one type" in pretrain_error(capsys, tmp_path, "--train_files", a, b)


def test_pretrain_missing_text_column(capsys, tmp_path):
    path = _write(tmp_path / "a.jsonl", '{"body": "x"}\n' * 30)
    message = pretrain_error(capsys, tmp_path, "--train_files", path)
    assert "no column 'text'" in message and "'body'" in message and "--text_column" in message


def test_pretrain_width_not_divisible_by_heads(capsys, tmp_path):
    path = _write(tmp_path / "a.txt", "x\n" * 30)
    message = pretrain_error(capsys, tmp_path, "--train_files", path, "--n_head", "3")
    assert "--n_embd 32 is not divisible by --n_head 3" in message and "[1, 2, 4, 8, 16, 32]" in message


def test_pretrain_corpus_shorter_than_a_window(capsys, tmp_path):
    path = _write(tmp_path / "a.txt", "a few words\n" * 3)
    held = _write(tmp_path / "b.txt", "other words\n" * 3)  # (the same file twice is refused: data/test_packing.py)
    message = pretrain_error(capsys, tmp_path, "--train_files", path, "--validation_files", held)
    assert "shorter than one 64-token window" in message


# ------------------------------------------------------------------------------------------------ the command (CLI)


@pytest.mark.parametrize(
    ("command", "argv", "fragment"),
    [
        ("glue", ["--task", "nope", "--output_dir", "{tmp}/o"], "Unknown task 'nope'"),
        ("pretrain", ["--train_files", "{tmp}/missing.txt", "--output_dir", "{tmp}/o"], "missing.txt does not exist"),
    ],
)
def test_command_line_prints_one_error_line_and_exits_2(command, argv, fragment, tmp_path, capsys, monkeypatch):
    """`hf-gpt1 <command>` as its console script runs it (in-process; the script itself runs in the full tier,
    tests/test_commands.py): one error line, exit status 2, nothing claimed."""
    monkeypatch.delenv("HF_GPT1_TRACEBACK", raising=False)
    done = run_command(capsys, command, *(a.format(tmp=tmp_path) for a in argv))
    assert done.code == 2, done.stderr
    assert fragment in done.error
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------------------------------------ collators and model


@pytest.fixture(scope="module")
def ids():
    return {"start_token_id": 10, "delimiter_token_id": 11, "extract_token_id": 12, "pad_token_id": 13}


def test_collator_from_tokenizer_without_special_tokens():
    tokenizer = train_gpt1_tokenizer(SENTENCES, vocab_size=60)
    data = json.loads(tokenizer.backend_tokenizer.to_str())
    data["added_tokens"] = []
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    plain = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(data)))
    with pytest.raises(ValueError, match="no '_start_' token.*add_gpt1_special_tokens"):
        GPT1ClassificationCollator.from_tokenizer(plain)


@pytest.mark.parametrize(
    ("feature", "kwargs", "error", "match"),
    [
        ({"segment_a": "raw text"}, {}, TypeError, "is text .*tokenize it first"),
        ({"segment_a": [1, 12, 2]}, {}, ValueError, "already contains the special token id 12"),
        ({"segment_a": [1], "labels": 3}, {"num_labels": 2}, ValueError, r"label 3 is not an int in \[0, 2\)"),
        ({"segment_a": [1], "labels": float("nan")}, {"num_labels": 1}, ValueError, "label nan is not a finite"),
        ({"sentence": [1]}, {}, KeyError, "has no 'segment_a' key"),
    ],
    ids=["text-not-ids", "special-id-inside", "label-range", "nan-regression", "missing-key"],
)
def test_collator_rejects(feature, kwargs, error, match, ids):
    collator = GPT1ClassificationCollator(**ids, **kwargs)
    with pytest.raises(error, match=match):
        collator([feature])


def test_collator_max_length_beyond_n_positions():
    config = tiny_config(n_positions=64)
    with pytest.raises(ValueError, match="max_length=100 must be set and at most config.n_positions=64"):
        GPT1SimilarityCollator.from_config(config, max_length=100)


def test_long_texts_are_truncated_keeping_the_special_tokens(ids):
    collator = GPT1ClassificationCollator(**ids, max_length=64)
    batch = collator([{"segment_a": list(range(20, 520)), "segment_b": list(range(20, 320)), "labels": 1}])
    row = batch["input_ids"][0].tolist()
    assert len(row) == 64 and row[0] == 10 and row[-1] == 12 and row.count(11) == 1


@pytest.fixture(scope="module")
def tiny_classifier(tiny):
    return GPT1ForSequenceClassification.from_pretrained(tiny, num_labels=2).eval()


@pytest.mark.parametrize(
    ("make_ids", "labels", "match"),
    [
        (lambda c: torch.tensor([[c.start_token_id, 5000, c.extract_token_id]]), None, "outside the embedding table"),
        (
            lambda c: torch.tensor([[c.start_token_id] + [5] * 70 + [c.extract_token_id]]),
            None,
            "exceeds n_positions=64",
        ),
        (lambda c: torch.tensor([[c.start_token_id, 5, 6]]), None, "no extract token"),
        (
            lambda c: torch.tensor([[c.start_token_id, 5, c.extract_token_id]]),
            torch.tensor([2]),
            r"class ids in \[0, 2\)",
        ),
    ],
    ids=["id-outside-vocab", "longer-than-n_positions", "no-extract-token", "label-out-of-range"],
)
def test_model_rejects(make_ids, labels, match, tiny_classifier):
    with pytest.raises(ValueError, match=match):
        tiny_classifier(make_ids(tiny_classifier.config), labels=labels)


def test_model_rejects_nan_regression_targets(tiny):
    model = GPT1ForSequenceClassification.from_pretrained(tiny, num_labels=1, problem_type="regression").eval()
    c = model.config
    with pytest.raises(ValueError, match="NaN or inf"):
        model(torch.tensor([[c.start_token_id, 5, c.extract_token_id]]), labels=torch.tensor([float("nan")]))


# ------------------------------------------------------------------------------------------------ the npy converter


def _release(folder, n_embd=8, vocab=10, n_ctx=4):
    shapes = [[n_ctx, n_embd], [vocab, n_embd]]
    shapes += [
        [1, n_embd, 3 * n_embd],
        [3 * n_embd],
        [1, n_embd, n_embd],
        [n_embd],
        [n_embd],
        [n_embd],
        [1, n_embd, 4 * n_embd],
        [4 * n_embd],
        [1, 4 * n_embd, n_embd],
        [n_embd],
        [n_embd],
        [n_embd],
    ]
    flat = np.random.default_rng(0).standard_normal(sum(int(np.prod(s)) for s in shapes)).astype(np.float32)
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    for n, shard in enumerate(np.array_split(flat, 10)):
        np.save(folder / f"params_{n}.npy", shard)
    return folder


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda f: (f / "params_3.npy").unlink(), r"params_3.npy is missing"),
        (lambda f: np.save(f / "params_2.npy", np.zeros((3, 4), np.float32)), r"shape \(3, 4\).*flat"),
        (lambda f: np.save(f / "params_9.npy", np.zeros(3, np.float32)), "shard is truncated"),
        (lambda f: np.save(f / "params_0.npy", np.array([{"a": 1}], dtype=object)), "not a plain numpy array"),
        (lambda f: (f / "params_shapes.json").unlink(), "params_shapes.json not found"),
        (lambda f: (f / "params_shapes.json").write_text("[[4, 8], [1"), "params_shapes.json is not valid JSON"),
        (lambda f: (f / "params_shapes.json").write_text('{"a": 1}'), "holds no list of array shapes"),
    ],
    ids=[
        "missing-shard",
        "wrong-shape",
        "wrong-size",
        "pickled-object-array",
        "no-shapes-file",
        "damaged-shapes",
        "shapes-not-a-list",
    ],  # fmt: skip
)
def test_converter_rejects(damage, match, tmp_path):
    folder = _release(tmp_path)
    assert convert_openai_checkpoint(folder).config.n_embd == 8  # the undamaged release converts
    damage(folder)
    with pytest.raises(ConversionError, match=match):
        convert_openai_checkpoint(folder)
