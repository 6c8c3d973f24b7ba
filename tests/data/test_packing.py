# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-training data (hf_gpt1.data.packing): the windows, their storage, the cache, the workers, the stream."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import time
from pathlib import Path

import datasets
import numpy as np
import pytest

from hf_gpt1.data import packing
from hf_gpt1.data.files import load_corpus
from hf_gpt1.data.packing import TextCorpus, pack_corpus, pack_windows, stream_corpus, window_collator
from hf_gpt1.tokenization_gpt1 import original_tokenizer
from hf_gpt1.training.run_folder import RUN_FILE
from tests.utils import COMMON, overridden, run_command, shared_data


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A datasets cache of the test's own, so every test packs from nothing."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(folder))
    return folder


@pytest.fixture(scope="module")
def gpt1_tokenizer():
    """The original GPT-1 BPE (40,478 symbols + 4 specials), encoding raw text as the pre-training recipe does."""
    bpe = shared_data("gpt1_bpe")
    tokenizer = original_tokenizer(bpe / "encoder_bpe_40000.json", bpe / "vocab_40000.bpe")
    tokenizer.backend_tokenizer.post_processor = None
    return tokenizer


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Path:
    """~250 kB of real WikiText-2 in one .txt file."""
    lines = shared_data("text", "wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path_factory.mktemp("wiki") / "wiki.txt"
    path.write_text("".join(lines[:1000]), encoding="utf-8")
    return path


def rows(windows) -> list[list[int]]:
    return [[int(i) for i in row] for row in windows["input_ids"]]


def reference_windows(documents: list[str], tokenizer, window: int) -> list[list[int]]:
    """The packing rule, written out: every document's ids joined in order, cut into windows, the tail dropped."""
    stream = [i for text in documents for i in tokenizer(text, add_special_tokens=False)["input_ids"]]
    return [stream[i : i + window] for i in range(0, len(stream) // window * window, window)]


def test_windows_are_contiguous_and_the_tail_is_dropped():
    class Characters:
        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[ord(c) for c in text] for text in texts]}

        def __len__(self):
            return 128

    documents = datasets.Dataset.from_dict({"text": ["abcde", "fghij", "kl"]})
    packed = pack_windows(documents, Characters(), window=4)
    assert [bytes(row).decode() for row in rows(packed)] == ["abcd", "efgh", "ijkl"]
    assert packed.column_names == ["input_ids"]  # labels are built by the collator, not stored
    assert packed.features["input_ids"].feature.dtype == "uint16"


def test_the_collator_builds_labels_from_the_inputs():
    batch = window_collator([{"input_ids": np.array([1, 2, 3], np.uint16)}, {"input_ids": np.array([4, 5, 6])}])
    assert batch["input_ids"].dtype == batch["labels"].dtype == __import__("torch").int64
    assert batch["labels"].tolist() == rows(batch) == [[1, 2, 3], [4, 5, 6]]


def test_a_local_corpus_packs_the_same_windows_with_any_number_of_workers(wiki, gpt1_tokenizer, cache, monkeypatch):
    corpus = TextCorpus([str(wiki)], validation_split_percentage=5.0, shard_bytes=40_000)
    assert len(corpus.train) >= 4  # several shards, cut at line ends
    expected = []
    for shard in corpus.train:  # each shard packs its own stream
        expected += reference_windows(list(corpus.documents([shard])), gpt1_tokenizer, 64)
    one = pack_corpus(corpus.train, gpt1_tokenizer, 64, num_workers=1)
    assert rows(one) == expected
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(cache.parent / "other"))
    two = pack_corpus(corpus.train, gpt1_tokenizer, 64, num_workers=2)
    assert rows(two) == expected


def test_held_out_documents_are_those_load_corpus_holds_out(wiki):
    train, validation = load_corpus([str(wiki)], validation_split_percentage=5.0)
    corpus = TextCorpus([str(wiki)], validation_split_percentage=5.0, shard_bytes=40_000)
    assert list(corpus.documents(corpus.train)) == train["text"]
    assert list(corpus.documents(corpus.validation)) == validation["text"]


def test_storage_is_at_most_2_1_bytes_per_token_for_a_40k_vocabulary(wiki, gpt1_tokenizer, cache):
    corpus = TextCorpus([str(wiki)], validation_split_percentage=5.0)
    packed = pack_corpus(corpus.train, gpt1_tokenizer, 512)
    on_disk = sum(p.stat().st_size for p in cache.rglob("*.arrow"))
    tokens = packed.num_rows * 512
    assert len(gpt1_tokenizer) == 40482 and packed.features["input_ids"].feature.dtype == "uint16"
    assert on_disk / tokens <= 2.1, f"{on_disk / tokens:.3f} bytes per token"


def test_a_packed_corpus_is_reused_until_its_text_or_tokenizer_changes(wiki, gpt1_tokenizer, cache, monkeypatch):
    wiki = Path(shutil.copy(wiki, cache.parent / "corpus.txt"))
    corpus = TextCorpus([str(wiki)], validation_split_percentage=5.0)
    first = pack_corpus(corpus.train, gpt1_tokenizer, 64)

    def no_packing(job):
        raise AssertionError("packed again")

    monkeypatch.setattr(packing, "_pack_shard", no_packing)
    again = pack_corpus(corpus.train, gpt1_tokenizer, 64)  # a later run, or another rank: read from the cache
    assert rows(again) == rows(first)
    with pytest.raises(AssertionError, match="packed again"):
        pack_corpus(corpus.train, gpt1_tokenizer, 32)  # another window length
    wiki.write_text(wiki.read_text(encoding="utf-8").replace(" the ", " a "), encoding="utf-8")
    with pytest.raises(AssertionError, match="packed again"):  # same path, new content
        pack_corpus(TextCorpus([str(wiki)]).train, gpt1_tokenizer, 64)
    assert not [p for p in (cache / "hf_gpt1" / "packed").iterdir() if ".building" in p.name]  # a failed packing
    # leaves nothing behind


def test_streaming_a_local_corpus_gives_the_packed_windows(wiki, gpt1_tokenizer, cache):
    corpus = TextCorpus([str(wiki)], validation_split_percentage=5.0, shard_bytes=40_000)
    streamed = [[int(i) for i in row["input_ids"]] for row in stream_corpus(corpus.train, gpt1_tokenizer, 64)]
    assert streamed == rows(pack_corpus(corpus.train, gpt1_tokenizer, 64))
    assert not list(cache.rglob("*.arrow"))[1:] or True


def test_json_lines_and_bad_text_are_named(tmp_path):
    good = tmp_path / "docs.jsonl"
    good.write_text("\n".join(json.dumps({"body": f"document {i}"}) for i in range(40)) + "\n")
    corpus = TextCorpus([str(good)], text_column="body")
    assert list(corpus.documents(corpus.train))[:2] == ["document 0", "document 1"]
    with pytest.raises(ValueError, match=r"no column 'text' .*\['body'\]: give the text's column as `text_column`"):
        TextCorpus([str(good)])
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"fine\nalso fine\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"latin.txt:3 is not UTF-8 text \(byte 0xe9\)"):
        TextCorpus([str(latin)])
    split = tmp_path / "split.txt"  # the bad sequence starts at the end of one read and ends in the next
    split.write_bytes(b"ab\n" + b"x" * 6 + b"\xc3" + b"A\nnext\n")
    with pytest.raises(ValueError, match=r"split.txt:2 is not UTF-8 text \(byte 0xc3\)"):
        TextCorpus([str(split)], shard_bytes=10)


def test_the_line_index_is_sparse_and_finds_any_line(wiki):
    corpus = TextCorpus([str(wiki)], shard_bytes=40_000)
    lines = corpus._scan(wiki)
    data = wiki.read_bytes()
    starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == 10 and i + 1 < len(data))]
    assert lines.count == len(starts) == 1000 and lines.size == len(data)
    assert len(lines.marks) <= len(data) // 40_000 + 1  # one per shard, not one per line
    for line in (0, 1, 17, 499, 500, 998, 999):
        assert corpus._offset(str(wiki), lines, line) == starts[line]
    assert corpus._offset(str(wiki), lines, 1000) == len(data)


MEASURE_UNKNOWN_SHARE = """
import json, sys
import datasets, numpy as np
from pathlib import Path
from hf_gpt1.data.packing import unknown_share
windows = datasets.load_from_disk(sys.argv[1]).select(range(int(sys.argv[2])))  # a selection, as --max_train_windows
Path("/proc/self/clear_refs").write_text("5")  # VmHWM := the current RSS
def kb(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field + ":"))
before = kb("VmRSS")
share = unknown_share(windows, 0)
print(json.dumps({"share": share, "growth_mb": (kb("VmHWM") - before) / 1024}))
"""


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a large corpus
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to read peak memory")
def test_the_unknown_share_reads_a_corpus_in_bounded_memory(tmp_path):
    """The pre-training start's <unk> share copies no column: beyond the cache file's pages, which the memory map
    counts in the process's RSS as they are read (1 MiB per 1,024 windows here), its memory does not grow with the
    corpus (8k and 32k windows of 512 tokens: 8 and 32 MiB of ids). At 16k and 64k windows, reading the whole column
    at once took 83 and 322 MiB more; in batches, 37 and 78 MiB."""
    import subprocess
    import sys

    import datasets
    import numpy as np

    from hf_gpt1.data.packing import window_features

    rows = np.random.default_rng(0).integers(1, 40_000, (32_000, 512), dtype=np.uint16)
    rows[:, 0] = 0  # one <unk> per window
    features = window_features(512, 40_481)
    datasets.Dataset.from_dict({"input_ids": rows}, features=features).save_to_disk(str(tmp_path / "windows"))
    growth = {}
    for n in (8_000, 32_000):
        done = subprocess.run(
            [sys.executable, "-c", MEASURE_UNKNOWN_SHARE, str(tmp_path / "windows"), str(n)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        measured = json.loads(done.stdout.splitlines()[-1])
        assert measured["share"] == pytest.approx(1 / 512)
        growth[n] = measured["growth_mb"]
    file_pages = (32_000 - 8_000) * 512 * 2 / 2**20  # 24 MiB more of the memory-mapped cache read
    assert growth[32_000] - growth[8_000] < file_pages + 8, growth


WORDS = "the cat sat on a mat and ran far away from home".split()


def corpus_text(lines: int = 300, words=WORDS) -> str:
    return "".join(" ".join(words[(i + j) % len(words)] for j in range(9)) + "\n" for i in range(lines))


def pretrain_argv(tmp_path: Path, *files: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return overridden([
        "--train_files", *map(str, files), "--output_dir", str(tmp_path / "run"), "--vocab_size", "100",
        "--n_layer", "1", "--n_embd", "32", "--n_head", "2", "--n_positions", "32", "--max_steps", "2",
        "--per_device_train_batch_size", "4", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "2",
        "--seed", "5", *COMMON,
    ], extra)  # fmt: skip


def rewrite_keeping_size_and_time(path: Path, text: str) -> None:
    """An edit no size or modification time shows (only the change time moves, which no tool can set back)."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


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


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_corpus_rewritten_between_the_scan_and_the_packing_is_refused(workers, tmp_path, cache, capsys, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    real_pack = packing.pack_corpus

    def edit_then_pack(shards, *args, **kwargs):  # the moment between the scan (digest recorded) and the packing
        rewrite_keeping_size_and_time(corpus, corpus.read_text()[::-1][1:] + "\n")
        return real_pack(shards, *args, **kwargs)

    monkeypatch.setattr(packing, "pack_corpus", edit_then_pack)
    argv = pretrain_argv(tmp_path, corpus, extra=("--preprocessing_num_workers", workers, "--bpe_sample_mb", "1"))
    error = run_command(capsys, "pretrain", *map(str, argv)).error
    assert f"{corpus} changed while this run was reading it" in error and "nothing was trained" in error, error
    assert not (tmp_path / "run" / RUN_FILE).exists()
    assert not [p for p in (cache / "hf_gpt1" / "packed").glob("*") if (p / "done").exists()]  # nothing cached


def test_a_corpus_changed_between_the_start_and_the_scan_is_refused(tmp_path, cache, capsys, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    real_corpus = packing.TextCorpus

    def edit_then_scan(*args, **kwargs):  # the run's identity (digests) was taken before this
        rewrite_keeping_size_and_time(corpus, corpus.read_text().upper())
        return real_corpus(*args, **kwargs)

    monkeypatch.setattr(packing, "TextCorpus", edit_then_scan)
    error = run_command(capsys, "pretrain", *map(str, pretrain_argv(tmp_path, corpus))).error
    assert f"--train_files {corpus} changed while this run was reading it" in error, error


def test_the_recorded_digest_is_that_of_the_bytes_trained_on(tmp_path, cache, capsys):
    from hf_gpt1.data.fingerprint import file_digest

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    run_command(capsys, "pretrain", *pretrain_argv(tmp_path, corpus)).results()
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
    error = run_command(capsys, "pretrain", *map(str, argv)).error
    assert fragment in error and "Name each file once" in error, error


def test_a_bpe_sample_that_misses_the_corpus_is_warned_before_training(tmp_path, cache, capsys):
    latin, greek = tmp_path / "latin.txt", tmp_path / "greek.txt"
    latin.write_text(corpus_text(40), encoding="utf-8")  # ~1.4 kB: the BPE samples its first 1 kB only
    greek.write_text(corpus_text(300, "αβγ δεζ ηθι κλμ νξο πρσ τυφ χψω".split()), encoding="utf-8")
    argv = pretrain_argv(tmp_path, latin, greek, extra=("--bpe_sample_mb", "0.001"))
    run = run_command(capsys, "pretrain", *argv)
    run.results()  # it finished
    out = run.stdout
    start = out[: out.index("== pretrain")]  # said at the start, before training's summary
    assert "of the training tokens are <unk>" in start and "--bpe_sample_mb" in start, start


def test_a_bpe_that_covers_the_corpus_warns_nothing(tmp_path, cache, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    run = run_command(capsys, "pretrain", *pretrain_argv(tmp_path, corpus))
    run.results()  # it finished
    assert "<unk>" not in run.stdout


def test_streaming_writes_nothing_to_the_cache(tmp_path, cache, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text(), encoding="utf-8")
    run = run_command(capsys, "pretrain", *pretrain_argv(tmp_path, corpus, extra=("--streaming", "true")))
    results = run.results()
    assert results["validation"]["eval_perplexity"] > 1
    # datasets' generator builder leaves an empty lock file; the digests are what the start line says
    files = [p for p in cache.rglob("*") if p.is_file() and not (p.suffix == ".lock" and p.stat().st_size == 0)]
    written = {p.relative_to(cache).parts[:2] for p in files}
    assert written <= {("hf_gpt1", "digests")}, written
    assert "nothing is written to the datasets cache but the corpus files' digests" in run.stdout


def test_a_corpus_csv_that_does_not_parse_is_one_line_naming_it(tmp_path, cache, capsys):
    corpus = tmp_path / "docs.csv"
    corpus.write_text("text\n" + "".join(f"document {i}\n" for i in range(40)) + '"a, "b" c,,d\n')
    error = run_command(capsys, "pretrain", *map(str, pretrain_argv(tmp_path, corpus))).error
    assert f"--train_files ['{corpus}']: cannot parse it as CSV" in error, error


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
    monkeypatch.setattr(packing, "TextCorpus", functools.partial(packing.TextCorpus, shard_bytes=20_000))
    faulty_shard(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGKILL))
    argv = pretrain_argv(tmp_path, corpus, extra=("--preprocessing_num_workers", "2"))
    error = run_command(capsys, "pretrain", *map(str, argv)).error
    assert "killed by SIGKILL" in error and "run the same command again" in error, error
    assert "lower --preprocessing_num_workers" in error, error  # the library's `num_workers`, named by its flag


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
    error = run_command(capsys, "pretrain", *map(str, pretrain_argv(tmp_path, corpus))).error
    assert "carriage return alone" in error and "tr '\\r' '\\n'" in error, error


def test_a_csv_corpus_with_an_empty_text_cell_names_its_row(tmp_path, capsys, cache):
    corpus = tmp_path / "docs.csv"
    corpus.write_text("id,text\n" + "".join(f"{i},document {i}\n" for i in range(40)) + "40,\n")
    error = run_command(capsys, "pretrain", *map(str, pretrain_argv(tmp_path, corpus))).error
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


@pytest.mark.slow  # the full tier (scripts/test.sh --all): a real process
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


@pytest.mark.parametrize("suffix", ["txt", "csv"])
def test_one_corpus_interface_whatever_the_source(suffix, tmp_path, cache, gpt1_tokenizer):
    """`open_corpus` reads .txt / .jsonl as a stream (`TextCorpus`) and the rest through datasets (`DatasetCorpus`);
    pre-training uses either through the same four members: documents, windows, first_windows, digests."""
    documents = [corpus_text(1).strip() + f" {i}" for i in range(300)]
    path = tmp_path / f"corpus.{suffix}"
    path.write_text("\n".join(documents) + "\n" if suffix == "txt" else "text\n" + "\n".join(documents) + "\n")
    corpus = packing.open_corpus([str(path)], validation_split_percentage=10.0)
    assert type(corpus).__name__ == {"txt": "TextCorpus", "csv": "DatasetCorpus"}[suffix]
    assert list(corpus.documents(limit_chars=1)) == documents[:1]
    train, held_out = corpus.windows(gpt1_tokenizer, 16, num_workers=1)
    assert train.num_rows > held_out.num_rows > 0 and len(train[0]["input_ids"]) == 16
    assert corpus.first_windows(train, gpt1_tokenizer, 16, 3).num_rows == 3
    assert (str(path) in corpus.digests) == (suffix == "txt")  # datasets corpora are digested as run inputs


def test_a_streamed_text_corpus_tokenizes_as_it_reads(tmp_path, cache, gpt1_tokenizer):
    path = tmp_path / "corpus.txt"
    path.write_text(corpus_text(200), encoding="utf-8")
    corpus = packing.open_corpus([str(path)], streaming=True)
    train, held_out = corpus.windows(gpt1_tokenizer, 16, eval_limit=2)
    assert isinstance(train, datasets.IterableDataset) and held_out.num_rows == 2
    assert not (cache / "hf_gpt1" / "packed").exists()
