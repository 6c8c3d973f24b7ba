# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Sentence-level agreement of GPT-1 tokenizers with the ORIGINAL GPT-1 pipeline.

Reference (openai/finetune-transformer-lm, `text_utils.TextEncoder.encode`): `ftfy.fix_text` -> `text_standardize` ->
spaCy English tokenizer (`spacy.blank("en")`, the same tokenizer rules as the original `spacy.load("en")`) ->
`lower()` -> the original BPE with `</w>` -> ids, unknown -> 0.

Compared, sentence by sentence (exact equality of the id sequences):
  * ours, raw text           `original_tokenizer(...)(text, add_special_tokens=False)`
  * ours, with ftfy          `original_tokenizer(...)(gpt1_standardize(text), add_special_tokens=False)`
  * transformers             `OpenAIGPTTokenizer` built from vocab.json / merges.txt written from the original files

Corpora: SST-2 (dev + the first N train sentences), RTE (sentence1/sentence2 of train + dev), WikiText-2 valid
(non-empty, non-heading lines). Needs spaCy (`pip install spacy`, benchmark-only) and ../shared/data.

    HF_HUB_OFFLINE=1 python benchmarks/tokenizer_agreement.py --out docs/tokenizer_agreement.json
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))

from hf_gpt1.tokenization_gpt1 import gpt1_standardize, original_tokenizer, text_standardize  # noqa: E402


class OriginalEncoder:
    """`text_utils.TextEncoder` of the original code (spaCy 3 `blank("en")` instead of the spaCy 2 `load("en")`)."""

    def __init__(self, encoder_path: Path, bpe_path: Path) -> None:
        self._nlp = None
        self.encoder = json.loads(encoder_path.read_text(encoding="utf-8"))
        merges = bpe_path.read_text(encoding="utf-8").split("\n")[1:-1]
        self.bpe_ranks = {tuple(m.split()): i for i, m in enumerate(merges)}
        self.cache: dict[str, str] = {}

    def bpe(self, token: str) -> str:
        if token in self.cache:
            return self.cache[token]
        word = tuple(token[:-1]) + (token[-1] + "</w>",)
        pairs = {(a, b) for a, b in zip(word, word[1:])}
        if not pairs:
            return token + "</w>"
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word: list[str] = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = {(a, b) for a, b in zip(word, word[1:])}
        out = " ".join(word)
        if out == "\n  </w>":
            out = "\n</w>"
        self.cache[token] = out
        return out

    @property
    def nlp(self):
        if self._nlp is None:
            import spacy

            self._nlp = spacy.blank("en")
        return self._nlp

    def words(self, text: str) -> list[str]:
        """ftfy + text_standardize + spaCy words (before lower-casing)."""
        import ftfy

        return [t.text for t in self.nlp(text_standardize(ftfy.fix_text(text)))]

    def encode(self, text: str) -> list[int]:
        return [self.encoder.get(t, 0) for w in self.words(text) for t in self.bpe(w.lower()).split(" ")]


def _rows(path: Path):
    with open(path, newline="", encoding="utf-8") as f:
        yield from csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)


def load_corpora(sst2_train: int, limit: int | None) -> dict[str, list[str]]:
    glue = DATA / "glue"
    sst2 = [r["sentence"] for r in _rows(glue / "SST-2" / "dev.tsv")]
    sst2 += [r["sentence"] for _, r in zip(range(sst2_train), _rows(glue / "SST-2" / "train.tsv"))]
    rte = [
        r[k]
        for split in ("train", "dev")
        for r in _rows(glue / "RTE" / f"{split}.tsv")
        for k in ("sentence1", "sentence2")
    ]
    wiki = []
    for line in (DATA / "text" / "wikitext-2" / "valid.txt").read_text(encoding="utf-8").split("\n"):
        if line.strip() and not line.strip().startswith("="):
            wiki.append(line)
    corpora = {"SST-2": sst2, "RTE": rte, "WikiText-2": wiki}
    return {k: v[:limit] if limit else v for k, v in corpora.items()}


def transformers_tokenizer(encoder_path: Path, bpe_path: Path, tmp: Path):
    from transformers import OpenAIGPTTokenizer

    (tmp / "vocab.json").write_text(encoder_path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp / "merges.txt").write_text(bpe_path.read_text(encoding="utf-8"), encoding="utf-8")
    return OpenAIGPTTokenizer(vocab=str(tmp / "vocab.json"), merges=str(tmp / "merges.txt"))


def _diff(ref: list[str], got: list[str]) -> str:
    """A short description of the first difference between two word/token lists."""
    i = 0
    while i < min(len(ref), len(got)) and ref[i] == got[i]:
        i += 1
    j = 0
    while j < min(len(ref), len(got)) - i and ref[-1 - j] == got[-1 - j]:
        j += 1
    return f"{' '.join(ref[i : len(ref) - j])!r} -> {' '.join(got[i : len(got) - j])!r}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="at most this many sentences per corpus")
    parser.add_argument("--sst2-train", type=int, default=3000, help="SST-2 train sentences added to the dev set")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--show", type=int, default=15, help="residual disagreement categories to print")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"no data at {DATA}")
    bpe_dir = DATA / "gpt1_bpe"
    enc_path, bpe_path = bpe_dir / "encoder_bpe_40000.json", bpe_dir / "vocab_40000.bpe"

    ref = OriginalEncoder(enc_path, bpe_path)
    ours = original_tokenizer(enc_path, bpe_path)
    with tempfile.TemporaryDirectory() as tmp:
        hf = transformers_tokenizer(enc_path, bpe_path, Path(tmp))
    systems = {
        "ours (raw text)": lambda texts: ours(texts, add_special_tokens=False)["input_ids"],
        "ours (+ftfy)": lambda texts: ours([gpt1_standardize(t) for t in texts], add_special_tokens=False)[
            "input_ids"
        ],
        "transformers OpenAIGPTTokenizer": lambda texts: hf(texts, add_special_tokens=False)["input_ids"],
    }
    results: dict = {"corpora": {}, "overall": {}}
    residuals: dict[str, collections.Counter] = {name: collections.Counter() for name in systems}
    examples: dict[str, dict[str, str]] = {name: {} for name in systems}
    totals = collections.Counter()
    for corpus, texts in load_corpora(args.sst2_train, args.limit).items():
        t0 = time.perf_counter()
        reference = [ref.encode(t) for t in texts]
        results["corpora"][corpus] = {"sentences": len(texts), "reference_seconds": time.perf_counter() - t0}
        totals["sentences"] += len(texts)
        for name, encode in systems.items():
            t0 = time.perf_counter()
            ids = encode(texts)
            seconds = time.perf_counter() - t0
            agree = sum(a == b for a, b in zip(reference, ids))
            totals[name] += agree
            results["corpora"][corpus][name] = {"agree": agree, "rate": agree / len(texts), "seconds": seconds}
            for text, r, o in zip(texts, reference, ids):
                if r != o:
                    key = _diff(ours.convert_ids_to_tokens(r), ours.convert_ids_to_tokens(o))
                    residuals[name][key] += 1
                    examples[name].setdefault(key, text.strip()[:200])
    for name in systems:
        results["overall"][name] = {"agree": totals[name], "rate": totals[name] / totals["sentences"]}
    results["overall"]["sentences"] = totals["sentences"]
    results["residuals"] = {
        name: [{"diff": k, "count": c, "example": examples[name][k]} for k, c in residuals[name].most_common(50)]
        for name in systems
    }

    names = list(systems)
    print(f"{'corpus':<12} {'sentences':>9}  " + "  ".join(f"{n:>32}" for n in names))
    for corpus, r in results["corpora"].items():
        cells = "  ".join(f"{r[n]['rate']:>31.2%} " for n in names)
        print(f"{corpus:<12} {r['sentences']:>9}  {cells}")
    cells = "  ".join(f"{results['overall'][n]['rate']:>31.2%} " for n in names)
    print(f"{'overall':<12} {totals['sentences']:>9}  {cells}")
    for name in names[:2]:
        print(f"\nresidual disagreements, {name} (reference tokens -> ours), most frequent first:")
        for item in results["residuals"][name][: args.show]:
            print(f"  {item['count']:>5}  {item['diff']}    e.g. {item['example'][:90]!r}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
