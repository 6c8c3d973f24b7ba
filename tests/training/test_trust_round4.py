# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Trust, round 4: the corpus trained on is the corpus recorded, a dead worker stops the run, pushes publish nothing
private or false, and every error names its cause (docs/BAD_INPUT.md, docs/RELIABILITY.md).

Corpora are changed at the exact moment between the scan and the packing; workers are killed with SIGKILL or made to
hang; pushes go to the Hub stand-in of tests/tools/hub_standin.py. Every recipe runs in-process on a tiny model.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
from pathlib import Path

import datasets
import pytest

from hf_gpt1.commands.pretrain import main as pretrain_main
from hf_gpt1.data import packing
from hf_gpt1.training import pretrain
from hf_gpt1.training.output_dir import RUN_FILE
from tests.utils import COMMON, run_cli

WORDS = "the cat sat on a mat and ran far away from home".split()


def corpus_text(lines: int = 300, words=WORDS) -> str:
    return "".join(" ".join(words[(i + j) % len(words)] for j in range(9)) + "\n" for i in range(lines))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A datasets cache of the test's own: packing starts from nothing and what it writes can be listed."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(folder))
    return folder


def pretrain_argv(tmp_path: Path, *files: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return [
        "--train_files", *map(str, files), "--output_dir", str(tmp_path / "run"), "--vocab_size", "100",
        "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32", "--max_steps", "2",
        "--per_device_train_batch_size", "4", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "2",
        "--seed", "5", *COMMON, *extra,
    ]  # fmt: skip


def rewrite_keeping_size_and_time(path: Path, text: str) -> None:
    """An edit no size or modification time shows (only the change time moves, which no tool can set back)."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


# ------------------------------------------------------------------------------------------ the data recorded


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_corpus_rewritten_between_the_scan_and_the_packing_is_refused(workers, tmp_path, cache, capsys, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    real_pack = packing.pack_corpus

    def edit_then_pack(shards, *args, **kwargs):  # the moment between the scan (digest recorded) and the packing
        rewrite_keeping_size_and_time(corpus, corpus.read_text()[::-1][1:] + "\n")
        return real_pack(shards, *args, **kwargs)

    monkeypatch.setattr(pretrain, "pack_corpus", edit_then_pack)
    argv = pretrain_argv(tmp_path, corpus, extra=("--preprocessing_num_workers", workers, "--bpe_sample_mb", "1"))
    error = run_cli(capsys, lambda: pretrain_main(argv))
    assert f"{corpus} changed while this run was reading it" in error and "nothing was trained" in error, error
    assert not (tmp_path / "run" / RUN_FILE).exists()
    assert not [p for p in (cache / "hf_gpt1" / "packed").glob("*") if (p / "done").exists()]  # nothing cached


def test_a_corpus_changed_between_the_start_and_the_scan_is_refused(tmp_path, cache, capsys, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    real_corpus = pretrain.TextCorpus

    def edit_then_scan(*args, **kwargs):  # the run's identity (digests) was taken before this
        rewrite_keeping_size_and_time(corpus, corpus.read_text().upper())
        return real_corpus(*args, **kwargs)

    monkeypatch.setattr(pretrain, "TextCorpus", edit_then_scan)
    error = run_cli(capsys, lambda: pretrain_main(pretrain_argv(tmp_path, corpus)))
    assert f"--train_files {corpus} changed while this run was reading it" in error, error


def test_the_recorded_digest_is_that_of_the_bytes_trained_on(tmp_path, cache):
    from hf_gpt1.data.fingerprint import file_digest

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    pretrain_main(pretrain_argv(tmp_path, corpus))
    recorded = json.loads((tmp_path / "run" / RUN_FILE).read_text())["inputs"]["--train_files"]
    assert recorded == {str(corpus): file_digest(corpus)}


@pytest.mark.parametrize("how", ["same path", "same content", "held out"])
def test_a_corpus_file_named_twice_is_refused(how, tmp_path, cache, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(corpus_text(), encoding="utf-8")
    b.write_text(corpus_text(200, WORDS[::-1]), encoding="utf-8")
    if how == "same path":
        argv, fragment = pretrain_argv(tmp_path, a, b, a), f"--train_files {a} is the same file as --train_files {a}"
    elif how == "same content":
        copy = tmp_path / "copy.txt"
        copy.write_bytes(a.read_bytes())
        argv, fragment = pretrain_argv(tmp_path, a, copy), f"{copy} has the same content as --train_files {a}"
    else:
        argv = pretrain_argv(tmp_path, a, extra=("--validation_files", str(a)))
        fragment = f"--validation_files {a} is the same file as --train_files {a}"
    error = run_cli(capsys, lambda: pretrain_main(argv))
    assert fragment in error and "Name each file once" in error, error


def test_a_bpe_sample_that_misses_the_corpus_is_warned_before_training(tmp_path, cache, capsys):
    latin, greek = tmp_path / "latin.txt", tmp_path / "greek.txt"
    latin.write_text(corpus_text(40), encoding="utf-8")  # ~1.4 kB: the BPE samples its first 1 kB only
    greek.write_text(corpus_text(300, "αβγ δεζ ηθι κλμ νξο πρσ τυφ χψω".split()), encoding="utf-8")
    argv = pretrain_argv(tmp_path, latin, greek, extra=("--bpe_sample_mb", "0.001"))
    pretrain_main(argv)
    out = capsys.readouterr().out
    start = out[: out.index("== pretrain")]  # said at the start, before training's summary
    assert "of the training tokens are <unk>" in start and "--bpe_sample_mb" in start, start


def test_a_bpe_that_covers_the_corpus_warns_nothing(tmp_path, cache, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    pretrain_main(pretrain_argv(tmp_path, corpus))
    assert "<unk>" not in capsys.readouterr().out


def test_streaming_writes_nothing_to_the_cache(tmp_path, cache, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    results = pretrain_main(pretrain_argv(tmp_path, corpus, extra=("--streaming", "true")))
    assert results["validation"]["eval_perplexity"] > 1
    # datasets' generator builder leaves an empty lock file; the digests are what the start line says
    files = [p for p in cache.rglob("*") if p.is_file() and not (p.suffix == ".lock" and p.stat().st_size == 0)]
    written = {p.relative_to(cache).parts[:2] for p in files}
    assert written <= {("hf_gpt1", "digests")}, written
    assert "nothing is written to the datasets cache but the corpus files' digests" in capsys.readouterr().out


def test_a_corpus_csv_that_does_not_parse_is_one_line_naming_it(tmp_path, cache, capsys):
    corpus = tmp_path / "docs.csv"
    corpus.write_text("text\n" + "".join(f"document {i}\n" for i in range(40)) + '"a, "b" c,,d\n')
    error = run_cli(capsys, lambda: pretrain_main(pretrain_argv(tmp_path, corpus)))
    assert f"--train_files ['{corpus}']: cannot parse it as CSV" in error, error


# ------------------------------------------------------------------------------------------ worker faults


@pytest.fixture
def shards(tmp_path, cache):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(2000), encoding="utf-8")
    from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer

    tokenizer = train_gpt1_tokenizer([corpus_text(20)], vocab_size=60)
    return packing.TextCorpus([str(corpus)], shard_bytes=8_000).train, tokenizer


def faulty_shard(monkeypatch, fault):
    """The worker packing the second shard meets `fault`; the others pack normally."""
    real = packing._pack_shard

    def pack(job):
        if job[-1].endswith("000001.arrow"):
            fault()
        return real(job)

    monkeypatch.setattr(packing, "_pack_shard", pack)


def _no_partial_cache(cache: Path) -> None:
    packed = cache / "hf_gpt1" / "packed"
    assert not packed.exists() or not list(packed.iterdir()), list(packed.iterdir())


def test_a_killed_packing_worker_ends_the_run_naming_its_shard(shards, cache, monkeypatch):
    faulty_shard(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGKILL))
    started = time.monotonic()
    with pytest.raises(packing.PackingError, match=r"shard 2 of \d+ .*killed by SIGKILL .*lower `num_workers`"):
        packing.pack_corpus(*shards, 16, num_workers=2)
    assert time.monotonic() - started < 60
    _no_partial_cache(cache)


def test_a_hung_packing_worker_ends_the_run(shards, cache, monkeypatch):
    faulty_shard(monkeypatch, lambda: time.sleep(3600))
    monkeypatch.setattr(packing, "SHARD_TIMEOUT_S", 3.0)
    with pytest.raises(packing.PackingError, match=r"no shard finished in 3 s \(shard 2 of"):
        packing.pack_corpus(*shards, 16, num_workers=2)
    _no_partial_cache(cache)


def test_a_failing_packing_worker_ends_the_run_with_its_error(shards, cache, monkeypatch):
    def fail():
        raise MemoryError("cannot allocate")

    faulty_shard(monkeypatch, fail)
    with pytest.raises(packing.PackingError, match=r"shard 2 of \d+ .* failed: MemoryError: cannot allocate"):
        packing.pack_corpus(*shards, 16, num_workers=2)
    _no_partial_cache(cache)


def test_a_dead_worker_is_one_line_from_the_command(tmp_path, cache, capsys, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(3000), encoding="utf-8")
    monkeypatch.setattr(pretrain, "TextCorpus", functools.partial(packing.TextCorpus, shard_bytes=20_000))
    faulty_shard(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGKILL))
    argv = pretrain_argv(tmp_path, corpus, extra=("--preprocessing_num_workers", "2"))
    error = run_cli(capsys, lambda: pretrain_main(argv))
    assert "killed by SIGKILL" in error and "run the same command again" in error, error
    assert "lower --preprocessing_num_workers" in error, error  # the library's `num_workers`, named by its flag


# ------------------------------------------------------------------------------------------ errors name the cause


def test_a_broken_json_line_deep_in_a_corpus_names_its_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"text": f"document {i}"}) for i in range(500)]
    lines[431] = '{"text": "unterminated'
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"docs.jsonl:432: the line is not JSON"):
        packing.TextCorpus([str(path)], shard_bytes=1000)  # the line is found across several reads


def test_a_corpus_with_cr_only_line_endings_names_them(tmp_path, capsys, cache):
    corpus = tmp_path / "mac.txt"
    corpus.write_bytes(corpus_text().replace("\n", "\r").encode())
    error = run_cli(capsys, lambda: pretrain_main(pretrain_argv(tmp_path, corpus)))
    assert "carriage return alone" in error and "tr '\\r' '\\n'" in error, error


def test_a_csv_corpus_with_an_empty_text_cell_names_its_row(tmp_path, capsys, cache):
    corpus = tmp_path / "docs.csv"
    corpus.write_text("id,text\n" + "".join(f"{i},document {i}\n" for i in range(40)) + "40,\n")
    error = run_cli(capsys, lambda: pretrain_main(pretrain_argv(tmp_path, corpus)))
    assert "data row 41 has no text in 'text'" in error, error


@pytest.mark.parametrize("suffix", [".csv", ".txt", ".tsv"])
def test_gzip_bytes_are_called_gzip(suffix, tmp_path):
    import gzip

    from hf_gpt1.data.files import read_data_file

    path = tmp_path / f"rows{suffix}"
    path.write_bytes(gzip.compress(b"sentence1,sentence2,label\na,b,entailment\n"))
    reader = (lambda: packing.TextCorpus([str(path)])) if suffix == ".txt" else (lambda: read_data_file(path))
    with pytest.raises(ValueError, match=rf"rows\{suffix} holds gzip-compressed bytes, not text: decompress it"):
        reader()


# ------------------------------------------------------------------------------------------ pushes


@pytest.fixture
def finished_run(tmp_path, monkeypatch):
    """An RTE run folder as the recipe leaves it, fine-tuned from the local folder `runs/first-pt` (relative, as in
    the README's First run), whose results name files in the run by absolute paths."""
    from hf_gpt1 import GPT1LMHeadModel, add_gpt1_special_tokens, get_task, load_gpt1_tokenizer
    from hf_gpt1.data.atomic import write_json_atomic
    from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
    from hf_gpt1.training.arguments import ModelArguments
    from hf_gpt1.training.finetune import build_model
    from tests.utils import tiny_config_for

    monkeypatch.chdir(tmp_path)
    base = Path("runs/first-pt")
    tokenizer = train_gpt1_tokenizer(["the cat sat on the mat ."] * 20, vocab_size=60)
    lm = GPT1LMHeadModel(tiny_config_for(tokenizer, n_layer=1))
    add_gpt1_special_tokens(tokenizer, lm)
    lm.save_pretrained(base)
    tokenizer.save_pretrained(base)
    run = tmp_path / "runs" / "rte"
    model = build_model(get_task("rte"), ModelArguments(model_name_or_path=str(base)), load_gpt1_tokenizer(base))
    model.save_pretrained(run)
    load_gpt1_tokenizer(base).save_pretrained(run)
    (run / "RTE.tsv").write_text("index\tprediction\n0\tentailment\n")
    (run / "checkpoint-4").mkdir()
    record = {"recipe": "glue", "model": {"model_name_or_path": str(base)}, "data": {"task": "rte"}, "seed": 42}
    record["inputs"] = {"--model_name_or_path": {str(base / "config.json"): "0" * 64}}
    (run / RUN_FILE).write_text(json.dumps(record))
    results = {"task": "rte", "test_predictions": str((run / "RTE.tsv").resolve())}
    results |= {
        "best_checkpoint": str(run.resolve() / "checkpoint-4"),
        "validation": {"eval_validation_accuracy": 0.5},
    }
    write_json_atomic(run / "all_results.json", results)
    return run


def push_to_standin(folder: Path, monkeypatch) -> dict[str, str]:
    import huggingface_hub.constants

    from hf_gpt1.tools.hub import push_finetuned
    from tests.tools.hub_standin import HubStandIn

    with HubStandIn() as hub:
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        push_finetuned(folder, "me/gpt1-rte", endpoint=hub.endpoint, token="hf_standin")
        return hub.repos["me/gpt1-rte"]


def test_a_push_publishes_no_local_path(finished_run, tmp_path, monkeypatch):
    files = push_to_standin(finished_run, monkeypatch)
    results = json.loads(files["all_results.json"])
    assert results["test_predictions"] == "RTE.tsv" and results["best_checkpoint"] == "checkpoint-4"
    for name, content in files.items():
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        assert str(tmp_path) not in text and str(Path.home()) + os.sep not in text, name


def test_a_push_that_would_leak_a_path_is_refused_listing_it(finished_run, tmp_path):
    from hf_gpt1.tools.hub import push_finetuned

    config = json.loads((finished_run / "config.json").read_text())
    (finished_run / "config.json").write_text(json.dumps({**config, "notes": str(tmp_path / "client-x" / "data")}))
    with pytest.raises(ValueError, match=r"Nothing was pushed: .*config.json: .*pytest"):  # before any request
        push_finetuned(finished_run, "me/gpt1-rte", endpoint="http://127.0.0.1:9", token="hf_standin")


def test_a_local_base_model_is_named_as_local_from_any_folder(finished_run, tmp_path, monkeypatch):
    from hf_gpt1.tools.hub import model_card

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # runs/first-pt does not exist from here
    card = model_card(finished_run, "me/gpt1-rte")
    assert "base_model:" not in card.split("---\n")[1], card
    assert "**Base model:** a local checkpoint (not on the Hub: `first-pt`;" in card


def test_a_push_of_an_unfinished_run_is_refused_with_the_resume_hint(finished_run, capsys):
    from hf_gpt1.tools.hub import main as push_main
    from hf_gpt1.training.cli import run_recipe

    (finished_run / "all_results.json").unlink()
    with pytest.raises(SystemExit):
        run_recipe(lambda: push_main([str(finished_run), "me/gpt1-rte"]))
    error = capsys.readouterr().err
    assert "this run did not finish" in error and "--resume" in error and "Unrecognized model" not in error, error


def test_non_finite_metrics_are_written_as_null_and_left_out_of_the_card(finished_run, caplog):
    from hf_gpt1.data.atomic import write_json_atomic
    from hf_gpt1.tools.hub import model_card

    results = json.loads((finished_run / "all_results.json").read_text())
    results["validation"] = {"eval_validation_pearson": float("nan"), "eval_validation_accuracy": 0.5}
    write_json_atomic(finished_run / "all_results.json", results)
    text = (finished_run / "all_results.json").read_text()
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))  # strict JSON
    assert '"eval_validation_pearson": null' in text
    assert "validation.eval_validation_pearson" in caplog.text and "written as null" in caplog.text
    card = model_card(finished_run, "me/gpt1-rte")
    assert "nan" not in card.lower().replace("financ", ""), card


# ------------------------------------------------------------------------------------------ arguments


def test_an_argument_file_after_a_flag_says_it_must_come_first(tmp_path, capsys):
    from hf_gpt1.commands.glue import main as glue_main

    config = tmp_path / "run.yaml"
    config.write_text("task: rte\noutput_dir: out\n")
    error = run_cli(capsys, lambda: glue_main(["--seed", "3", str(config)]))
    assert f"{config} is an argument file: it must come first" in error and f"{config} --seed 3" in error, error
    assert "are required" not in error


def test_a_data_file_named_json_is_not_taken_for_an_argument_file(tmp_path):
    from hf_gpt1.training.arguments import DataArguments
    from hf_gpt1.training.cli import parse_recipe_args

    rows = tmp_path / "train.json"
    rows.write_text('{"sentence1": "a", "sentence2": "b", "label": "entailment"}\n')
    (parsed,) = parse_recipe_args((DataArguments,), ["--task", "rte", "--train_file", str(rows)])
    assert parsed.train_file == str(rows)


def test_a_wrong_typed_value_in_an_argument_file_names_the_file(tmp_path, capsys):
    from hf_gpt1.training.arguments import DataArguments
    from hf_gpt1.training.cli import parse_recipe_args

    config = tmp_path / "run.yaml"
    config.write_text("task: rte\nmax_train_samples: many\n")
    with pytest.raises(SystemExit):
        parse_recipe_args((DataArguments,), [str(config)])
    assert f"{config}: argument --max_train_samples" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # given on the command line: the line's, not the file's
        parse_recipe_args((DataArguments,), [str(config), "--max_train_samples", "lots"])
    err = capsys.readouterr().err
    assert "argument --max_train_samples" in err and f"{config}:" not in err


# ------------------------------------------------------------------------------------------ more causes named


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


def test_pad_to_multiple_of_that_does_not_divide_the_length_names_itself(tiny, rte_files, tmp_path, capsys):
    from hf_gpt1.commands.glue import main as glue_main
    from tests.utils import glue_argv

    train, dev = rte_files
    argv = glue_argv(tiny, train, dev, tmp_path / "out", extra=("--pad_to_multiple_of", "7"))
    error = run_cli(capsys, lambda: glue_main(argv))
    assert error.startswith("error: --pad_to_multiple_of 7 does not divide the longest input, 64 tokens"), error
    assert "--train_file" not in error


def test_a_race_row_with_fewer_options_is_refused_at_load_naming_it(tiny, tmp_path, capsys):
    from hf_gpt1.commands.multiple_choice import main as multiple_choice_main

    rows = [
        {"example_id": f"high{i}.txt", "article": f"Article {i} is long.", "question": "What is it?",
         "options": ["one", "two", "three", "four"], "answer": "A"}
        for i in range(12)
    ]  # fmt: skip
    rows[7]["options"] = ["one", "two", "three"]
    train = tmp_path / "race.jsonl"
    train.write_text("".join(json.dumps(row) + "\n" for row in rows))
    argv = ["--task", "race", "--model_name_or_path", str(tiny), "--train_file", str(train), "--output_dir",
            str(tmp_path / "out"), "--eval_strategy", "no", "--do_predict", "false", *COMMON]  # fmt: skip
    error = run_cli(capsys, lambda: multiple_choice_main(argv))
    assert f"{train}: data row 8 has 3 options in 'options' where the other rows have 4" in error, error


def test_an_inconsistent_params_shapes_json_names_the_array_and_the_shape(tmp_path):
    from hf_gpt1.tools.convert import ConversionError, convert_openai_checkpoint
    from tests.test_bad_input import _release

    folder = _release(tmp_path)
    shapes = json.loads((folder / "params_shapes.json").read_text())
    shapes[4] = [1, 8, 9]  # attn.c_proj of block 0
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    with pytest.raises(ConversionError, match=r"shape \[1, 8, 9\] of array 4 \(transformer.h.0.attn.c_proj.weight\) "
                       r"does not fit \[1, 8, 8\]"):  # fmt: skip
        convert_openai_checkpoint(folder)
    shapes[4], shapes[0] = [1, 8, 8], [4]
    (folder / "params_shapes.json").write_text(json.dumps(shapes))
    with pytest.raises(ConversionError, match=r"arrays 0 and 1 .* must be 2-D, got \[4\]"):
        convert_openai_checkpoint(folder)


@pytest.mark.parametrize("state", ["rng_state.pth", "optimizer.pt"])
def test_resume_over_a_foreign_pickle_says_what_it_did_not_load(state, tiny, rte_files, tmp_path, capsys):
    import pickle

    from hf_gpt1.commands.glue import main as glue_main
    from tests.utils import glue_argv

    train, dev = rte_files
    out = tmp_path / "run"
    argv = glue_argv(tiny, train, dev, out, extra=("--eval_strategy", "no", "--do_predict", "false",
                                                   "--save_strategy", "steps", "--save_steps", "1"))  # fmt: skip
    glue_main(argv)
    newest = max(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    original = (newest / state).read_bytes()
    foreign = pickle.dumps(os.system, protocol=2)  # a pickle that would run code, padded to the same size
    (newest / state).write_bytes(foreign + b"\0" * (len(original) - len(foreign)))
    capsys.readouterr()
    glue_main([*argv, "--resume"])
    out_text = capsys.readouterr().out
    assert f"warning: {newest.name} was not used: {state} does not load as tensors only" in out_text, out_text


def test_a_process_whose_packing_failed_still_exits(tmp_path):
    """Jobs no worker read stay in the queue's pipe; the process must not wait for a reader when it exits."""
    import subprocess
    import sys

    from tests.utils import REPO_ROOT

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(20_000), encoding="utf-8")  # many shards: far more jobs than a pipe buffer holds
    code = f"""
import datasets
from hf_gpt1.data import packing
from hf_gpt1.tokenization_gpt1 import train_gpt1_tokenizer
datasets.config.HF_DATASETS_CACHE = {str(tmp_path / "cache")!r}
tokenizer = train_gpt1_tokenizer(["the cat sat on a mat"] * 20, vocab_size=60)
shards = packing.TextCorpus([{str(corpus)!r}], shard_bytes=2_000).train
def fail(job):
    raise MemoryError("cannot allocate")
packing._pack_shard = fail
try:
    packing.pack_corpus(shards, tokenizer, 16, num_workers=2)
except packing.PackingError as err:
    print("refused:", len(shards), "shards")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0 and "refused:" in done.stdout, done.stderr[-2000:]
