# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-training data (hf_gpt1.data.packing): the windows, their storage, the cache, the workers, the stream."""

import json
import shutil
from pathlib import Path

import datasets
import numpy as np
import pytest

from hf_gpt1.data import packing
from hf_gpt1.data.files import load_corpus
from hf_gpt1.data.packing import TextCorpus, pack_corpus, pack_windows, stream_corpus, window_collator
from hf_gpt1.tokenization_gpt1 import original_tokenizer
from tests.utils import shared_data


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
