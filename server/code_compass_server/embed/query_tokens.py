"""A query's token ids without the `tokenizers` library, for a one-shot search.

Importing `tokenizers` and reading the model's tokenizer.json costs a cold search about 25 ms
of CPU, more than everything else it tokenizes: one short query. This module produces the
same ids as the model's tokenizer (BertNormalizer with accents stripped and lower case,
BertPreTokenizer, WordPiece with `##`, `[CLS] … [SEP]`, truncated) from its vocabulary alone,
kept as a plain word list beside the optimized model.

It answers only for text below U+0530 (Latin, Greek, Cyrillic), where
`tests/embed/test_query_tokens.py` compares it with the tokenizer on every code point; any
other text (CJK, emoji, characters the two Unicode tables might classify apart) returns None
and the caller uses the tokenizer.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import unicodedata
from pathlib import Path

PURE_BELOW = 0x530  # Latin, Greek, Cyrillic: checked code point by code point against the model's
_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # matched in the raw text, as added
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in _SPECIALS) + ")")
# The tokenizer.json settings this module reproduces; a tokenizer with others is not handled.
_EXPECTED = {
    "normalizer": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    },
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {
        "type": "WordPiece",
        "unk_token": "[UNK]",
        "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 100,
    },
}
_MAX_WORD_CHARS = 100
_CONTROLS = ("Cc", "Cf", "Cs", "Co")  # removed; an unassigned code point (Cn) stays


class QueryTokens:
    """Token ids of one text, [CLS] and [SEP] included, at most `max_tokens`."""

    def __init__(self, words: list[str], max_tokens: int) -> None:
        self._ids = {w: i for i, w in enumerate(words)}
        self._max = max_tokens
        self._unk, self._cls, self._sep = (self._ids[t] for t in ("[UNK]", "[CLS]", "[SEP]"))

    @classmethod
    def load(cls, tokenizer_json: Path, cache_dir: Path, max_tokens: int) -> QueryTokens | None:
        """From the word list kept in `cache_dir` (written from tokenizer.json the first time);
        None when the tokenizer is not one this module reproduces, or a file cannot be read."""
        st = tokenizer_json.stat()
        kept = cache_dir / f"vocab-{st.st_size}-{st.st_mtime_ns}.txt"
        try:
            return cls(kept.read_text("utf-8").split("\n"), max_tokens)
        except (OSError, KeyError):
            pass
        words = _words_of(tokenizer_json)
        if words is None:
            return None
        with contextlib.suppress(OSError):  # a read-only storage: read tokenizer.json each time
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
            tmp.write_text("\n".join(words), encoding="utf-8")
            os.replace(tmp, kept)
        try:
            return cls(words, max_tokens)
        except KeyError:  # no [UNK], [CLS] or [SEP]
            return None

    def encode(self, text: str) -> list[int] | None:
        """The ids, or None when `text` has a character this module is not checked on."""
        if text and max(map(ord, text)) >= PURE_BELOW:
            return None
        ids = [self._cls]
        for part in _SPECIAL_SPLIT.split(text):
            if part in _SPECIALS:
                ids.append(self._ids[part])
                continue
            for word in _words(_normalized(part)):
                ids.extend(self._pieces(word))
        ids = ids[: self._max - 1]
        ids.append(self._sep)
        return ids

    def _pieces(self, word: str) -> list[int]:
        """Greedy longest-match WordPiece; a word with an unknown part is one [UNK]."""
        if len(word) > _MAX_WORD_CHARS:
            return [self._unk]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self._ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self._unk]
            out.append(found)
            start = end
        return out


def _words_of(tokenizer_json: Path) -> list[str] | None:
    """The vocabulary in id order, if the tokenizer's settings are the ones reproduced here."""
    try:
        spec = json.loads(tokenizer_json.read_text("utf-8"))
        model = {k: v for k, v in spec["model"].items() if k != "vocab"}
        if (
            spec["normalizer"] != _EXPECTED["normalizer"]
            or spec["pre_tokenizer"] != _EXPECTED["pre_tokenizer"]
            or model != _EXPECTED["model"]
        ):
            return None
        vocab: dict[str, int] = spec["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    words = sorted(vocab, key=vocab.__getitem__)
    if [vocab[w] for w in words] != list(range(len(words))) or any("\n" in w for w in words):
        return None
    return words


def _normalized(text: str) -> str:
    """BertNormalizer below U+0800: controls dropped, whitespace made spaces, accents stripped
    (NFD, then no nonspacing marks), lower case char by char (no final-sigma rule)."""
    kept = []
    for c in text:
        if c in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(c) in _CONTROLS:  # \x1c-\x1f too: not spaces there
            continue
        else:
            kept.append(" " if c.isspace() else c)
    decomposed = unicodedata.normalize("NFD", "".join(kept))
    return "".join(c.lower() for c in decomposed if unicodedata.category(c) != "Mn")


def _words(text: str) -> list[str]:
    """BertPreTokenizer: split on whitespace, and each punctuation character is a word."""
    out: list[str] = []
    for chunk in text.split():
        word = ""
        for c in chunk:
            if _punctuation(c):
                if word:
                    out.append(word)
                    word = ""
                out.append(c)
            else:
                word += c
        if word:
            out.append(word)
    return out


def _punctuation(c: str) -> bool:
    return (c.isascii() and not c.isalnum() and c.isprintable() and c != " ") or (
        unicodedata.category(c)[0] == "P"
    )
