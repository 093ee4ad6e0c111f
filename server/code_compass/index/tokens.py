"""Code-aware tokenization shared by indexing and querying.

Tantivy does the bulk of the splitting in Rust (regex tokenizers registered on the index), because
Python-side splitting dominated indexing time when measured (shared/notes). Rust's regex has no
look-ahead, so an acronym followed by a word ("HTTPServer") splits badly there; those rare
identifiers are split correctly here and indexed in an extra field.
"""

from __future__ import annotations

import re
from functools import lru_cache

import tantivy

# Whole identifiers (kept whole, lowercased) and numbers.
IDENT_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+"
# Parts of identifiers: camelCase humps, snake_case pieces, digit runs.
PARTS_PATTERN = r"[A-Z]?[a-z]+|[A-Z]+|[0-9]+"
# Path parts: words of a path, each directory and file stem.
IDENT_TOKENIZER = "cc_ident"
PARTS_TOKENIZER = "cc_parts"
STEM_TOKENIZER = "cc_stem"

_ACRONYM = re.compile(r"[A-Z][A-Z]+[a-z]")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IDENT = re.compile(IDENT_PATTERN)


def register_tokenizers(index: tantivy.Index) -> None:
    """Tokenizers are not persisted by tantivy: register them after every open."""
    index.register_tokenizer(IDENT_TOKENIZER, ident_analyzer())
    index.register_tokenizer(PARTS_TOKENIZER, parts_analyzer())
    index.register_tokenizer(STEM_TOKENIZER, stem_analyzer())


@lru_cache(maxsize=1)
def ident_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(IDENT_PATTERN))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(64))
        .build()
    )


@lru_cache(maxsize=1)
def parts_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(PARTS_PATTERN))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(40))
        .build()
    )


@lru_cache(maxsize=1)
def stem_analyzer() -> tantivy.TextAnalyzer:
    """Parts, without English stop words, stemmed: lets "parsing" find `parse_config`."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(PARTS_PATTERN))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@lru_cache(maxsize=65536)
def split_identifier(ident: str) -> tuple[str, ...]:
    """`getHTTPResponse2` -> ('get', 'http', 'response', '2'); lowercased."""
    return tuple(w.lower() for w in _WORDS.findall(ident))


def acronym_parts(text: str) -> str:
    """Correct splits of acronym identifiers that the Rust regex mangles (rare, so cheap)."""
    if _ACRONYM.search(text) is None:  # the common case: one cheap scan, no identifier walk
        return ""
    found = {i for i in _IDENT.findall(text) if _ACRONYM.search(i)}
    return " ".join(" ".join(split_identifier(ident)) for ident in sorted(found))


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


def path_words(path: str) -> str:
    """Words of a path for the boosted path field: 'src/HttpServer.py' -> 'src HttpServer py'."""
    return re.sub(r"[^A-Za-z0-9_]+", " ", path)


def path_prefixes(path: str) -> list[str]:
    """Every directory prefix and the path itself, for exact path-prefix filtering."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
