# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Pre-training data: text → fixed-length token windows, prepared once, on every core, in flat memory.

* [`TextCorpus`]: local `.txt` (one document per line) or `.jsonl` corpora, checked and cut into line-aligned byte
  ranges (shards) in one streaming pass; the held-out documents are the last ones, as `load_corpus` holds them out.
* [`pack_corpus`]: tokenizes and packs the shards in worker processes into Arrow files of token ids in the smallest
  integer type that holds the vocabulary, cached under a key of the corpus's and the tokenizer's content, so a later
  run (or another rank) reuses them; [`stream_corpus`] yields the same windows without writing anything.
* [`pack_windows`]: the same packing for a `datasets` corpus (a Hub dataset, CSV or parquet files).
* [`window_collator`]: batches windows; the L1 labels are the inputs themselves, built here rather than stored.

Each shard packs its own id stream (documents joined in order) and drops only its last partial window, so the
windows do not depend on the number of workers.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import itertools
import json
import multiprocessing
import os
import queue
import shutil
import signal
import socket
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import numpy as np
import pyarrow.compute as pc
import torch

from ..errors import PackingError
from .files import check_text_file, each_file, held_out_count, load_corpus, not_utf8_error
from .fingerprint import file_version, refuse_repeated_inputs
from .strict_files import DuplicateKeyError, loads_strict

__all__ = [
    "DatasetCorpus",
    "PackingError",
    "TextCorpus",
    "collect_windows",
    "first_chars",
    "open_corpus",
    "pack_corpus",
    "pack_windows",
    "stream_corpus",
    "streamable",
    "token_dtype",
    "unknown_share",
    "window_collator",
]

SHARD_BYTES = 4 << 20  # a shard is the unit of parallel work: ~4 MB of text, cut at a line end
PACKING_VERSION = 1  # part of the cache key: a change to the packing rule or format invalidates old caches
STREAMED_SUFFIXES = {"txt": "text", "text": "text", "jsonl": "json", "json": "json"}
SHARD_TIMEOUT_S = 1800.0  # no shard finished for this long: a worker hangs (a 4 MB shard packs in seconds)


def token_dtype(vocab_size: int) -> np.dtype:
    """The smallest unsigned integer type holding every id below `vocab_size`."""
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def window_features(window: int, vocab_size: int) -> datasets.Features:
    return datasets.Features({"input_ids": datasets.List(datasets.Value(token_dtype(vocab_size).name), length=window)})


def window_collator(features: list[dict]) -> dict[str, torch.Tensor]:
    """Stacks windows into `input_ids` (int64) and sets `labels` to the same ids: the model shifts them for L1."""
    ids = torch.from_numpy(np.stack([np.asarray(f["input_ids"]) for f in features]).astype(np.int64))
    return {"input_ids": ids, "labels": ids.clone()}


# ------------------------------------------------------------------------------------------------- local corpora


@dataclass(frozen=True)
class Shard:
    """Lines `[start, end)` (byte offsets at line starts) of one file; `text_column` is set for JSON lines.
    `sha256` is the file's digest and `version` its (size, modification time, change time, inode), both taken by the
    scan: the bytes read for training must still be that version (`_shard_documents`), the one the run recorded."""

    path: str
    start: int
    end: int
    text_column: str | None = None
    sha256: str = ""
    version: tuple[int, ...] | None = None


@dataclass(frozen=True)
class _Lines:
    """What one pass learns of a file: its lines (documents), its size, a sparse index of line starts, one about
    every `shard_bytes` (line number, byte offset), so memory does not grow with the number of lines, and the SHA-256
    of the bytes that pass read, with the file's version (`file_version`) they belong to."""

    count: int
    size: int
    marks: tuple[tuple[int, int], ...]
    sha256: str = ""
    version: tuple[int, ...] | None = None


class TextCorpus:
    """A local corpus of `.txt` / `.jsonl` files read as a stream: one pass checks every file (UTF-8, JSON, the text
    column) and counts its documents; the training and held-out documents are then lists of shards.

    Args:
        train_files: The corpus files, in order (`.txt`: one document per line; `.jsonl`: one object per line).
        validation_files: Held-out files; without them the last `validation_split_percentage` % of the training
            documents (lines) are held out, as `hf_gpt1.data.files.load_corpus` holds them out.
        text_column: The JSON field holding a document's text.
        shard_bytes: The size of a shard, the unit of parallel work.
        streaming: [`windows`] tokenizes the training text as it is read (nothing written) instead of packing it.

    A pre-training corpus ([`open_corpus`]): `documents`, `windows`, `first_windows` and `digests`, as
    [`DatasetCorpus`].
    """

    def __init__(
        self,
        train_files: Sequence[str],
        validation_files: Sequence[str] | None = None,
        text_column: str = "text",
        validation_split_percentage: float = 5.0,
        shard_bytes: int = SHARD_BYTES,
        streaming: bool = False,
    ):
        self.text_column, self.shard_bytes, self.streaming = text_column, shard_bytes, streaming
        refuse_repeated_inputs({"`train_files`": train_files, "`validation_files`": validation_files or []})
        train = {str(p): self._scan(Path(p)) for p in train_files}
        held = {str(p): self._scan(Path(p)) for p in validation_files or []}
        self.digests = {path: lines.sha256 for path, lines in {**train, **held}.items()}
        """`{path: sha256}` of every file, taken from the bytes the scan read."""
        if validation_files:
            self.train = [s for path, lines in train.items() for s in self._shards(path, lines, 0, lines.count)]
            self.validation = [s for path, lines in held.items() for s in self._shards(path, lines, 0, lines.count)]
            return
        documents = sum(lines.count for lines in train.values())
        cut = documents - held_out_count(documents, validation_split_percentage)
        self.train, self.validation = [], []
        for path, lines in train.items():  # the first `cut` documents train, the rest are held out
            keep = min(max(cut, 0), lines.count)
            self.train += self._shards(path, lines, 0, keep)
            self.validation += self._shards(path, lines, keep, lines.count)
            cut -= lines.count

    def _scan(self, path: Path) -> _Lines:
        """Counts the lines of `path`, indexes their starts sparsely and hashes its bytes, checking the text on the
        way."""
        if _kind(path) is None:
            raise ValueError(f"{path} is not a .txt or .jsonl file.")
        check_text_file(path)
        json_lines = _kind(path) == "json"
        decoder = codecs.getincrementaldecoder("utf-8")()
        sha = hashlib.sha256()
        marks, newlines, offset, carry, last, lone_cr = [(0, 0)], 0, 0, b"", b"", False
        with open(path, "rb") as f:
            version = file_version(f.fileno())
            size = version[0]
            while chunk := f.read(self.shard_bytes):
                sha.update(chunk)
                data = decoder.getstate()[0] + chunk  # what the decoder sees: the previous chunk's incomplete tail too
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as err:
                    line = newlines + data[: err.start].count(b"\n") + 1
                    raise not_utf8_error(path, line, data[err.start]) from None
                found = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
                if offset and len(found) and offset + found[0] + 1 < size:  # the first line starting in this chunk
                    marks.append((newlines + 1, offset + int(found[0]) + 1))
                if json_lines:
                    carry = self._check_json_lines(path, carry + chunk, newlines + 1)
                lone_cr = lone_cr or b"\r" in chunk.replace(b"\r\n", b"")
                newlines += len(found)
                offset, last = offset + len(chunk), chunk[-1:]
            if file_version(f.fileno()) != version or offset != size:
                raise corpus_changed_error(path)
        if json_lines and carry.strip():
            self._check_json_lines(path, carry + b"\n", newlines + 1)
        if lone_cr and newlines == 0:
            # `str.splitlines` would cut it into documents at each CR while the line count says one: refuse instead
            raise ValueError(
                f"{path} ends its lines with a carriage return alone (CR, old Mac line endings), so it reads "
                f"as a single line; convert them to line feeds (tr '\\r' '\\n' < {path.name} > fixed.txt)."
            )
        return _Lines(
            count=newlines + (last != b"\n"), size=size, marks=tuple(marks), sha256=sha.hexdigest(), version=version
        )

    def _check_json_lines(self, path: Path, data: bytes, first_line: int) -> bytes:
        """Checks the complete lines of `data` (whose first line is line `first_line` of the file); returns the
        incomplete tail."""
        *lines, tail = data.split(b"\n")
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            try:
                row = loads_strict(line)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{path}:{number}: the line is not JSON ({err.msg}, column {err.colno}); each line must be "
                    "one object. Fix or delete that line."
                ) from None
            except DuplicateKeyError as err:
                raise ValueError(f"{path}:{number}: {err}.") from None
            if not isinstance(row, dict):
                raise ValueError(
                    f"{path}:{number}: the line holds a JSON {type(row).__name__}, not an object with a text field."
                )
            if not isinstance(row.get(self.text_column), str):
                raise ValueError(
                    f"{path}:{number}: no column {self.text_column!r} (as text) in a line whose columns are "
                    f"{sorted(row)}: give the text's column as `text_column` (or fill in that line's text)."
                )
        return tail

    @staticmethod
    def _offset(path: str, lines: _Lines, line: int) -> int:
        """The byte offset where line number `line` starts (the file's size past its last line)."""
        if line >= lines.count:
            return lines.size
        number, offset = max(mark for mark in lines.marks if mark[0] <= line)
        with open(path, "rb") as f:
            f.seek(offset)
            while number < line:
                chunk = f.read(1 << 20)
                found = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
                if number + len(found) >= line:
                    return offset + int(found[line - number - 1]) + 1
                number, offset = number + len(found), offset + len(chunk)
        return offset

    def _shards(self, path: str, lines: _Lines, first: int, last: int) -> list[Shard]:
        """Lines `[first, last)` of a file, cut at the indexed line starts into shards of about `shard_bytes`."""
        begin, end = self._offset(path, lines, first), self._offset(path, lines, last)
        column = self.text_column if _kind(Path(path)) == "json" else None
        cuts = [begin, *(offset for _, offset in lines.marks if begin < offset < end), end]
        return [Shard(path, a, b, column, lines.sha256, lines.version) for a, b in zip(cuts, cuts[1:]) if a < b]

    def documents(self, shards: Sequence[Shard] | None = None, limit_chars: int | None = None) -> Iterator[str]:
        """The documents of `shards` (default: the training ones) in order (at most `limit_chars` characters)."""
        shards = self.train if shards is None else shards
        return first_chars(itertools.chain.from_iterable(map(_shard_documents, shards)), limit_chars)

    def windows(
        self, tokenizer, window: int, num_workers: int | None = None, eval_limit: int | None = None
    ) -> tuple[datasets.Dataset | datasets.IterableDataset, datasets.Dataset]:
        """(training windows, held-out windows): packed once into the datasets cache, or under `streaming` the
        training windows tokenized as they are read and the first `eval_limit` held-out ones held in memory."""
        if self.streaming:
            return stream_corpus(self.train, tokenizer, window), collect_windows(
                self.validation, tokenizer, window, eval_limit
            )
        return pack_corpus(self.train, tokenizer, window, num_workers), pack_corpus(
            self.validation, tokenizer, window, num_workers
        )

    def first_windows(self, train, tokenizer, window: int, count: int) -> datasets.Dataset:
        """The first `count` training windows, in memory (a sample of a streamed corpus)."""
        return collect_windows(self.train, tokenizer, window, count)


def first_chars(texts: Iterable[str], limit_chars: int | None = None) -> Iterator[str]:
    """`texts` in order, stopping after the one that reaches `limit_chars` characters in all (None: every one)."""
    seen = 0
    for text in texts:
        yield text
        seen += len(text)
        if limit_chars is not None and seen >= limit_chars:
            return


def _kind(path: Path) -> str | None:
    """ "text" or "json" for the files [`TextCorpus`] reads, else None."""
    return STREAMED_SUFFIXES.get(path.suffix.lower().lstrip("."))


def streamable(train_files: Sequence[str] | None, validation_files: Sequence[str] | None = None) -> bool:
    """Whether [`TextCorpus`] reads these corpus files (all .txt / .jsonl); other sources go through `datasets`."""
    files = [*(train_files or []), *(validation_files or [])]
    return bool(train_files) and all(_kind(Path(p)) is not None for p in files)


def corpus_changed_error(path: str | os.PathLike) -> ValueError:
    return ValueError(
        f"{path} changed while this run was reading it (its size, modification or change time differs from "
        "when it was scanned): nothing was trained on the edited text. Run the same command again once the file is "
        "final."
    )


def _shard_documents(shard: Shard) -> Iterator[str]:
    with open(shard.path, "rb") as f:
        f.seek(shard.start)
        data = f.read(shard.end - shard.start)  # at most ~shard_bytes: the memory of one shard, whatever the corpus
        # read first, then checked: any write since the scan changes the change time (no tool can set it back)
        if shard.version is not None and file_version(f.fileno()) != shard.version:
            raise corpus_changed_error(shard.path)
    text = data.decode("utf-8-sig" if shard.start == 0 else "utf-8")
    if shard.text_column is None:
        yield from text.splitlines()  # as datasets' "text" builder splits a file into documents
    else:
        for line in text.split("\n"):
            if line.strip():
                yield loads_strict(line)[shard.text_column]  # as the scan read it


def _shard_windows(shard: Shard, backend, window: int, dtype: np.dtype, batch: int = 1000) -> Iterator[np.ndarray]:
    """The `window`-token windows of one shard: its documents' ids joined in order, the last partial window dropped."""
    pending = np.zeros(0, dtype)
    documents = _shard_documents(shard)
    while texts := [text for _, text in zip(range(batch), documents)]:
        ids = [np.asarray(e.ids, dtype) for e in backend.encode_batch(texts, add_special_tokens=False)]
        pending = np.concatenate([pending, *ids])
        full = len(pending) // window * window
        if full:
            yield from pending[:full].reshape(-1, window)
            pending = pending[full:]


@functools.lru_cache(maxsize=1)
def _backend(tokenizer_json: str):
    """The `tokenizers` pipeline, built once per process (a new one per shard would cost time and memory)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(tokenizer_json)


def _pack_shard(job: tuple) -> int:
    """Worker: packs one shard into an Arrow file; returns its number of windows."""
    shard, tokenizer_json, window, vocab_size, path = job
    block = list(_shard_windows(shard, _backend(tokenizer_json), window, token_dtype(vocab_size)))
    with datasets.arrow_writer.ArrowWriter(features=window_features(window, vocab_size), path=path) as writer:
        if block:
            writer.write_batch({"input_ids": block})
        writer.finalize()
    return len(block)


def _cache_key(shards: Sequence[Shard], tokenizer_json: str, window: int) -> str:
    record = {
        "version": PACKING_VERSION,
        "shards": [(s.sha256, s.start, s.end, s.text_column) for s in shards],
        "tokenizer": hashlib.sha256(tokenizer_json.encode()).hexdigest(),
        "window": window,
    }
    return hashlib.sha256(json.dumps(record).encode()).hexdigest()[:32]


def default_workers(shards: Sequence[Shard]) -> int:
    """One worker per core this process may use, never more than there are shards."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, len(shards)))


def pack_corpus(shards: Sequence[Shard], tokenizer, window: int, num_workers: int | None = None) -> datasets.Dataset:
    """The windows of `shards`, from the cache when this corpus was packed with this tokenizer before; otherwise
    packed by `num_workers` processes (default: [`default_workers`]) and cached, the cache appearing whole or not at
    all. A worker that dies, hangs or fails stops the packing with a [`PackingError`] naming its shard."""
    tokenizer_json = tokenizer.backend_tokenizer.to_str()
    root = Path(datasets.config.HF_DATASETS_CACHE) / "hf_gpt1" / "packed"
    folder = root / _cache_key(shards, tokenizer_json, window)
    if not (folder / "done").is_file():
        workers = num_workers or default_workers(shards)
        # named by host and process: machines sharing one cache folder may run processes of the same id
        host = socket.gethostname()
        building = root / f"{folder.name}.building-{host}-{os.getpid()}"
        started = time.time()
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        # one file per shard, numbered so that the files concatenate in corpus order
        jobs = [(shard, tokenizer_json, window, len(tokenizer), str(building / f"{n:06d}.arrow"))
                for n, shard in enumerate(shards)]  # fmt: skip
        try:
            counts = [_pack_shard(job) for job in jobs] if workers == 1 else _pack_in_workers(jobs, workers)
            # who packed it, and when (machines that share the cache pack one after the other: `machine_by_machine`)
            packed = {"host": host, "pid": os.getpid(), "started": started, "finished": time.time()}
            (building / "done").write_text(json.dumps({"windows": counts, "packed": packed}))
            building.rename(folder)
        except OSError:
            if not (folder / "done").is_file():
                raise
            # another process finished the same corpus first: its copy is identical
        finally:
            shutil.rmtree(building, ignore_errors=True)
    files = sorted(folder.glob("*.arrow"))
    if not files:
        return datasets.Dataset.from_dict({"input_ids": []}, features=window_features(window, len(tokenizer)))
    return datasets.concatenate_datasets([datasets.Dataset.from_file(str(p)) for p in files]).with_format("numpy")


def _packing_worker(jobs, results, holding, index: int) -> None:
    """A packing process: takes `(n, job)` until `None`, marks the shard it packs in `holding[index]` (shared memory,
    written before the work starts, so a kill at any moment still names it) and reports what came of it."""
    while (item := jobs.get()) is not None:
        n, job = item
        holding[index] = n
        try:
            results.put(("done", n, _pack_shard(job)))
        except BaseException as err:  # reported, never lost: the parent ends the packing with it
            results.put(("error", n, err if isinstance(err, ValueError) else f"{type(err).__name__}: {err}"))
            return
        holding[index] = -1


def _shard_name(jobs: Sequence[tuple], n: int) -> str:
    shard = jobs[n][0]
    return f"shard {n + 1} of {len(jobs)} ({shard.path}, bytes {shard.start:,}-{shard.end:,})"


def _pack_in_workers(jobs: Sequence[tuple], workers: int) -> list[int]:
    """Runs `_pack_shard` on `jobs` in `workers` processes; returns the window counts in job order. A worker killed
    (the OOM killer's SIGKILL), none finishing a shard for `SHARD_TIMEOUT_S`, or an error in one stops every worker
    and raises [`PackingError`] (a worker's `ValueError`, such as a corpus changed under it, as it is)."""
    fork = "fork" in multiprocessing.get_all_start_methods()  # workers need no re-import of this package
    context = multiprocessing.get_context("fork" if fork else None)
    tasks, results = context.Queue(), context.Queue()
    for item in [*enumerate(jobs), *[None] * workers]:
        tasks.put(item)
    holding = context.Array("q", [-1] * workers, lock=False)  # the shard each worker packs, -1 for none
    processes = [
        context.Process(target=_packing_worker, args=(tasks, results, holding, i), daemon=True) for i in range(workers)
    ]
    for process in processes:
        process.start()
    counts: dict[int, int] = {}
    heard = time.monotonic()
    resume = "nothing was cached; run the same command again"
    try:
        while len(counts) < len(jobs):
            try:
                kind, n, value = results.get(timeout=1.0)
            except queue.Empty:
                for i, process in enumerate(processes):
                    if process.exitcode not in (None, 0):
                        where = _shard_name(jobs, holding[i]) if holding[i] >= 0 else "a shard"
                        code = process.exitcode
                        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
                        hint = " (the out-of-memory killer?): lower `num_workers`" if code < 0 else ""
                        raise PackingError(f"Packing {where}: its worker was {how}{hint}; {resume}.") from None
                if time.monotonic() - heard > SHARD_TIMEOUT_S:
                    busy = ", ".join(_shard_name(jobs, n) for n in holding if n >= 0) or "the shards"
                    raise PackingError(
                        f"Packing stalled: no shard finished in {SHARD_TIMEOUT_S:.0f} s ({busy} still running); the "
                        f"workers were stopped and {resume}."
                    ) from None
                continue
            heard = time.monotonic()
            if kind == "done":
                counts[n] = value
            elif isinstance(value, ValueError):  # the worker's own one-line message (a corpus changed under it)
                raise value
            else:
                raise PackingError(f"Packing {_shard_name(jobs, n)} failed: {value}; {resume}.")
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()  # not SIGTERM: a handler a worker inherited (a training's graceful stop) may ignore it
            process.join()
        for channel in (tasks, results):
            # after a failure, jobs no worker will read may remain: without this, the queue's feeder thread would
            # wait for a reader forever when this process exits
            channel.cancel_join_thread()
            channel.close()
    return [counts[n] for n in range(len(jobs))]


# Windows read at a time by `unknown_share`: 4 MiB of uint16 ids at GPT-1's 512 tokens, whatever the corpus's size.
UNKNOWN_SHARE_BATCH = 4096


def unknown_share(windows: datasets.Dataset, unk_token_id: int) -> float:
    """The share of `unk_token_id` among the token ids of packed `windows` (0 for none), read column-wise in batches
    of [`UNKNOWN_SHARE_BATCH`] windows: memory bounded whatever the corpus's size (a selection of the windows, as
    `--max_train_windows` makes, would otherwise be copied whole)."""
    unknown = total = 0
    for batch in windows.with_format("arrow").iter(batch_size=UNKNOWN_SHARE_BATCH):
        ids = pc.list_flatten(batch["input_ids"])
        unknown += pc.sum(pc.equal(ids, unk_token_id)).as_py() or 0
        total += len(ids)
    return unknown / total if total else 0.0


def collect_windows(shards: Sequence[Shard], tokenizer, window: int, limit: int | None = None) -> datasets.Dataset:
    """The first `limit` windows of `shards` (all without a limit), held in memory: nothing is written."""
    dtype = token_dtype(len(tokenizer))
    backend = _backend(tokenizer.backend_tokenizer.to_str())
    windows = itertools.chain.from_iterable(_shard_windows(shard, backend, window, dtype) for shard in shards)
    block = list(itertools.islice(windows, limit))
    features = window_features(window, len(tokenizer))
    return datasets.Dataset.from_dict({"input_ids": block}, features=features).with_format("numpy")


def stream_corpus(shards: Sequence[Shard], tokenizer, window: int) -> datasets.IterableDataset:
    """The windows of `shards`, tokenized as they are read (nothing written; every epoch tokenizes again)."""
    tokenizer_json = tokenizer.backend_tokenizer.to_str()

    dtype = token_dtype(len(tokenizer))

    def rows(shards: list[Shard]):
        backend = _backend(tokenizer_json)
        for shard in shards:
            for ids in _shard_windows(shard, backend, window, dtype):
                yield {"input_ids": ids}

    return datasets.IterableDataset.from_generator(
        rows, features=window_features(window, len(tokenizer)), gen_kwargs={"shards": list(shards)}
    )


# ---------------------------------------------------------------------------------------------- datasets corpora


class DatasetCorpus:
    """A pre-training corpus read through `datasets` (csv / parquet files, a Hub dataset, streamed or not): the
    interface of [`TextCorpus`] (`documents`, `windows`, `first_windows`, `digests`) over `text`-column documents.

    Args:
        train, validation: The documents (`datasets.Dataset` or `IterableDataset` with a `text` column).
    """

    digests: dict[str, str] = {}
    """Local files are digested when a run records its inputs; a Hub corpus has none."""

    def __init__(self, train, validation):
        self.train, self.validation = train, validation

    def documents(self, limit_chars: int | None = None) -> Iterator[str]:
        """The training documents' text, in order (at most `limit_chars` characters of them)."""
        return first_chars((row["text"] for row in self.train), limit_chars)

    def windows(self, tokenizer, window: int, num_workers: int | None = None, eval_limit: int | None = None):
        """(training windows, held-out windows), packed as transformers' run_clm packs ([`pack_windows`])."""
        return pack_windows(self.train, tokenizer, window, num_workers), pack_windows(
            self.validation, tokenizer, window, num_workers
        )

    def first_windows(self, train, tokenizer, window: int, count: int) -> datasets.Dataset:
        """The first `count` of the training windows `train`, in memory."""
        if isinstance(train, datasets.IterableDataset):
            return datasets.Dataset.from_dict({"input_ids": [row["input_ids"] for row in train.take(count)]})
        return datasets.Dataset.from_dict({"input_ids": train[:count]["input_ids"]})


def open_corpus(
    train_files: Sequence[str] | None,
    validation_files: Sequence[str] | None = None,
    *,
    text_column: str = "text",
    validation_split_percentage: float = 5.0,
    streaming: bool = False,
    **hub: str | None,
) -> TextCorpus | DatasetCorpus:
    """The pre-training corpus, whatever its source: local `.txt` / `.jsonl` files are read as a stream
    ([`TextCorpus`]), the rest (csv / parquet, a Hub dataset: `hub` holds `dataset_name` and `dataset_config_name`)
    through `datasets` ([`DatasetCorpus`])."""
    each_file([*(train_files or []), *(validation_files or [])], check_text_file)
    if streamable(train_files, validation_files):
        return TextCorpus(train_files, validation_files, text_column, validation_split_percentage, streaming=streaming)
    train, validation = load_corpus(
        train_files, validation_files, text_column=text_column, streaming=streaming,
        validation_split_percentage=validation_split_percentage, **hub,
    )  # fmt: skip
    return DatasetCorpus(train, validation)


def pack_windows(documents, tokenizer, window: int, num_workers: int | None = None):
    """Tokenizes a `datasets` corpus (a `text` column) and packs it into `window`-token windows, each batch of 1,000
    documents joined in order and its last partial window dropped (as transformers' run_clm packs)."""
    dtype = token_dtype(len(tokenizer))

    def tokenize_and_pack(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        if None in batch["text"]:
            row = indices[batch["text"].index(None)]
            raise ValueError(f"Corpus row {row + 1} has no text (null); fill it in or drop the row.")
        ids = tokenizer(batch["text"], add_special_tokens=False)["input_ids"]
        stream = np.concatenate([np.zeros(0, dtype), *(np.asarray(i, dtype) for i in ids)])
        return {"input_ids": list(stream[: len(stream) // window * window].reshape(-1, window))}

    features = window_features(window, len(tokenizer))
    if isinstance(documents, datasets.IterableDataset):
        return documents.map(
            tokenize_and_pack, batched=True, batch_size=1000, remove_columns=["text"], features=features,
            with_indices=True,
        )  # fmt: skip
    return documents.map(
        tokenize_and_pack, batched=True, batch_size=1000, remove_columns=["text"], features=features,
        with_indices=True, num_proc=num_workers if num_workers and num_workers > 1 else None,
        desc="Tokenizing and packing",
    ).with_format("numpy")  # fmt: skip
