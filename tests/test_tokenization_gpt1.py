# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests of hf_gpt1.tokenization_gpt1: faithfulness to the original GPT-1 pipeline, special tokens, save/load."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_gpt1.tokenization_gpt1 import (
    GPT1_SPECIAL_TOKENS,
    add_gpt1_special_tokens,
    from_openai_gpt_files,
    gpt1_standardize,
    original_tokenizer,
    text_standardize,
    train_gpt1_tokenizer,
)
from tests.utils import REPO_ROOT, SHARED_DATA, shared_data

SPECIAL_IDS = {"start": 40478, "delimiter": 40479, "extract": 40480, "pad": 40481}


def _load_reference_module():
    """benchmarks/tokenizer_agreement.py holds the reference (original text_utils) encoder; it is not a package."""
    spec = importlib.util.spec_from_file_location(
        "tokenizer_agreement", REPO_ROOT / "benchmarks" / "tokenizer_agreement.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _original():
    bpe = SHARED_DATA / "gpt1_bpe"
    return original_tokenizer(bpe / "encoder_bpe_40000.json", bpe / "vocab_40000.bpe")


@cache
def _reference():
    bpe = SHARED_DATA / "gpt1_bpe"
    return _load_reference_module().OriginalEncoder(bpe / "encoder_bpe_40000.json", bpe / "vocab_40000.bpe")


@pytest.fixture(scope="module")
def tok():
    shared_data("gpt1_bpe", "encoder_bpe_40000.json")
    return _original()


@pytest.fixture(scope="module")
def ref():
    shared_data("gpt1_bpe", "encoder_bpe_40000.json")
    return _reference()


def _words(tokenizer, text: str) -> list[str]:
    """The words our tokenizer hands to BPE (normalizer + pre-tokenizer)."""
    backend = tokenizer.backend_tokenizer
    return [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(backend.normalizer.normalize_str(text))]


def _has_spacy() -> bool:
    return importlib.util.find_spec("spacy") is not None


# Expected words, derived by hand from the original rules: text_standardize spaces runs of -~!";?+,)(\/*[]}{|_ and
# maps — – ― to -, … to ...; spaCy's English exceptions split contractions (`ca n't`, `i 'm`, `gon na`) and keep
# abbreviations (`mr.`, `u.s.`); its suffix rules split a final `.` after a lower-case letter or digit, `'s`, `%`
# after a number; its prefixes split `$`, `<`, quotes; its infixes split `.` between a lower-case and an upper-case
# letter; symbols (So) are split off everywhere; then everything is lower-cased.
HAND_EXAMPLES = {
    "hello world": ["hello", "world"],
    "isn't": ["is", "n't"],
    "I don't know": ["i", "do", "n't", "know"],
    "We can't go": ["we", "ca", "n't", "go"],
    "I'm here, you're there.": ["i", "'m", "here", ",", "you", "'re", "there", "."],
    "We're gonna win": ["we", "'re", "gon", "na", "win"],
    "Mr. Smith's car.": ["mr.", "smith", "'s", "car", "."],
    "U.S. troops left Iraq.": ["u.s.", "troops", "left", "iraq", "."],
    "wait—what–now―ok": ["wait", "-", "what", "-", "now", "-", "ok"],
    "so…": ["so", "..."],
    "a--b ~~ c/d": ["a", "--", "b", "~~", "c", "/", "d"],
    "wow!!! really??": ["wow", "!", "!", "!", "really", "?", "?"],
    "Café au lait, naïve façade": ["café", "au", "lait", ",", "naïve", "façade"],
    "line one\n\n  line two\n": ["line", "one", "\n", "line", "two"],
    "3.5 million, 1,000 people": ["3.5", "million", ",", "1", ",", "000", "people"],
    "$20 and 80%": ["$", "20", "and", "80", "%"],
    "“Quoted” ‘single’": ['"', "quoted", '"', "'", "single", "'"],
    "a <unk> token": ["a", "<", "unk", ">", "token"],
    "end.The start": ["end", ".", "the", "start"],
    "I ❤ NY 😀": ["i", "❤", "ny", "😀"],
    "tabs\tand\u00a0spaces": ["tabs", "and", "spaces"],
    "(parenthesised) [bracketed] {braced}": ["(", "parenthesised", ")", "[", "bracketed", "]", "{", "braced", "}"],
}


@pytest.mark.parametrize("text", list(HAND_EXAMPLES))
def test_hand_examples_words(tok, text):
    assert _words(tok, text) == HAND_EXAMPLES[text]


@pytest.mark.skipif(not _has_spacy(), reason="spaCy (benchmark-only dependency) is not installed")
@pytest.mark.parametrize("text", list(HAND_EXAMPLES))
def test_hand_examples_against_original_pipeline(tok, ref, text):
    # the hand-derived words are the original pipeline's (ftfy + text_standardize + spaCy + lower) ... (spaCy's
    # newline token is "\n ", which the original BPE special-cases to "\n</w>")
    assert ["\n" if w == "\n " else w.lower() for w in ref.words(text)] == HAND_EXAMPLES[text]
    # ... and so are the ids, with and without our ftfy helper
    assert tok(text, add_special_tokens=False)["input_ids"] == ref.encode(text)
    assert tok(gpt1_standardize(text), add_special_tokens=False)["input_ids"] == ref.encode(text)


@pytest.mark.parametrize("text", list(HAND_EXAMPLES))
def test_ids_are_the_original_bpe_ids(tok, ref, text):
    """Whatever the words, each is encoded by the original BPE algorithm with the original ids (unknown -> 0)."""
    expected = [ref.encoder.get(t, 0) for w in HAND_EXAMPLES[text] for t in ref.bpe(w).split(" ")]
    assert tok(text, add_special_tokens=False)["input_ids"] == expected


def test_hello_world(tok):
    assert tok.tokenize("hello world") == ["hello</w>", "world</w>"]
    encoder = json.loads((SHARED_DATA / "gpt1_bpe" / "encoder_bpe_40000.json").read_text(encoding="utf-8"))
    assert tok("hello world", add_special_tokens=False)["input_ids"] == [encoder["hello</w>"], encoder["world</w>"]]
    # a decoded text continues the text before it: a word starts with a space (see test_decode_reads_as_text)
    assert tok.decode(tok("hello world", add_special_tokens=False)["input_ids"]) == " hello world"


def test_unknown_symbols_map_to_id_0(tok, ref):
    # "😀" is not in the 40,478-token vocabulary: the original gives encoder.get("😀</w>", 0) == 0
    assert "😀</w>" not in ref.encoder and ref.encoder["<unk>"] == 0
    assert tok("😀", add_special_tokens=False)["input_ids"] == [0]
    # the literal text "<unk>" is NOT the unknown token: the original splits it into <, unk, >
    assert tok.tokenize("<unk>") == ["<</w>", "unk</w>", "></w>"]


def test_text_standardize_is_the_original():
    assert text_standardize("a—b … c´s  \n\n d!!e") == "a - b ... c's \n d !! e"


def test_special_tokens_order_and_ids(tok):
    assert len(tok) == 40482
    assert tok.convert_ids_to_tokens([40478, 40479, 40480, 40481]) == ["_start_", "_delimiter_", "_classify_", "<pad>"]
    assert tok.pad_token == "<pad>" and tok.pad_token_id == 40481
    assert (tok.start_token_id, tok.delimiter_token_id, tok.extract_token_id) == (40478, 40479, 40480)
    assert (tok.start_token, tok.delimiter_token, tok.extract_token) == ("_start_", "_delimiter_", "_classify_")
    assert add_gpt1_special_tokens(tok) == SPECIAL_IDS


def test_add_special_tokens_is_idempotent(tok):
    before = (len(tok), tok("a", "b")["input_ids"], tok.get_vocab(), list(tok.extra_special_tokens))
    for _ in range(2):
        assert add_gpt1_special_tokens(tok) == SPECIAL_IDS
    assert (len(tok), tok("a", "b")["input_ids"], tok.get_vocab(), list(tok.extra_special_tokens)) == before


def test_templates(tok):
    a = tok("hello world", add_special_tokens=False)["input_ids"]
    b = tok("how are you?", add_special_tokens=False)["input_ids"]
    assert tok("hello world")["input_ids"] == [40478, *a, 40480]
    assert tok("hello world", "how are you?")["input_ids"] == [40478, *a, 40479, *b, 40480]
    assert "token_type_ids" not in tok("hello world", "how are you?")  # GPT-1 has no segment embeddings
    batch = tok(["hello world", "hi"], padding=True, return_tensors="pt")
    assert batch["input_ids"][1].tolist() == [40478, *tok("hi", add_special_tokens=False)["input_ids"], 40480, 40481]
    assert batch["attention_mask"][1].tolist() == [1, 1, 1, 0]
    assert tok.decode(tok("hello world")["input_ids"], skip_special_tokens=True) == " hello world"


_LOAD_SCRIPT = r"""
import json, sys
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1], trust_remote_code=True)  # the GPT1Tokenizer saved beside it
texts = json.loads(sys.argv[2])
print(json.dumps({
    "class": type(tok).__name__,
    "hf_gpt1_imported": any(m.split(".")[0] == "hf_gpt1" for m in sys.modules),
    "single": [tok(t)["input_ids"] for t in texts],
    "pair": tok(texts[0], texts[1])["input_ids"],
    "raw": [tok(t, add_special_tokens=False)["input_ids"] for t in texts],
    "len": len(tok),
    "pad": [tok.pad_token, tok.pad_token_id],
    "named": [tok.start_token_id, tok.delimiter_token_id, tok.extract_token_id],
    "input_names": tok.model_input_names,
}))
"""


def _load_in_subprocess(directory: Path, texts: list[str]) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_SCRIPT, str(directory), json.dumps(texts)],
        capture_output=True,
        text=True,
        env=env,
        cwd=directory,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_save_pretrained_autotokenizer_round_trip(tok, tmp_path):
    texts = ["I can't believe it isn't Mr. Smith's car!", "Line one\nline two — “quoted” café…"]
    tok.save_pretrained(tmp_path)
    loaded = _load_in_subprocess(tmp_path, texts)  # a fresh interpreter that never imports hf_gpt1
    assert not loaded["hf_gpt1_imported"]
    assert loaded["single"] == [tok(t)["input_ids"] for t in texts]
    assert loaded["pair"] == tok(texts[0], texts[1])["input_ids"]
    assert loaded["raw"] == [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    assert loaded["len"] == 40482
    assert loaded["pad"] == ["<pad>", 40481]
    assert loaded["named"] == [40478, 40479, 40480]
    assert loaded["input_names"] == ["input_ids", "attention_mask"]
    assert loaded["class"] == "GPT1Tokenizer"


def test_from_openai_gpt_files(tok, tmp_path):
    bpe = shared_data("gpt1_bpe")
    # transformers' openai-gpt files: vocab.json (token -> id) and merges.txt (version line + merges)
    (tmp_path / "vocab.json").write_text(
        (bpe / "encoder_bpe_40000.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "merges.txt").write_text((bpe / "vocab_40000.bpe").read_text(encoding="utf-8"), encoding="utf-8")
    for source in (tmp_path, tmp_path / "vocab.json"):
        other = from_openai_gpt_files(source)
        assert other.get_vocab() == tok.get_vocab()
        for text in HAND_EXAMPLES:
            assert other(text)["input_ids"] == tok(text)["input_ids"]


def _synthetic_corpus(n_lines: int = 2000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sta", "pe", "dor", "vin", "chu", "ex", "qua"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    words += ["the", "a", "of", "and", "to", "it's", "don't", "Mr.", "U.S."]
    punct = [".", ",", "!", "?", ";", " —", "…"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 20))) + rng.choice(punct) for _ in range(n_lines)]


@pytest.fixture(scope="module")
def trained():
    return train_gpt1_tokenizer(_synthetic_corpus(), vocab_size=600)


def test_trained_tokenizer_layout(trained):
    vocab = trained.get_vocab()
    n = len(trained)
    assert n == 604
    assert [trained.convert_ids_to_tokens(i) for i in range(n - 4, n)] == list(GPT1_SPECIAL_TOKENS.values())
    assert trained.convert_ids_to_tokens(0) == "<unk>"
    assert trained("😀 ka", add_special_tokens=False)["input_ids"][0] == 0  # unknown -> 0, as in the original
    assert any(t.endswith("</w>") for t in vocab)
    assert all(t == t.lower() for t in vocab)
    assert trained("kalo mi")["input_ids"][0] == n - 4 and trained("kalo mi")["input_ids"][-1] == n - 2


def test_trained_tokenizer_round_trip(trained, tmp_path):
    text = "Kalo mine, don't rusta!"
    ids = trained(text, add_special_tokens=False)["input_ids"]
    assert trained.decode(ids) == " kalo mine, don't rusta!"
    assert _words(trained, text) == ["kalo", "mine", ",", "do", "n't", "rusta", "!"]
    trained.save_pretrained(tmp_path)
    loaded = _load_in_subprocess(tmp_path, [text, "mi ne"])
    assert loaded["raw"][0] == ids
    assert loaded["single"] == [trained(t)["input_ids"] for t in (text, "mi ne")]
    assert loaded["pad"] == ["<pad>", len(trained) - 1]


@pytest.mark.slow  # the full tier (scripts/test.sh --all): megabytes of text
def test_train_a_few_megabytes():
    text_dir = shared_data("text")
    paths = [text_dir / "wikitext-2" / "valid.txt", text_dir / "wikitext-2" / "test.txt"]
    paths.append(text_dir / "tinyshakespeare" / "input.txt")
    texts = [line for path in paths for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert sum(map(len, texts)) > 3_000_000
    tokenizer = train_gpt1_tokenizer(texts, vocab_size=8000)
    assert len(tokenizer) == 8004
    text = "The king's men didn't go."
    assert _words(tokenizer, text) == ["the", "king", "'s", "men", "did", "n't", "go", "."]
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == " the king's men didn't go."


def test_resize_draws_new_rows_from_normal_and_keeps_tied(trained):
    from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel

    base = len(trained) - 4  # the model knows the BPE vocabulary; add_gpt1_special_tokens adds the 4 special rows
    config = OpenAIGPTConfig(vocab_size=base, n_positions=16, n_embd=32, n_layer=1, n_head=2, initializer_range=0.02)
    model = OpenAIGPTLMHeadModel(config)
    with torch.no_grad():  # old rows far from 0, so that a mean-of-old-rows init would be obvious
        model.get_input_embeddings().weight.normal_(3.0, 0.02)
    old = model.get_input_embeddings().weight.detach().clone()

    ids = add_gpt1_special_tokens(trained, model)

    n = len(trained)
    weight = model.get_input_embeddings().weight
    assert ids == {"start": n - 4, "delimiter": n - 3, "extract": n - 2, "pad": n - 1}
    assert weight.shape == (n, 32) and model.config.vocab_size == n
    torch.testing.assert_close(weight[:base], old)
    new = weight[base:].detach()  # 4 new rows of 32
    assert abs(new.mean().item()) < 0.01
    assert new.std().item() == pytest.approx(0.02, rel=0.25)
    assert (new - old.mean(0)).abs().mean() > 2.0  # not transformers' mean-of-old-rows init
    assert model.get_output_embeddings().weight.data_ptr() == weight.data_ptr()
    assert (model.config.start_token_id, model.config.delimiter_token_id) == (n - 4, n - 3)
    assert (model.config.extract_token_id, model.config.pad_token_id) == (n - 2, n - 1)
    # idempotent: a second call neither resizes nor re-draws
    before = weight.detach().clone()
    assert add_gpt1_special_tokens(trained, model) == ids
    torch.testing.assert_close(model.get_input_embeddings().weight, before)


@pytest.mark.skipif(not _has_spacy(), reason="spaCy (benchmark-only dependency) is not installed")
def test_agreement_on_real_sentences(tok, ref):
    """A sample of the benchmark: RTE sentences, token ids identical to the original pipeline's."""
    bench = _load_reference_module()
    shared_data("glue", "RTE")
    texts = bench.load_corpora(sst2_train=0, limit=300)["RTE"]
    ours = tok(texts, add_special_tokens=False)["input_ids"]
    agree = sum(ref.encode(t) == o for t, o in zip(texts, ours))
    assert agree / len(texts) >= 0.99


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=120))
def test_arbitrary_unicode_never_crashes(text):
    if not (SHARED_DATA / "gpt1_bpe").exists():
        pytest.skip(f"real data {SHARED_DATA / 'gpt1_bpe'} is absent")
    tokenizer = _original()
    ids = tokenizer(text)["input_ids"]
    assert ids[0] == 40478 and ids[-1] == 40480
    assert all(0 <= i < len(tokenizer) for i in ids)
    tokenizer.decode(ids)
    pair = tokenizer(text, text[::-1] + "x")["input_ids"]
    assert pair.count(40479) >= 1 and all(0 <= i < len(tokenizer) for i in pair)


def test_a_tokenizer_of_another_checkpoint_is_refused(trained):
    from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel

    model = OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=200, n_positions=16, n_embd=32, n_layer=1, n_head=2))
    with pytest.raises(ValueError, match="has 604 tokens .* embedding table has 200 rows: they come from different"):
        add_gpt1_special_tokens(trained, model)
    assert model.get_input_embeddings().weight.shape[0] == 200  # nothing was resized


def test_decode_reads_as_text(tok):
    """What spaCy and text_standardize split is joined again; what they lost (case, quote spacing) stays lost."""
    for text, expected in [
        ("The government's plan, they said, wasn't (really) new -- or was it?",
         " the government's plan, they said, wasn't (really) new -- or was it?"),
        ("He paid $5 for a well-known book... and/or a pen.\nNew line.",
         " he paid $5 for a well-known book... and/or a pen.\nnew line."),
        ("I'm gonna say \"hello\" to you. Can't stop: 50% off!",
         ' i\'m gonna say " hello " to you. can\'t stop: 50% off!'),
    ]:  # fmt: skip
        assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == expected
    # a continuation that attaches to the word before it starts without a space
    assert tok.decode(tok("'s plan", add_special_tokens=False)["input_ids"]) == "'s plan"
    assert tok.decode(tok(", then", add_special_tokens=False)["input_ids"]) == ", then"
    assert tok.decode([]) == ""


def test_task_inputs_truncate_by_default_raw_text_never(tok):
    long = " ".join(["word"] * 600)
    full = tok(long, long, truncation=False)["input_ids"]
    assert len(full) > 512
    tok_max = tok.model_max_length
    try:
        tok.model_max_length = 512
        ids = tok(long, long)["input_ids"]  # the template's call: truncated like the recipes' collators
        assert len(ids) == 512 and ids == tok(long, long, truncation="longest_first", max_length=512)["input_ids"]
        assert len(tok(long, add_special_tokens=False)["input_ids"]) == 600  # raw text (LM, segments): untouched
        assert len(tok(long, long, truncation=False)["input_ids"]) == len(full)
    finally:
        tok.model_max_length = tok_max


def test_training_a_tokenizer_twice_gives_the_same_ids():
    """The `tokenizers` trainer numbers word-final symbols in a per-training hash order; ours trains with the alphabet
    numbered in sorted order, so that the same texts always give the same vocabulary (and one seed one model)."""
    import random

    from hf_gpt1 import train_gpt1_tokenizer

    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 7))) for _ in range(400)]
    texts = [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(300)]
    first, second = train_gpt1_tokenizer(texts, 200), train_gpt1_tokenizer(texts, 200)
    assert first.get_vocab() == second.get_vocab()
    assert first(texts[0])["input_ids"] == second(texts[0])["input_ids"]
    assert first.decode(first(texts[0], add_special_tokens=False)["input_ids"]).strip() == texts[0]
    with pytest.raises(TypeError, match="reads the texts twice"):
        train_gpt1_tokenizer(iter(texts), 200)


@pytest.mark.slow  # the full tier (scripts/test.sh --all): several processes
def test_a_trained_tokenizer_is_saved_as_the_same_file_in_every_process(tmp_path):
    """Python's string hashing differs per process (PYTHONHASHSEED): no part of the saved tokenizer may follow it."""
    code = (
        "import sys; from hf_gpt1 import train_gpt1_tokenizer; "
        "texts = [f'word{i % 37} and the {i % 11}th, said Mr. Smith.' for i in range(300)]; "
        "train_gpt1_tokenizer(texts, 120).save_pretrained(sys.argv[1])"
    )
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / seed)], check=True, env=env, cwd=REPO_ROOT)
    assert (tmp_path / "1" / "tokenizer.json").read_text() == (tmp_path / "2" / "tokenizer.json").read_text()
