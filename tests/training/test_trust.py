# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Trust: no half-written result, no stale data, no prediction from an untrained head, no write outside the run.

Faults are injected at the exact write (a file object that writes half its data, then dies or finds the disk full);
data is changed in place, keeping its size and modification time; links are planted in the output folder. Every test
drives the recipes as a user would, on a tiny model.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from hf_gpt1.commands.glue import main as glue_main
from hf_gpt1.commands.pretrain import main as pretrain_main
from tests.utils import COMMON, GLUE_ROWS, glue_args, run_cli


class Killed(BaseException):
    """A kill at an exact moment (BaseException: no `except Exception` on the way may swallow it)."""


class _DyingWriter:
    """A file being written that gets half of its first write onto the disk, then `failure`."""

    def __init__(self, real, failure: BaseException):
        self.real, self.failure = real, failure

    def write(self, data):
        self.real.write(data[: max(1, len(data) // 2)])
        self.real.flush()
        raise self.failure

    def fileno(self):  # no file descriptor: copies (shutil) must go through write() too
        raise io.UnsupportedOperation("fileno")

    def __getattr__(self, name):
        return getattr(self.real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.real.close()


def fail_writes_to(monkeypatch, name: str, failure: BaseException) -> None:
    """Every file opened for writing whose name contains `name` dies half-way through its first write."""
    real_open = builtins.open

    def dying_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and name in os.fspath(file) and any(m in mode for m in "wxa"):
            return _DyingWriter(handle, failure)
        return handle

    monkeypatch.setattr(builtins, "open", dying_open)
    monkeypatch.setattr(io, "open", dying_open)


@pytest.fixture(scope="module")
def rte_model(tiny_lm, glue_slice, tmp_path_factory) -> Path:
    """An RTE model fine-tuned by the recipe (one epoch on the GLUE slice)."""
    out = tmp_path_factory.mktemp("rte") / "model"
    glue_main(glue_args("rte", tiny_lm, glue_slice, out, "--do_predict", "false", "--save_strategy", "no"))
    return out


def predict_args(model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--task", "rte", "--model_name_or_path", str(model), "--data_dir", str(data_dir), "--output_dir", str(out),
        "--do_train", "false", "--per_device_eval_batch_size", "8", *COMMON, *extra,
    ]  # fmt: skip


# ------------------------------------------------------------------------------------------------ half-written files


def test_a_kill_while_the_submission_is_written_leaves_no_partial_file(rte_model, glue_slice, tmp_path, monkeypatch):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", Killed())
    with pytest.raises(Killed):
        glue_main(predict_args(rte_model, glue_slice, out))
    assert not (out / "RTE.tsv").exists()  # the old file or the whole new one: here there was none
    monkeypatch.undo()
    glue_main(predict_args(rte_model, glue_slice, out, "--resume"))  # the same command completes it
    rows = (out / "RTE.tsv").read_text().splitlines()
    assert rows[0] == "index\tprediction" and len(rows) == GLUE_ROWS["test"]  # header + every test row
    assert not [p.name for p in out.iterdir() if p.name.startswith(".hf_gpt1-tmp")]


def test_a_full_disk_at_the_submission_is_one_line_and_leaves_no_partial_file(
    rte_model, glue_slice, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", OSError(errno.ENOSPC, "No space left on device"))
    error = run_cli(capsys, lambda: glue_main(predict_args(rte_model, glue_slice, out)))
    assert "RTE.tsv" in error and "full" in error and "free space" in error.lower(), error
    assert not (out / "RTE.tsv").exists()


def test_a_read_only_disk_is_not_told_to_free_space(rte_model, glue_slice, tmp_path, monkeypatch, capsys):
    out = tmp_path / "predict"
    fail_writes_to(monkeypatch, "RTE.tsv", OSError(errno.EROFS, "Read-only file system"))
    error = run_cli(capsys, lambda: glue_main(predict_args(rte_model, glue_slice, out)))
    assert "read-only" in error and "free space" not in error.lower(), error


def test_a_kill_during_the_final_save_leaves_the_previous_model_and_tokenizer_whole(
    rte_model, tiny_lm, glue_slice, tmp_path, monkeypatch
):
    import safetensors.torch
    import tokenizers
    import transformers.modeling_utils

    out = tmp_path / "run"
    shutil.copytree(rte_model, out)  # a previous complete model of this run stands in the folder
    args = glue_args("rte", tiny_lm, glue_slice, out, "--do_predict", "false", "--save_strategy", "no")
    glue_main([*args, "--overwrite_output_dir"])
    before = {name: (out / name).read_bytes() for name in ("model.safetensors", "tokenizer.json", "config.json")}

    real_save = tokenizers.Tokenizer.save

    def dying_tokenizer_save(self, path, *a, **k):
        real_save(self, path, *a, **k)
        Path(path).write_bytes(Path(path).read_bytes()[:100])  # half a tokenizer.json, then the kill
        raise Killed()

    monkeypatch.setattr(tokenizers.Tokenizer, "save", dying_tokenizer_save)
    with pytest.raises(Killed):
        glue_main([*args, "--resume"])
    after = {name: (out / name).read_bytes() for name in before}
    assert after == before
    monkeypatch.undo()

    def dying_weights(tensors, filename, *a, **k):
        if "checkpoint-" not in str(filename):
            Path(filename).write_bytes(b"\x00" * 64)
            raise Killed()
        return safetensors.torch.save_file(tensors, filename, *a, **k)

    monkeypatch.setattr(transformers.modeling_utils, "safe_save_file", dying_weights)
    with pytest.raises(Killed):
        glue_main([*args, "--resume"])
    assert {name: (out / name).read_bytes() for name in before} == before


# ------------------------------------------------------------------------------------------------ stale data


def _same_size_and_time(path: Path, text: str) -> None:
    """Replaces a file's content with `text` of the same length, keeping its modification time."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _rte_jsonl(labels: list[str]) -> str:
    rows = [
        {"sentence1": f"A man number {i:02d} plays.", "sentence2": "A person plays.", "label": label}
        for i, label in enumerate(labels)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def _train_loss(results: dict) -> list[float]:
    return [entry["loss"] for entry in results["log_history"] if "loss" in entry]


def test_a_train_file_changed_in_place_is_read_anew(tiny, tmp_path):
    first = ["entailment", "not_entailment"] * 8
    flipped = ["not_entailment", "entailment"] * 8  # same length: same size
    data = tmp_path / "train.jsonl"
    data.write_text(_rte_jsonl(first))

    def run(train: Path, out: str) -> list[float]:
        argv = [
            "--task", "rte", "--model_name_or_path", str(tiny), "--train_file", str(train),
            "--output_dir", str(tmp_path / out), "--eval_strategy", "no", "--do_predict", "false",
            "--per_device_train_batch_size", "8", "--num_train_epochs", "1", "--logging_steps", "1",
            "--learning_rate", "1e-3", "--max_seq_length", "64", "--seed", "3", *COMMON,
        ]  # fmt: skip
        return _train_loss(glue_main(argv))

    old = run(data, "first")
    _same_size_and_time(data, _rte_jsonl(flipped))
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(_rte_jsonl(flipped))
    assert run(data, "second") == run(fresh, "reference") != old


def test_a_corpus_changed_in_place_is_read_anew(tiny_lm, tmp_path):
    words = "the cat sat on a mat and ran far away from home".split()
    corpus = tmp_path / "corpus.txt"
    lines = [" ".join(words[(i + j) % len(words)] for j in range(9)) for i in range(300)]
    corpus.write_text("\n".join(lines) + "\n")

    def run(train: Path, out: str) -> float:
        argv = [
            "--train_files", str(train), "--tokenizer_name_or_path", str(tiny_lm), "--output_dir", str(tmp_path / out),
            "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32", "--max_steps", "2",
            "--per_device_train_batch_size", "4", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "2",
            "--seed", "5", *COMMON,
        ]  # fmt: skip
        return pretrain_main(argv)["validation"]["eval_loss"]

    old = run(corpus, "first")
    _same_size_and_time(corpus, "\n".join(line[::-1] for line in lines) + "\n")
    fresh = tmp_path / "fresh.txt"
    fresh.write_text(corpus.read_text())
    assert run(corpus, "second") == pytest.approx(run(fresh, "reference")) and run(fresh, "reference2") != old


def test_resume_after_the_train_file_changed_is_refused_naming_the_file(tiny, tmp_path, capsys):
    data = tmp_path / "train.jsonl"
    data.write_text(_rte_jsonl(["entailment", "not_entailment"] * 8))
    argv = [
        "--task", "rte", "--model_name_or_path", str(tiny), "--train_file", str(data),
        "--output_dir", str(tmp_path / "run"), "--eval_strategy", "no", "--do_predict", "false",
        "--per_device_train_batch_size", "8", "--max_seq_length", "64", "--save_strategy", "steps",
        "--save_steps", "2", *COMMON,
    ]  # fmt: skip
    glue_main(argv)
    data.write_text(_rte_jsonl(["not_entailment", "entailment"] * 20))  # 16 -> 40 rows, labels flipped
    error = run_cli(capsys, lambda: glue_main([*argv, "--resume"]))
    assert f"--train_file {data} has changed" in error, error


# ------------------------------------------------------------------------------------------------ writes outside


def test_a_lock_file_that_is_a_link_is_never_followed(rte_model, glue_slice, tmp_path, capsys):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    out = tmp_path / "predict"
    out.mkdir()
    (out / ".hf_gpt1.lock").symlink_to(outside)
    run_cli(capsys, lambda: glue_main(predict_args(rte_model, glue_slice, out)))
    assert outside.read_text() == "keep me"


def test_resume_never_writes_through_a_link_out_of_the_folder(rte_model, glue_slice, tmp_path, capsys):
    out = tmp_path / "predict"
    glue_main(predict_args(rte_model, glue_slice, out))
    outside = tmp_path / "precious.tsv"
    outside.write_text("keep me")
    (out / "RTE.tsv").unlink()
    (out / "RTE.tsv").symlink_to(outside)
    try:
        glue_main(predict_args(rte_model, glue_slice, out, "--resume"))
    except SystemExit:
        pass
    except ValueError as err:
        assert "symbolic link" in str(err)
    assert outside.read_text() == "keep me"


def test_overwrite_never_deletes_the_runs_own_inputs(tiny, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    shutil.copytree(tiny, out / "model")
    train = out / "train.jsonl"
    train.write_text(_rte_jsonl(["entailment", "not_entailment"] * 8))
    (out / "notes.txt").write_text("an old run's file")
    argv = [
        "--task", "rte", "--model_name_or_path", str(out / "model"), "--train_file", str(train),
        "--output_dir", str(out), "--overwrite_output_dir", "--eval_strategy", "no", "--do_predict", "false",
        *COMMON,
    ]  # fmt: skip
    error = run_cli(capsys, lambda: glue_main(argv))
    assert "--overwrite_output_dir would delete" in error and "inside --output_dir" in error, error
    assert train.is_file() and (out / "model" / "model.safetensors").is_file() and (out / "notes.txt").is_file()


# ---------------------------------------------------------------------------------------------- rows that are not rows


def test_a_second_header_in_a_joined_file_is_refused_naming_its_line(rte_model, tmp_path, capsys, no_training):
    part = "sentence1,sentence2\nA man plays.,A person plays.\nA dog runs.,A cat sleeps.\n"
    test = tmp_path / "test.csv"
    test.write_text(part + part)  # cat a.csv b.csv
    argv = predict_args(rte_model, tmp_path, tmp_path / "out")
    argv[argv.index("--data_dir") : argv.index("--data_dir") + 2] = ["--test_file", str(test)]
    error = run_cli(capsys, lambda: glue_main(argv))
    assert f"{test}:4 repeats the header row" in error, error
    assert not (tmp_path / "out").exists()


def test_a_glue_test_file_with_a_repeated_index_is_refused_naming_its_line(
    rte_model, glue_slice, tmp_path, capsys, no_training
):
    data = tmp_path / "glue"
    shutil.copytree(glue_slice / "RTE", data / "RTE")
    lines = (data / "RTE" / "test.tsv").read_text().splitlines(keepends=True)
    (data / "RTE" / "test.tsv").write_text("".join([*lines, lines[3]]))  # the row of index 2, again at the end
    error = run_cli(capsys, lambda: glue_main(predict_args(rte_model, data, tmp_path / "out")))
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
    from hf_gpt1.commands.multiple_choice import main as multiple_choice_main

    error = run_cli(capsys, lambda: multiple_choice_main(argv))
    assert "data row 3: 'InputStoryid' 's1' is also the id of the row at" in error, error


# ------------------------------------------------------------------------------------------ heads never trained for it


def test_predicting_with_a_pretrained_lm_is_refused(tiny_lm, glue_slice, tmp_path, capsys):
    out = tmp_path / "out"
    error = run_cli(capsys, lambda: glue_main(predict_args(tiny_lm, glue_slice, out)))
    assert "holds no head fine-tuned for a task" in error and "--ignore_head_checks" in error, error
    assert not (out / "RTE.tsv").exists()


def _copy_without(model: Path, tensor: str, folder: Path) -> Path:
    """A copy of a saved model whose model.safetensors lacks `tensor`."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, folder)
    weights = load_file(folder / "model.safetensors")
    del weights[tensor]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_a_fine_tuned_model_missing_a_weight_is_refused_naming_it(rte_model, glue_slice, tmp_path, capsys):
    damaged = _copy_without(rte_model, "score.bias", tmp_path / "damaged")
    error = run_cli(capsys, lambda: glue_main(predict_args(damaged, glue_slice, tmp_path / "out")))
    assert "lacks ['score.bias']" in error and "random values" in error, error


def test_a_backbone_weight_missing_from_the_pretrained_model_is_refused(tiny, glue_slice, tmp_path, capsys):
    damaged = _copy_without(tiny, "transformer.h.1.mlp.c_proj.weight", tmp_path / "damaged")
    args = glue_args("rte", damaged, glue_slice, tmp_path / "out")
    error = run_cli(capsys, lambda: glue_main(args))
    assert "lacks ['transformer.h.1.mlp.c_proj.weight']" in error, error


def test_a_model_of_another_task_is_refused_unless_asked(rte_model, tmp_path, capsys):
    wnli = tmp_path / "WNLI"
    wnli.mkdir()
    (wnli / "test.tsv").write_text(
        "index\tsentence1\tsentence2\n0\tA man plays.\tHe plays.\n1\tA dog runs.\tIt runs.\n"
    )
    argv = predict_args(rte_model, wnli, tmp_path / "out")
    argv[argv.index("rte")] = "wnli"
    error = run_cli(capsys, lambda: glue_main(argv))
    assert "was fine-tuned on 'rte', not 'wnli'" in error and "--ignore_head_checks" in error, error
    glue_main([*argv, "--ignore_head_checks"])  # knowingly
    assert len((tmp_path / "out" / "WNLI.tsv").read_text().splitlines()) == 3


def test_a_fine_tuned_model_records_its_task_and_labels(rte_model):
    config = json.loads((rte_model / "config.json").read_text())
    assert config["finetuned_task"] == "rte" and config["id2label"] == {"0": "entailment", "1": "not_entailment"}


# ------------------------------------------------------------------------------------------------ the objective


def test_the_trainers_label_smoothing_is_refused_for_the_one_inside_l3(capsys, tiny, rte_files, tmp_path):
    from tests.utils import glue_argv

    train, dev = rte_files
    argv = glue_argv(tiny, train, dev, tmp_path / "out", extra=["--label_smoothing_factor", "0.1"])
    error = run_cli(capsys, lambda: glue_main(argv))
    assert "--label_smoothing_factor 0.1 would replace L3" in error and "--clf_label_smoothing" in error, error


def test_label_smoothing_applies_to_l2_inside_l3():
    import torch
    import torch.nn.functional as F

    from hf_gpt1 import GPT1ForMultipleChoice, GPT1ForSequenceClassification
    from tests.utils import DELIM, EXTRACT, START, tiny_config

    ids = torch.tensor([[START, 5, 6, 7, DELIM, 8, 9, EXTRACT], [START, 9, 8, DELIM, 7, 6, 5, EXTRACT]])
    for head, inputs in (
        (GPT1ForSequenceClassification, ids),
        (GPT1ForMultipleChoice, torch.stack([ids, ids.flip(0)])),
    ):
        model = head(tiny_config(num_labels=2, clf_label_smoothing=0.2)).eval()
        with torch.no_grad():  # confident logits (a gap of 5 between the answers): smoothing changes the loss a lot
            logits = model(input_ids=inputs).logits
            model.score.weight.mul_(5 / (logits.max(-1).values - logits.min(-1).values).min())
            labels = model(input_ids=inputs).logits.argmax(-1)  # the confident answers
        out = model(input_ids=inputs, labels=labels)
        smoothed = F.cross_entropy(out.logits.float(), labels, label_smoothing=0.2)
        assert smoothed - F.cross_entropy(out.logits.float(), labels) > 0.05
        torch.testing.assert_close(out.clf_loss, smoothed)
        torch.testing.assert_close(out.loss, smoothed + 0.5 * out.lm_loss)


def test_label_smoothing_of_a_regression_task_is_refused(capsys, tiny_lm, glue_slice, tmp_path, no_training):
    args = glue_args("stsb", tiny_lm, glue_slice, tmp_path / "out", "--clf_label_smoothing", "0.1")
    assert "applies to classes; 'stsb' is a regression task" in run_cli(capsys, lambda: glue_main(args))


def test_a_bf16_checkpoint_is_fine_tuned_and_saved_in_fp32_and_the_start_line_says_so(
    tiny, rte_files, tmp_path, capsys
):
    import torch
    from safetensors import safe_open

    from hf_gpt1 import GPT1LMHeadModel
    from tests.utils import glue_argv

    bf16 = tmp_path / "bf16"
    shutil.copytree(tiny, bf16)
    GPT1LMHeadModel.from_pretrained(tiny, dtype=torch.bfloat16).save_pretrained(bf16)
    train, dev = rte_files
    out = tmp_path / "out"
    glue_main(glue_argv(bf16, train, dev, out, extra=["--save_strategy", "no"]))
    assert "; weights float32" in capsys.readouterr().out
    with safe_open(str(out / "model.safetensors"), framework="pt") as saved:
        assert {saved.get_tensor(name).dtype for name in saved.keys()} == {torch.float32}
    glue_main(glue_argv(bf16, train, dev, tmp_path / "pure", extra=["--save_strategy", "no", "--model_dtype", "auto"]))
    assert "; weights bfloat16" in capsys.readouterr().out  # asked for: the checkpoint's own dtype


# ------------------------------------------------------------------------------------------------ signals


def _start_and_signal(argv: list[str], output_dir: Path, signals: list[int], step: int = 2):
    """Runs `recipes/glue.py argv` in a process, sends `signals` once checkpoint-`step` is complete; returns the
    process's exit status and stderr."""
    import signal as signal_module
    import subprocess
    import sys
    import time

    from hf_gpt1.training.checkpoints import COMPLETE_MARKER
    from tests.utils import REPO_ROOT

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, str(REPO_ROOT / "recipes" / "glue.py"), *argv]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marker = output_dir / f"checkpoint-{step}" / COMPLETE_MARKER
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert process.poll() is None, process.stderr.read()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.02)
    for signum in signals:
        process.send_signal(signum)
    try:
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert signal_module.SIGKILL != -process.returncode
    return process.returncode, err


def test_sigterm_saves_a_checkpoint_says_how_to_resume_and_resume_finishes(tiny, rte_files, tmp_path):
    import signal

    from hf_gpt1.training.checkpoints import last_complete_checkpoint
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=["--num_train_epochs", "60", "--save_steps", "2"])
    status, err = _start_and_signal(argv, out, [signal.SIGTERM])
    assert status == 128 + signal.SIGTERM, err[-2000:]
    stopped = [line for line in err.splitlines() if line.startswith("Stopped on SIGTERM at step")]
    assert len(stopped) == 1 and "Traceback" not in err, err[-2000:]
    step = int(stopped[0].split("at step ")[1].split(";")[0])
    assert last_complete_checkpoint(out) == str(out / f"checkpoint-{step}")  # saved where it stopped
    assert "--resume" in err.splitlines()[-1] and str(out) in err.splitlines()[-1]
    assert not (out / "all_results.json").exists()
    results = glue_main([*argv, "--resume"])  # the command it printed
    assert results["train"]["epoch"] == 60


def test_a_second_ctrl_c_stops_at_once_without_a_traceback(tiny, rte_files, tmp_path):
    import signal

    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=["--num_train_epochs", "60", "--save_steps", "2"])
    status, err = _start_and_signal(argv, out, [signal.SIGINT, signal.SIGINT])
    assert status == 128 + signal.SIGINT, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]


# -------------------------------------------------------------------------------------------- errors that name the fix


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


def test_an_invalid_config_json_is_one_line_naming_it(tiny, rte_files, tmp_path, capsys):
    from tests.utils import glue_argv

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "n_positions": 0}))
    train, dev = rte_files
    error = run_cli(capsys, lambda: glue_main(glue_argv(broken, train, dev, tmp_path / "out")))
    assert "config.json is invalid" in error and "n_positions 0 must be a positive integer" in error, error


def test_a_transposed_tensor_is_named_with_both_shapes(tiny, rte_files, tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    from tests.utils import glue_argv

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    weights = load_file(broken / "model.safetensors")
    weights["transformer.h.0.mlp.c_fc.weight"] = weights["transformer.h.0.mlp.c_fc.weight"].T.contiguous()
    save_file(weights, broken / "model.safetensors", metadata={"format": "pt"})
    train, dev = rte_files
    error = run_cli(capsys, lambda: glue_main(glue_argv(broken, train, dev, tmp_path / "out")))
    assert "tensor transformer.h.0.mlp.c_fc.weight has shape (64, 256)" in error and "(256, 64)" in error, error


def test_a_misspelt_key_in_an_argument_file_is_not_taken_for_another(tiny, rte_files, tmp_path, capsys):
    from tests.utils import glue_argv

    train, dev = rte_files
    preset = tmp_path / "run.yaml"
    preset.write_text("learning_rat: 1e-4\n")
    error = run_cli(capsys, lambda: glue_main([str(preset), *glue_argv(tiny, train, dev, tmp_path / "out")]))
    assert "--learning_rat (did you mean --learning_rate?)" in error, error


def test_a_missing_reporting_integration_is_refused_before_the_folder_is_claimed(tiny, rte_files, tmp_path, capsys):
    import importlib.util

    from tests.utils import glue_argv

    if importlib.util.find_spec("tensorboard") or importlib.util.find_spec("tensorboardX"):
        pytest.skip("tensorboard is installed here: nothing to refuse")
    train, dev = rte_files
    out = tmp_path / "out"
    argv = [*glue_argv(tiny, train, dev, out), "--report_to", "tensorboard"]
    assert "--report_to tensorboard: not installed here" in run_cli(capsys, lambda: glue_main(argv))
    assert not out.exists()


def test_a_full_disk_at_the_claim_is_one_line_naming_the_file(tiny, rte_files, tmp_path, monkeypatch, capsys):
    from tests.utils import glue_argv

    train, dev = rte_files
    fail_writes_to(monkeypatch, "hf_gpt1_run.json", OSError(errno.ENOSPC, "No space left on device"))
    error = run_cli(capsys, lambda: glue_main(glue_argv(tiny, train, dev, tmp_path / "out")))
    assert "Could not write" in error and "hf_gpt1_run.json: no space is left on its disk" in error, error


def test_zero_shot_refuses_an_output_file_in_a_missing_folder_before_scoring(tiny_lm, tmp_path, capsys, monkeypatch):
    from hf_gpt1.tools import zero_shot

    monkeypatch.setattr(zero_shot, "load_checkpoint", lambda *a: pytest.fail("the model was loaded"))
    argv = ["--model_name_or_path", str(tiny_lm), "--task", "sst2", "--output_file", str(tmp_path / "no" / "r.json")]
    monkeypatch.setattr("sys.argv", ["zero_shot.py", *argv])
    error = run_cli(capsys, zero_shot.main)
    assert f"--output_file {tmp_path / 'no' / 'r.json'}: the folder" in error and "does not exist" in error, error


def test_a_full_disk_at_the_final_save_is_one_line_and_leaves_no_partial_model(
    tiny, rte_files, tmp_path, monkeypatch, capsys
):
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "out"
    # the final save copies the model's code beside it (remote code): that copy finds the disk full
    fail_writes_to(monkeypatch, "modeling_gpt1.py", OSError(errno.ENOSPC, "No space left on device"))
    error = run_cli(capsys, lambda: glue_main(glue_argv(tiny, train, dev, out, extra=["--save_strategy", "no"])))
    assert f"Could not write {out}: no space is left on its disk" in error, error
    assert not (out / "model.safetensors").exists() and not (out / "config.json").exists()


def test_resume_after_the_corpus_changed_is_refused_naming_it(tiny_lm, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the cat sat on mat number {i} and ran home\n" for i in range(300)))
    argv = [
        "--train_files", str(corpus), "--tokenizer_name_or_path", str(tiny_lm), "--output_dir", str(tmp_path / "run"),
        "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32", "--max_steps", "2",
        "--per_device_train_batch_size", "4", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "2",
        *COMMON,
    ]  # fmt: skip
    pretrain_main(argv)
    _same_size_and_time(corpus, corpus.read_text().replace("cat", "dog"))
    error = run_cli(capsys, lambda: pretrain_main([*argv, "--resume"]))
    assert f"--train_files {corpus} has changed" in error, error
