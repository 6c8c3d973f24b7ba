# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""`hf_gpt1.data.fingerprint`: inputs identified by content, so a file changed in place (same size and modification
time) is read anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.utils import COMMON, _rte_jsonl, _same_size_and_time, _train_loss, run_command


def test_a_train_file_changed_in_place_is_read_anew(tiny, tmp_path, capsys):
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
        return _train_loss(run_command(capsys, "glue", *argv).results())

    old = run(data, "first")
    _same_size_and_time(data, _rte_jsonl(flipped))
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(_rte_jsonl(flipped))
    assert run(data, "second") == run(fresh, "reference") != old


def test_a_corpus_changed_in_place_is_read_anew(tiny_lm, tmp_path, capsys):
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
        return run_command(capsys, "pretrain", *argv).results()["validation"]["eval_loss"]

    old = run(corpus, "first")
    _same_size_and_time(corpus, "\n".join(line[::-1] for line in lines) + "\n")
    fresh = tmp_path / "fresh.txt"
    fresh.write_text(corpus.read_text())
    assert run(corpus, "second") == pytest.approx(run(fresh, "reference")) and run(fresh, "reference2") != old
