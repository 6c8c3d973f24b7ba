# Copyright 2026 The hf_gpt1 authors.
# SPDX-License-Identifier: Apache-2.0
# Copyright 2025 The hf_gpt1 authors. Licensed under the Apache License, Version 2.0.
"""GPT-1 tokenizers (Radford et al., 2018), all backed by 🤗 `tokenizers` and returned as `PreTrainedTokenizerFast`.

The original pipeline (`ftfy.fix_text` → `text_standardize` → spaCy's English tokenizer → lower-case → BPE with
`</w>`) is re-expressed with saveable `tokenizers` components (a normalizer with the character mappings, the
standardisation and spaCy's rules as regex replacements; a whitespace pre-tokenizer; the original BPE with unknown →
id 0), so `save_pretrained` / `AutoTokenizer.from_pretrained` round-trip it with no custom code and no spaCy.
[`gpt1_standardize`] adds ftfy's data-dependent repairs for the faithful pipeline. docs/TOKENIZATION.md says what each
step does and what is left out; benchmarks/tokenizer_agreement.py measures the agreement with the original.

The tokenizer exception table below is derived from spaCy's English tokenizer exceptions (spaCy 3.8, MIT licence),
restricted to the entries that can still be a whole word after `text_standardize` and quote uncurling.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import PreTrainedTokenizerFast

from .formats import SPECIAL_TOKENS

__all__ = [
    "GPT1_SPECIAL_TOKENS",
    "NO_LENGTH_LIMIT",
    "GPT1Tokenizer",
    "add_gpt1_special_tokens",
    "from_openai_gpt_files",
    "gpt1_decoder",
    "gpt1_normalizer",
    "gpt1_pre_tokenizer",
    "gpt1_standardize",
    "load_gpt1_tokenizer",
    "original_tokenizer",
    "text_standardize",
    "train_gpt1_tokenizer",
]

UNK_TOKEN = "<unk>"
END_OF_WORD_SUFFIX = "</w>"
GPT1_SPECIAL_TOKENS = SPECIAL_TOKENS  # the special tokens appended after the BPE vocabulary, in order (formats.py)
_MODEL_INPUT_NAMES = ["input_ids", "attention_mask"]
NO_LENGTH_LIMIT = 1_000_000
"""`model_max_length` at or above this means "no limit" (transformers' sentinel is int(1e30))."""


# --------------------------------------------------------------------------------------------------------------------
# Rule data
# --------------------------------------------------------------------------------------------------------------------

# `ftfy.fixes.fix_latin_ligatures` (ftfy 6), applied by `ftfy.fix_text` by default.
_FTFY_LIGATURES = {
    "Ĳ": "IJ", "ĳ": "ij", "ŉ": "ʼn", "Ǳ": "DZ", "ǲ": "Dz", "ǳ": "dz", "Ǆ": "DŽ", "ǅ": "Dž", "ǆ": "dž", "Ǉ": "LJ",
    "ǈ": "Lj", "ǉ": "lj", "Ǌ": "NJ", "ǋ": "Nj", "ǌ": "nj", "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl",
    "ﬅ": "ſt", "ﬆ": "st",
}  # fmt: skip
# `ftfy.chardata.CONTROL_CHARS`, removed by `ftfy.fix_text` by default.
_FTFY_CONTROL_CLASS = "\\x{0}-\\x{8}\\x{b}\\x{e}-\\x{1f}\\x{7f}\\x{206a}-\\x{206f}\\x{feff}\\x{fff9}-\\x{fffc}"
# Python's `\s` (str.isspace) minus "\n": text_standardize turns all of it into single spaces.
_PY_SPACE_CLASS = (
    "\\t\\x{b}\\x{c}\\r\\x{1c}-\\x{1f} \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}"
    "\\x{205f}\\x{3000}"
)
# text_standardize puts spaces around runs of these characters.
_RUN_CHARS = '-~!";?+,)(\\/*[]}{|_'
# ... and spaCy then splits the runs of these ones into single characters (they are spaCy prefixes); runs of
# `- ~ \ / |` stay whole words.
_SPLIT_RUN_CHARS = '!";?+,)(*[]}{_'

# spaCy's `spacy.lang.char_classes` (3.8): LIST_PUNCT, CONCAT_QUOTES, LIST_CURRENCY, UNITS.
_PUNCT = "…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪"
_QUOTES = "'\"”“`‘´’‚,„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧"
_CURRENCY = "$ £ € ¥ ฿ US$ C$ A$ ₽ ﷼ ₴ ₠ ₡ ₢ ₣ ₤ ₥ ₦ ₧ ₨ ₩ ₪ ₫ € ₭ ₮ ₯ ₰ ₱ ₲ ₳ ₴ ₵ ₶ ₷ ₸ ₹ ₺ ₻ ₼ ₽ ₾ ₿".split()
_UNITS = (
    "km km² km³ m m² m³ dm dm² dm³ cm cm² cm³ mm mm² mm³ ha µm nm yd in ft kg g mg µg t lb oz m/s km/h kmh mph hPa Pa "
    "mbar mb MB kb KB gb GB tb TB T G M K % км км² км³ м м² м³ дм дм² дм³ см см² см³ мм мм² мм³ нм кг г мг м/с км/ч "
    "кПа Па мбар Кб КБ кб Мб МБ мб Гб ГБ гб Тб ТБ тбكم كم² كم³ م م² م³ سم سم² سم³ مم مم² مم³ "
    "كم غرام جرام جم كغ ملغ كوب اكواب"
).split()
# spaCy's alphabet classes, approximated by Unicode categories (spaCy lists the uncased scripts in both cases).
_LOWER = "\\p{Ll}\\p{Lo}"
_UPPER = "\\p{Lu}\\p{Lo}"
_ALPHA = "\\p{L}"
_ICON = "\\p{So}"

# spaCy's English tokenizer exceptions that can still be a whole word here; "|" marks the token boundaries.
_SPACY_EN_EXCEPTIONS = (
    "' '' 'Cause 'Cos 'Coz 'Cuz 'S 'bout 'cause 'cos 'coz 'cuz 'd 'em 'll 'nuff 're 's 0.0 0.o 10|a.m. "
    "10|am 10|p.m. 10|pm 11|a.m. 11|am 11|p.m. 11|pm 12|a.m. 12|am 12|p.m. 12|pm 1|a.m. 1|am 1|p.m. 1|pm "
    "2|a.m. 2|am 2|p.m. 2|pm 3|a.m. 3|am 3|p.m. 3|pm 4|a.m. 4|am 4|p.m. 4|pm 5|a.m. 5|am 5|p.m. 5|pm "
    "6|a.m. 6|am 6|p.m. 6|pm 7|a.m. 7|am 7|p.m. 7|pm 8D 8|a.m. 8|am 8|p.m. 8|pm 9|a.m. 9|am 9|p.m. 9|pm "
    ":0 :1 :3 :> :D :O :P :X :o :p :x <.< <3 <33 <333 <space> =3 =D >.< >.> >:o Adm. Ai|n't Ai|nt Ak. "
    "Ala. Apr. Are|n't Are|nt Ariz. Ark. Aug. Bros. C'm|on Calif. Ca|n't Ca|n't|'ve Can|not Ca|nt "
    "Ca|nt|ve Co. Colo. Conn. Corp. Could|'ve Could|n't Could|n't|'ve Could|nt Could|nt|ve Could|ve D.C. "
    "Dare|n't Dare|nt Dec. Del. Did|n't Did|n't|'ve Did|nt Did|nt|ve Does|n't Does|n't|'ve Does|nt "
    "Does|nt|ve Doin' Do|n't Do|n't|'ve Do|nt Do|nt|ve Dr. E.G. E.g. Feb. Fla. Ga. Gen. Goin' Gon|na "
    "Got|ta Gov. Had|n't Had|n't|'ve Had|nt Had|nt|ve Has|n't Has|nt Have|n't Have|nt Havin' He|'d "
    "He|'d|'ve He|'ll He|'ll|'ve He|'s He|d He|d|ve He|ll|ve He|s How|'d How|'d|'ve How|'d|'y How|'ll "
    "How|'ll|'ve How|'re How|'s How|'ve How|d How|d|ve How|ll How|ll|ve How|re How|s How|ve I|'d I|'d|'ve "
    "I|'ll I|'ll|'ve I|'m I|'m|a I|'ve I.E. I.e. Ia. I|d Id. I|d|ve Ill. I|ll|ve I|m I|m|a Inc. Ind. "
    "Is|n't Is|nt It|'d It|'d|'ve It|'ll It|'ll|'ve It|'s It|d It|d|ve It|ll It|ll|ve I|ve Jan. Jr. Jul. "
    "Jun. Kan. Kans. Ky. La. Let|'s Lovin' Ltd. Ma'am Mar. Mass. May|n't May|n't|'ve May|nt May|nt|ve Md. "
    "Messrs. Mich. Might|'ve Might|n't Might|n't|'ve Might|nt Might|nt|ve Might|ve Minn. Miss. Mo. Mont. "
    "Mr. Mrs. Ms. Mt. Must|'ve Must|n't Must|n't|'ve Must|nt Must|nt|ve Must|ve N.C. N.D. N.H. N.J. N.M. "
    "N.Y. Neb. Nebr. Need|n't Need|n't|'ve Need|nt Need|nt|ve Nev. Not|'ve Nothin' Not|ve Nov. Nuthin' "
    "O'clock O.O O.o Oct. Okla. Ol' Ore. Ought|n't Ought|n't|'ve Ought|nt Ought|nt|ve Pa. Ph.D. Prof. "
    "Rep. Rev. S.C. Sen. Sep. Sept. Sha|n't Sha|n't|'ve Sha|nt Sha|nt|ve She|'d She|'d|'ve She|'ll "
    "She|'ll|'ve She|'s She|d|ve She|ll|ve She|s Should|'ve Should|n't Should|n't|'ve Should|nt "
    "Should|nt|ve Should|ve Somethin' St. Tenn. That|'d That|'d|'ve That|'ll That|'ll|'ve That|'s That|d "
    "That|d|ve That|ll That|ll|ve That|s There|'d There|'d|'ve There|'ll There|'ll|'ve There|'re There|'s "
    "There|'ve There|d There|d|ve There|ll There|ll|ve There|re There|s There|ve These|'d These|'d|'ve "
    "These|'ll These|'ll|'ve These|'re These|'ve These|d These|d|ve These|ll These|ll|ve These|re "
    "These|ve They|'d They|'d|'ve They|'ll They|'ll|'ve They|'re They|'ve They|d They|d|ve They|ll "
    "They|ll|ve They|re They|ve This|'d This|'d|'ve This|'ll This|'ll|'ve This|'s This|d This|d|ve "
    "This|ll This|ll|ve This|s Those|'d Those|'d|'ve Those|'ll Those|'ll|'ve Those|'re Those|'ve Those|d "
    "Those|d|ve Those|ll Those|ll|ve Those|re Those|ve V.V Va. Wash. Was|n't Was|nt We|'d We|'d|'ve "
    "We|'ll We|'ll|'ve We|'re We|'ve We|d We|d|ve We|ll|ve Were|n't Were|nt We|ve What|'d What|'d|'ve "
    "What|'ll What|'ll|'ve What|'re What|'s What|'ve What|d What|d|ve What|ll What|ll|ve What|re What|s "
    "What|ve When|'d When|'d|'ve When|'ll When|'ll|'ve When|'re When|'s When|'ve When|d When|d|ve When|ll "
    "When|ll|ve When|re When|s When|ve Where|'d Where|'d|'ve Where|'ll Where|'ll|'ve Where|'re Where|'s "
    "Where|'ve Where|d Where|d|ve Where|ll Where|ll|ve Where|re Where|s Where|ve Who|'d Who|'d|'ve "
    "Who|'ll Who|'ll|'ve Who|'re Who|'s Who|'ve Who|d Who|d|ve Who|ll Who|ll|ve Who|s Who|ve Why|'d "
    "Why|'d|'ve Why|'ll Why|'ll|'ve Why|'re Why|'s Why|'ve Why|d Why|d|ve Why|ll Why|ll|ve Why|re Why|s "
    "Why|ve Wis. Wo|n't Wo|n't|'ve Wo|nt Wo|nt|ve Would|'ve Would|n't Would|n't|'ve Would|nt Would|nt|ve "
    "Would|ve You|'d You|'d|'ve You|'ll You|'ll|'ve You|'re You|'ve You|d You|d|ve You|ll You|ll|ve "
    "You|re You|ve a. a.m. ai|n't ai|nt are|n't are|nt b. c'm|on c. ca|n't ca|n't|'ve can|not ca|nt "
    "ca|nt|ve co. could|'ve could|n't could|n't|'ve could|nt could|nt|ve could|ve d. dare|n't dare|nt "
    "did|n't did|n't|'ve did|nt did|nt|ve does|n't does|n't|'ve does|nt does|nt|ve doin' do|n't "
    "do|n't|'ve do|nt do|nt|ve e. e.g. f. g. goin' gon|na got|ta h. had|n't had|n't|'ve had|nt had|nt|ve "
    "has|n't has|nt have|n't have|nt havin' he|'d he|'d|'ve he|'ll he|'ll|'ve he|'s he|d he|d|ve he|ll|ve "
    "he|s how|'d how|'d|'ve how|'d|'y how|'ll how|'ll|'ve how|'re how|'s how|'ve how|d how|d|ve how|ll "
    "how|ll|ve how|re how|s how|ve i|'d i|'d|'ve i|'ll i|'ll|'ve i|'m i|'m|a i|'ve i. i.e. i|d i|d|ve "
    "i|ll|ve i|m i|m|a is|n't is|nt it|'d it|'d|'ve it|'ll it|'ll|'ve it|'s it|d it|d|ve it|ll it|ll|ve "
    "i|ve j. k. l. let|'s lovin' m. ma'am may|n't may|n't|'ve may|nt may|nt|ve might|'ve might|n't "
    "might|n't|'ve might|nt might|nt|ve might|ve must|'ve must|n't must|n't|'ve must|nt must|nt|ve "
    "must|ve n. need|n't need|n't|'ve need|nt need|nt|ve not|'ve nothin' not|ve nuthin' o'clock o. o.0 "
    "o.O o.o ol' ought|n't ought|n't|'ve ought|nt ought|nt|ve p. p.m. q. r. s. sha|n't sha|n't|'ve sha|nt "
    "sha|nt|ve she|'d she|'d|'ve she|'ll she|'ll|'ve she|'s she|d|ve she|ll|ve she|s should|'ve "
    "should|n't should|n't|'ve should|nt should|nt|ve should|ve somethin' t. that|'d that|'d|'ve that|'ll "
    "that|'ll|'ve that|'s that|d that|d|ve that|ll that|ll|ve that|s there|'d there|'d|'ve there|'ll "
    "there|'ll|'ve there|'re there|'s there|'ve there|d there|d|ve there|ll there|ll|ve there|re there|s "
    "there|ve these|'d these|'d|'ve these|'ll these|'ll|'ve these|'re these|'ve these|d these|d|ve "
    "these|ll these|ll|ve these|re these|ve they|'d they|'d|'ve they|'ll they|'ll|'ve they|'re they|'ve "
    "they|d they|d|ve they|ll they|ll|ve they|re they|ve this|'d this|'d|'ve this|'ll this|'ll|'ve "
    "this|'s this|d this|d|ve this|ll this|ll|ve this|s those|'d those|'d|'ve those|'ll those|'ll|'ve "
    "those|'re those|'ve those|d those|d|ve those|ll those|ll|ve those|re those|ve u. v. v.s. v.v vs. w. "
    "was|n't was|nt we|'d we|'d|'ve we|'ll we|'ll|'ve we|'re we|'ve we|d we|d|ve we|ll|ve were|n't "
    "were|nt we|ve what|'d what|'d|'ve what|'ll what|'ll|'ve what|'re what|'s what|'ve what|d what|d|ve "
    "what|ll what|ll|ve what|re what|s what|ve when|'d when|'d|'ve when|'ll when|'ll|'ve when|'re when|'s "
    "when|'ve when|d when|d|ve when|ll when|ll|ve when|re when|s when|ve where|'d where|'d|'ve where|'ll "
    "where|'ll|'ve where|'re where|'s where|'ve where|d where|d|ve where|ll where|ll|ve where|re where|s "
    "where|ve who|'d who|'d|'ve who|'ll who|'ll|'ve who|'re who|'s who|'ve who|d who|d|ve who|ll "
    "who|ll|ve who|s who|ve why|'d why|'d|'ve why|'ll why|'ll|'ve why|'re why|'s why|'ve why|d why|d|ve "
    "why|ll why|ll|ve why|re why|s why|ve wo|n't wo|n't|'ve wo|nt wo|nt|ve would|'ve would|n't "
    "would|n't|'ve would|nt would|nt|ve would|ve x. y'|all y. y|all you|'d you|'d|'ve you|'ll you|'ll|'ve "
    "you|'re you|'ve you|d you|d|ve you|ll you|ll|ve you|re you|ve z. °|C|. °|F|. °|K|. °|c|. °|f|. °|k|. "
    "ä. ö. ü. ಠ︵ಠ "
).split()


# --------------------------------------------------------------------------------------------------------------------
# Regex helpers (Oniguruma syntax, as used by `tokenizers.Regex`)
# --------------------------------------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    """
    Escapes every ASCII non-alphanumeric character (always valid in Oniguruma, in and out of classes) and writes
    the non-ASCII ones as `\\x{...}` (keeps the patterns ASCII: `tokenizers` 0.23 panics when it shortens the repr
    of a pattern in the middle of a multi-byte character).
    """
    return "".join(
        c if c.isascii() and c.isalnum() else "\\" + c if c.isascii() else f"\\x{{{ord(c):x}}}" for c in text
    )


def _alt(items: Iterable[str]) -> str:
    return "|".join(_esc(item) for item in items)


_END = "(?: |\\z)"  # end of the current word (words are separated by single spaces at this point)


def _block(words: Iterable[str]) -> str:
    """Zero-width: the word containing the current position is none of `words` (spaCy's special-case check)."""
    ordered = sorted(set(words), key=lambda w: (len(w), w))  # (not hash order: a saved tokenizer is the same file)
    return "(?![^ ]*+(?<=" + "|".join(" " + _esc(w) for w in ordered) + ")" + _END + ")"


def _spacy_rules() -> list[normalizers.Normalizer]:
    """spaCy's English tokenizer, as regex insertions of spaces into a text whose words are space-separated."""
    exceptions = [entry.split("|") for entry in _SPACY_EN_EXCEPTIONS]
    block = _block("".join(tokens) for tokens in exceptions)
    prefix = (
        "US\\$|C\\$|A\\$|\\.\\.++|\\+(?![0-9])|["
        + _esc("§%=—–" + _PUNCT + _QUOTES + "".join(c for c in _CURRENCY if len(c) == 1))
        + "]|"
        + f"[{_ICON}]"
    )
    dot_after = _esc("%²-+" + _PUNCT + "|" + _QUOTES + "(?:")
    suffix = "|".join(
        [
            "(?<!\\.)\\.\\.+",  # the leftmost match wins in spaCy's suffix search: only the start of a run of dots
            "'s|'S|’s|’S",
            "[" + _esc(_PUNCT + _QUOTES + "—–") + f"{_ICON}]",
            "(?<=[0-9])\\+",
            "(?<=°[FfCcKk])\\.",
            "(?<=[0-9])(?:" + _alt(_CURRENCY) + ")",
            "(?<=[0-9])(?:" + _alt(_UNITS) + ")",
            f"(?<=[0-9{_LOWER}{dot_after}])\\.",
            f"(?<=[{_UPPER}][{_UPPER}])\\.",
        ]
    )
    # Infixes: split before and after each match (the hyphen, comma and slash infixes are already isolated).
    infixes = [
        ("[^ .]", "\\.\\.+", "[^ .]"),
        ("[^ ]", f"[{_ICON}]", "[^ ]"),
        ("[0-9]", "\\^", "[0-9\\-]"),
        (f"[{_LOWER}{_esc(_QUOTES)}]", "\\.", f"[{_UPPER}{_esc(_QUOTES)}]"),
        (f"[{_ALPHA}0-9]", "[:<>=/]", f"[{_ALPHA}]"),
    ]
    infix = "|".join(
        f"(?<={before})(?={middle}{after})|(?<={before}{middle})(?={after})" for before, middle, after in infixes
    )
    # Exceptions with several tokens: split at their boundaries when they are a whole word.
    boundaries: dict[str, set[str]] = {}
    for tokens in exceptions:
        for i in range(1, len(tokens)):
            boundaries.setdefault("".join(tokens[i:]), set()).add("".join(tokens[:i]))
    special = "|".join(
        f"(?={_esc(right)}{_END})(?<=" + "|".join(" " + _esc(left) for left in sorted(lefts)) + ")"
        for right, lefts in sorted(boundaries.items())
    )
    # (the cheap conditions come first: the exception check `block` is by far the most expensive part)
    prefix_pass = normalizers.Replace(Regex(f"(?<= )(?=(?:{prefix})[^ ]){block}(?:{prefix})\\K"), " ")
    suffix_start = "(?<=[0-9])|(?=[" + _esc(".'’" + _PUNCT + _QUOTES + "—–") + f"{_ICON}])"
    suffix_pass = normalizers.Replace(Regex(f"(?<=[^ ])(?:{suffix_start})(?=(?:{suffix}){_END}){block}"), " ")
    return [
        prefix_pass,
        suffix_pass,
        prefix_pass,
        suffix_pass,
        prefix_pass,
        suffix_pass,
        normalizers.Replace(Regex(f"(?:{infix}){block}"), " "),
        normalizers.Replace(Regex(special), " "),
    ]


def gpt1_normalizer() -> normalizers.Normalizer:
    """
    The GPT-1 normalizer: the expressible parts of `ftfy.fix_text`, the original `text_standardize`, spaCy's English
    word splitting (as inserted spaces) and lower-casing, as one saveable `tokenizers.normalizers.Sequence`.

    Returns:
        `tokenizers.normalizers.Normalizer`: after it, words are separated by single spaces and `"\\n"` is a word.
    """
    run_boundaries = "|".join(
        f"(?<={c})(?!\\z)|(?={c})" if raw in _SPLIT_RUN_CHARS else f"(?<={c})(?!{c}|\\z)|(?<!{c})(?={c})"
        for raw, c in ((raw, _esc(raw)) for raw in _RUN_CHARS)
    )
    steps: list[normalizers.Normalizer] = [
        # ftfy.fix_text, the parts that are plain character mappings
        normalizers.Replace("\r\n", "\n"),
        normalizers.Replace(Regex("[\\r\\x{2028}\\x{2029}\\x{85}]"), "\n"),
        normalizers.Replace(Regex(f"[{_FTFY_CONTROL_CLASS}]"), ""),
        *(normalizers.Replace(k, v) for k, v in _FTFY_LIGATURES.items()),
        normalizers.Replace(Regex("[\\x{2bc}\\x{2018}-\\x{201b}]"), "'"),
        normalizers.Replace(Regex("[\\x{201c}-\\x{201f}]"), '"'),
        normalizers.NFC(),
        # text_standardize
        normalizers.Replace(Regex("[\\x{2014}\\x{2013}\\x{2015}]"), "-"),
        normalizers.Replace("…", "..."),
        normalizers.Replace("´", "'"),
        normalizers.Replace(Regex(f"[{_PY_SPACE_CLASS}]+"), " "),
        # (text_standardize's final strip(); `normalizers.Strip` followed by insertions at the very start of the
        # text makes `tokenizers` 0.23 panic, so edge whitespace becomes one space, which the pre-tokenizer drops)
        normalizers.Replace(Regex("\\A[ \\n]+|[ \\n]+\\z"), " "),
        normalizers.Replace(Regex("[ \\n]*\\n[ \\n]*"), " \n "),
        # every word is preceded by a space from here on (and no zero-width replacement matches at the start or
        # the end of the text: with one there, `tokenizers` 0.23 panics in the later `Lowercase`)
        normalizers.Prepend(" "),
        normalizers.Replace(Regex(run_boundaries), " "),
        # spaCy's English tokenizer
        *_spacy_rules(),
        normalizers.Lowercase(),
    ]
    return normalizers.Sequence(steps)


def gpt1_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """Splits the output of :func:`gpt1_normalizer` on spaces (`"\\n"` stays a word, as in the original)."""
    return pre_tokenizers.Split(" ", behavior="removed")


# --------------------------------------------------------------------------------------------------------------------
# The original Python preprocessing (reference; not used by the tokenizers)
# --------------------------------------------------------------------------------------------------------------------


def text_standardize(text: str) -> str:
    """
    The original `text_standardize` of openai/finetune-transformer-lm (`text_utils.py`), verbatim.

    Args:
        text (`str`): the text (the original applies `ftfy.fix_text` first).

    Returns:
        `str`: the text with dashes, ellipses and accents normalized, spaces around runs of punctuation, newlines as
        `" \\n "` and whitespace collapsed.
    """
    text = text.replace("—", "-").replace("–", "-").replace("―", "-").replace("…", "...").replace("´", "'")
    text = re.sub(r"""(-+|~+|!+|"+|;+|\?+|\++|,+|\)+|\(+|\\+|\/+|\*+|\[+|\]+|}+|{+|\|+|_+)""", r" \1 ", text)
    text = re.sub(r"\s*\n\s*", " \n ", text)
    text = re.sub(r"[^\S\n]+", " ", text)
    return text.strip()


def gpt1_standardize(text: str) -> str:
    """
    Applies `ftfy.fix_text`, the first step of the original GPT-1 pipeline, which no `tokenizers` component can
    express (mojibake repair, HTML entities, full-width characters).

    `tokenizer(gpt1_standardize(text))` is the faithful pipeline; `tokenizer(text)` skips only these repairs (the
    tokenizer's normalizer already does ftfy's quote uncurling, ligatures, line breaks, control characters and NFC).

    Args:
        text (`str`): raw text.

    Returns:
        `str`: `ftfy.fix_text(text)`.

    Raises:
        `ImportError`: if `ftfy` is not installed.
    """
    import ftfy

    return ftfy.fix_text(text)


# --------------------------------------------------------------------------------------------------------------------
# Building tokenizers
# --------------------------------------------------------------------------------------------------------------------


def _read_json(path: str | os.PathLike) -> Any:
    """A release's JSON file through the strict reader (`hf_gpt1.data.strict_files`: one id per token, a byte-order
    mark read). Imported when called: this module is also remote code (saved beside a model for `AutoTokenizer`),
    where only its `from .x import` lines travel and these readers of the release's files never run."""
    return importlib.import_module(".data.strict_files", __package__).read_json(path)


def _read_merges(path: str | os.PathLike) -> list[tuple[str, str]]:
    merges = []
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if not line or line.startswith("#version"):
            continue
        first, second = line.split()
        merges.append((first, second))
    return merges


# Tokens that attach to the word before them when text is decoded (spaCy split them off: "do n't", "it 's", "end .").
_ATTACH_LEFT = r"[.,!?;:%)\]}]|\.\.\.|'s|'re|'ve|'m|'ll|'d|n't"


def gpt1_decoder() -> decoders.Decoder:
    """Turns GPT-1 tokens back into readable text, as far as the original preprocessing allows.

    Every word ends in `</w>`, so a decoded word is followed by a space; then spaCy's and `text_standardize`'s splits
    are undone: no space before `. , ! ? ; : % ) ] }`, `...` and the clitics `'s 're 've 'm 'll 'd n't` (`do n't` →
    `don't`, `ca n't` → `can't`), none after `( [ { $ #`, `well - known` → `well-known`, `and / or` → `and/or`,
    `gon na` / `got ta` / `wan na` → `gonna` / `gotta` / `wanna`, newlines without spaces around them.

    A decoded text starts with a space unless its first token attaches to the word before it: generated tokens then
    continue a prompt as text (`"said that" + " the government's"`), as a byte-level BPE's `Ġ` does for GPT-2.

    What cannot be undone: lower-casing; whether a `-` or `/` had spaces around it (spaced dashes come back joined);
    the spacing of `"` and `'` quotes (an opening and a closing quote look the same); `can not` vs `cannot`; the
    characters `ftfy` and `text_standardize` replaced (curly quotes, `—`, `…`); runs of spaces; unknown characters
    (`<unk>`).
    """
    steps = [
        decoders.Replace(END_OF_WORD_SUFFIX, " "),
        decoders.Fuse(),
        decoders.Replace(Regex(r" *\n *"), "\n"),
        decoders.Replace(Regex(r" (?=(?:" + _ATTACH_LEFT + r")(?:[ \n]|\z))"), ""),
        decoders.Replace(Regex(r"(?<=[(\[{$#]) "), ""),
        decoders.Replace(Regex(r"(?<=\w) - (?=\w)"), "-"),
        decoders.Replace(Regex(r"(?<=\w) / (?=\w)"), "/"),
        *(
            decoders.Replace(Regex(rf"(?<![^ \n]){a}\K (?={b}(?:[ \n]|\z))"), "")
            for a, b in (("gon", "na"), ("got", "ta"), ("wan", "na"))
        ),
        decoders.Replace(Regex(r" \z"), ""),
        decoders.Replace(Regex(r"\A(?!" + _ATTACH_LEFT + r"|\z)"), " "),
    ]
    return decoders.Sequence(steps)


class GPT1Tokenizer(PreTrainedTokenizerFast):
    """The GPT-1 tokenizer: a `PreTrainedTokenizerFast` over the `tokenizers` pipeline of this module.

    Two behaviours differ from the plain fast tokenizer:

    * Calls that build a task input (`tokenizer(text)`, `tokenizer(a, b)` once [`add_gpt1_special_tokens`] installed
      the template) truncate to `model_max_length` by default, with transformers' `"longest_first"` rule, which is
      the recipes' rule: the longer text loses its last tokens first, special tokens are never dropped. So
      `pipeline("text-classification")` classifies a long pair exactly as the recipe's evaluation did. Pass
      `truncation=False` for the full sequence. Raw text (`add_special_tokens=False`, or a language model's
      tokenizer without the template) is never truncated.
    * `decode` gives readable text ([`gpt1_decoder`]; [`load_gpt1_tokenizer`] gives it to tokenizers saved before it
      existed).

    The class defines no `__init__`: transformers would then rebuild the tokenizer from its vocabulary and merges
    alone, dropping the GPT-1 normalizer and decoder saved in `tokenizer.json`.
    """

    model_input_names = list(_MODEL_INPUT_NAMES)
    padding_side = "right"

    def __call__(self, *args, truncation: bool | str | None = None, max_length: int | None = None, **kwargs):
        template = self.backend_tokenizer.post_processor is not None
        if truncation is None and max_length is None and kwargs.get("add_special_tokens", True) and template:
            if self.model_max_length < NO_LENGTH_LIMIT:
                truncation = "longest_first"
        return super().__call__(*args, truncation=truncation, max_length=max_length, **kwargs)


def _wrap(tok: Tokenizer) -> PreTrainedTokenizerFast:
    tok.normalizer = gpt1_normalizer()
    tok.pre_tokenizer = gpt1_pre_tokenizer()
    tok.decoder = gpt1_decoder()
    # `<unk>` (id 0) is the BPE model's unknown token but is not registered as a 🤗 special token: that would make the
    # literal text "<unk>" (frequent in WikiText) a single token, where the original splits it into `<`, `unk`, `>`.
    return GPT1Tokenizer(tokenizer_object=tok, clean_up_tokenization_spaces=False)  # the decoder does GPT-1's own


def _from_vocab_and_merges(vocab: dict[str, int], merges: list[tuple[str, str]]) -> PreTrainedTokenizerFast:
    model = models.BPE(vocab=vocab, merges=merges, unk_token=UNK_TOKEN, end_of_word_suffix=END_OF_WORD_SUFFIX)
    tokenizer = _wrap(Tokenizer(model))
    add_gpt1_special_tokens(tokenizer)
    return tokenizer


def original_tokenizer(encoder_path: str | os.PathLike, bpe_path: str | os.PathLike) -> PreTrainedTokenizerFast:
    """
    The original GPT-1 tokenizer, built from the original release files.

    Args:
        encoder_path (`str` or `os.PathLike`):
            `encoder_bpe_40000.json` (token -> id, 40,478 entries, `<unk>` is id 0).
        bpe_path (`str` or `os.PathLike`):
            `vocab_40000.bpe` (a version line, then the 40,000 merges in priority order).

    Returns:
        [`PreTrainedTokenizerFast`]: lower-cases, splits words like the original ftfy + `text_standardize` + spaCy
        pipeline (see the module docstring), applies the original BPE and maps unknown symbols to id 0. The special
        tokens `_start_`, `_delimiter_`, `_classify_` and `<pad>` are ids 40478-40481, and `tokenizer(a)` /
        `tokenizer(a, b)` build the GPT-1 input formats (see [`add_gpt1_special_tokens`]).

    Example:

    ```python
    >>> tok = original_tokenizer("encoder_bpe_40000.json", "vocab_40000.bpe")
    >>> tok.tokenize("hello world")
    ['hello</w>', 'world</w>']
    ```
    """
    return _from_vocab_and_merges(_read_json(encoder_path), _read_merges(bpe_path))


def from_openai_gpt_files(path_or_dir: str | os.PathLike) -> PreTrainedTokenizerFast:
    """
    The same tokenizer as [`original_tokenizer`], built from 🤗 transformers' `openai-gpt` tokenizer files.

    Args:
        path_or_dir (`str` or `os.PathLike`):
            a directory with `vocab.json` and `merges.txt` (the original 40,478-token vocabulary and 40,000 merges),
            or the path of its `vocab.json` (`merges.txt` is then looked up next to it).

    Returns:
        [`PreTrainedTokenizerFast`]: see [`original_tokenizer`].
    """
    path = Path(path_or_dir)
    vocab_path = path / "vocab.json" if path.is_dir() else path
    return _from_vocab_and_merges(_read_json(vocab_path), _read_merges(vocab_path.parent / "merges.txt"))


def load_gpt1_tokenizer(name_or_path: str | os.PathLike) -> GPT1Tokenizer:
    """
    Loads the tokenizer of a GPT-1 checkpoint, folder or Hub id, always as the faithful [`GPT1Tokenizer`].

    A folder saved by hf_gpt1 (its `tokenizer.json` carries the GPT-1 normalizer) loads as saved. An `openai-gpt`
    checkpoint (`vocab.json` + `merges.txt`, e.g. `openai-community/openai-gpt`) is rebuilt with
    [`from_openai_gpt_files`] instead of transformers' `OpenAIGPTTokenizer`, whose BERT-style pre-tokenization
    differs from the original on ~40% of sentences.

    Args:
        name_or_path (`str` or `os.PathLike`): a local folder or a Hub repository id.

    Raises:
        `ValueError`: The folder holds no GPT-1 tokenizer, or its files are damaged (the message names the file).
    """
    folder = Path(name_or_path)
    if not folder.is_dir():
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(str(name_or_path), allow_patterns=["*.json", "merges.txt"]))
    tokenizer_json = folder / "tokenizer.json"
    try:
        if tokenizer_json.is_file() and GPT1_SPECIAL_TOKENS["extract"] in tokenizer_json.read_text(encoding="utf-8"):
            tokenizer = GPT1Tokenizer.from_pretrained(folder)
            if isinstance(tokenizer.backend_tokenizer.decoder, decoders.BPEDecoder):  # saved before gpt1_decoder
                tokenizer.backend_tokenizer.decoder = gpt1_decoder()
            return tokenizer
        if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
            return from_openai_gpt_files(folder)
    except Exception as err:  # the Rust `tokenizers` reports a damaged tokenizer.json as a bare `Exception`
        raise ValueError(
            f"The tokenizer files in {folder} are damaged ({type(err).__name__}: {str(err).splitlines()[0][:200]}); "
            "copy them again from the run that saved them."
        ) from err
    raise ValueError(
        f"{name_or_path} holds no GPT-1 tokenizer: expected an hf_gpt1 tokenizer.json (with the GPT-1 special "
        "tokens) or openai-gpt's vocab.json + merges.txt. Build one with hf_gpt1.original_tokenizer or "
        "hf_gpt1.train_gpt1_tokenizer and save it with the model."
    )


def add_gpt1_special_tokens(tokenizer: PreTrainedTokenizerFast, model: Any | None = None) -> dict[str, int]:
    """
    Adds the GPT-1 special tokens and input formats to a tokenizer (and, optionally, to a model).

    Adds `_start_`, `_delimiter_`, `_classify_` (the paper's start, delimiter and extract tokens) then `<pad>`, in
    this order, after the existing vocabulary; sets `tokenizer.pad_token`, and `bos_token` / `eos_token` to `_start_` /
    `_classify_` (GPT-1's sequences begin and end with them; it has no other document boundary); records them as
    named special tokens
    (`tokenizer.start_token`, `tokenizer.delimiter_token`, `tokenizer.extract_token` and their `*_id`, saved by
    `save_pretrained`); and installs a post-processor so that `tokenizer(text)` gives `_start_ text _classify_` and
    `tokenizer(a, b)` gives `_start_ a _delimiter_ b _classify_`. With `add_special_tokens=False` the raw ids are
    returned (language modelling and generation). Calling it again changes nothing.

    Args:
        tokenizer ([`PreTrainedTokenizerFast`]): the tokenizer, modified in place.
        model ([`PreTrainedModel`], *optional*):
            if given, its token embeddings are resized to `len(tokenizer)`; the new rows are drawn from
            N(0, `config.initializer_range`) as in the original (not 🤗's mean of the old rows), the LM head stays
            tied, and `start_token_id`, `delimiter_token_id`, `extract_token_id`, `pad_token_id`, `bos_token_id`
            and `eos_token_id` are written to `model.config` (and its generation config). A tokenizer without a length
            limit gets the model's `n_positions` as `model_max_length`.

    Returns:
        `dict[str, int]`: `{"start": id, "delimiter": id, "extract": id, "pad": id}`.

    Raises:
        `ValueError`: The tokenizer's vocabulary does not match the model's, beyond the GPT-1 special tokens this
            call adds (a tokenizer of another checkpoint would silently embed the wrong rows).
    """
    tokenizer.add_tokens(
        [AddedToken(token, special=True, normalized=False) for token in GPT1_SPECIAL_TOKENS.values()],
        special_tokens=True,
    )
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in GPT1_SPECIAL_TOKENS.items()}
    named = {f"{name}_token": token for name, token in GPT1_SPECIAL_TOKENS.items() if name != "pad"}
    tokenizer.pad_token = GPT1_SPECIAL_TOKENS["pad"]
    # GPT-1 has no document separator: its sequences run `_start_ … _classify_`, so those are the beginning and end
    # tokens that clients (lm-eval, TRL, generate()) ask a tokenizer for. No new rows: the ids stay the paper's.
    tokenizer.bos_token, tokenizer.eos_token = GPT1_SPECIAL_TOKENS["start"], GPT1_SPECIAL_TOKENS["extract"]
    extra = [t for t in tokenizer.extra_special_tokens if str(t) not in named.values()]
    tokenizer.add_special_tokens({"extra_special_tokens": extra + list(named.values())})
    # named special tokens (`tokenizer.start_token`, `tokenizer.start_token_id`, ...); `*_token` entries of the saved
    # tokenizer_config.json are restored as such by transformers 5 at load time
    new_names = {k: v for k, v in named.items() if k not in getattr(tokenizer, "SPECIAL_TOKENS_ATTRIBUTES", [])}
    if hasattr(tokenizer, "_set_model_specific_special_tokens"):
        tokenizer._set_model_specific_special_tokens(new_names)
    else:  # pragma: no cover - transformers 4
        for attribute, token in new_names.items():
            setattr(tokenizer, attribute, token)
    tokenizer.init_kwargs.update(named)
    start, delimiter, extract = (GPT1_SPECIAL_TOKENS[k] for k in ("start", "delimiter", "extract"))
    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{start} $A {extract}",
        pair=f"{start} $A {delimiter} $B {extract}",
        special_tokens=[(start, ids["start"]), (delimiter, ids["delimiter"]), (extract, ids["extract"])],
    )
    if model is not None:
        _check_vocabularies_match(tokenizer, model, ids)
        _resize_model_embeddings(model, len(tokenizer))
        for name, token_id in ids.items():
            setattr(model.config, f"{name}_token_id", token_id)
        model.config.bos_token_id, model.config.eos_token_id = ids["start"], ids["extract"]
        generation = getattr(model, "generation_config", None)
        if generation is not None:  # generate() stops at the end token, pads with <pad>
            generation.bos_token_id, generation.eos_token_id = ids["start"], ids["extract"]
            generation.pad_token_id = ids["pad"]
        if tokenizer.model_max_length >= NO_LENGTH_LIMIT:
            tokenizer.model_max_length = model.config.n_positions
    return ids


def _check_vocabularies_match(tokenizer: PreTrainedTokenizerFast, model: Any, ids: dict[str, int]) -> None:
    rows = model.get_input_embeddings().weight.shape[0]
    size = len(tokenizer)
    # The model may lack exactly the special tokens, which come last (openai-gpt's 40,478 rows); nothing else.
    if rows == size or (rows < size and set(range(rows, size)) <= set(ids.values())):
        return
    raise ValueError(
        f"The tokenizer has {size} tokens (GPT-1 special tokens included) but the model's embedding table has {rows} "
        "rows: they come from different checkpoints, and the ids would embed the wrong rows. Use the tokenizer saved "
        "with the model (--tokenizer_name_or_path left out)."
    )


def _resize_model_embeddings(model: Any, size: int) -> None:
    import torch

    old = model.get_input_embeddings().weight.shape[0]
    if size <= old:
        return
    model.resize_token_embeddings(size, mean_resizing=False)
    std = getattr(model.config, "initializer_range", 0.02)
    with torch.no_grad():
        model.get_input_embeddings().weight[old:].normal_(mean=0.0, std=std)
    output = model.get_output_embeddings()
    if output is not None and getattr(model.config, "tie_word_embeddings", True):
        model.tie_weights()


def train_gpt1_tokenizer(texts: Iterable[str], vocab_size: int, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """
    Trains a new GPT-1-style BPE tokenizer; the same texts always give the same tokenizer.

    Same normalization and word splitting as [`original_tokenizer`] (lower-cased), `</w>` end-of-word suffix,
    `<unk>` as id 0 (unknown symbols map to it, as in the original), and the four GPT-1 special tokens appended as the
    last four ids, mirroring the original layout.

    The texts are read twice. The `tokenizers` trainer numbers the word-final symbols (`e</w>`) in the order of a
    hash map seeded afresh for every training, and breaks ties between equally frequent pairs by those numbers, so
    one training gave different ids, and where pairs tied different merges, from run to run. The first reading
    collects the alphabet (no merges); the second trains with every symbol of it numbered in sorted order.

    Args:
        texts (`Iterable[str]`): the training texts: a list, a dataset column or any collection that can be iterated
            twice (not a generator).
        vocab_size (`int`): the size of the learned vocabulary (`<unk>`, the alphabet and the merges), without the
            four special tokens.
        min_frequency (`int`, *optional*, defaults to 2): the minimum count of a pair to be merged.

    Returns:
        [`PreTrainedTokenizerFast`]: with `len(tokenizer) == learned vocabulary + 4`.
    """
    if iter(texts) is texts:
        raise TypeError(
            "train_gpt1_tokenizer reads the texts twice: pass a list, a dataset column or another collection, not an "
            "iterator or generator."
        )
    alphabet = _train_bpe(texts, vocab_size=0).get_vocab()  # no merges: `<unk>` and the alphabet
    word_final = sorted(symbol for symbol in alphabet if symbol.endswith(END_OF_WORD_SUFFIX))
    characters = sorted(symbol for symbol in alphabet if len(symbol) == 1)
    trained = _train_bpe(texts, vocab_size, min_frequency, numbered=word_final, initial_alphabet=characters)
    tokenizer = _wrap(Tokenizer(trained.model))  # the model alone: no added tokens from the trainer's special ones
    add_gpt1_special_tokens(tokenizer)
    return tokenizer


def _train_bpe(
    texts: Iterable[str],
    vocab_size: int,
    min_frequency: int = 2,
    numbered: list[str] | None = None,
    initial_alphabet: list[str] | None = None,
) -> Tokenizer:
    """One `tokenizers` BPE training with GPT-1's normalizer, word splitting and suffix. The trainer gives the ids
    0, 1, ... to `<unk>` and then to `numbered` (passed to it as special tokens, which words still use as symbols),
    then to `initial_alphabet` in character order, before the merges."""
    tok = Tokenizer(models.BPE(unk_token=UNK_TOKEN, end_of_word_suffix=END_OF_WORD_SUFFIX))
    tok.normalizer = gpt1_normalizer()
    tok.pre_tokenizer = gpt1_pre_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[UNK_TOKEN, *(numbered or [])],
        initial_alphabet=initial_alphabet or [],
        end_of_word_suffix=END_OF_WORD_SUFFIX,
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok
