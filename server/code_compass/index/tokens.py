"""Code-aware tokenization shared by indexing and querying.

Body text goes through Tantivy's fast simple tokenizer twice (words as written, and stemmed):
measured on Django, its regex tokenizers ran ~5x slower. What the simple tokenizer can't do —
keep `parse_config` whole, split `parseConfig` and `HTTPServer` — is computed here once per
chunk, in the parse worker processes, and indexed as two small whitespace fields. Short fields
(symbol names, paths) keep the regex tokenizers: they cost little there.
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
BODY_STEM_TOKENIZER = "cc_body_stem"
WORDS_TOKENIZER = "cc_words"

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IDENT = re.compile(IDENT_PATTERN)


def register_tokenizers(index: tantivy.Index) -> None:
    """Tokenizers are not persisted by tantivy: register them after every open."""
    index.register_tokenizer(IDENT_TOKENIZER, ident_analyzer())
    index.register_tokenizer(PARTS_TOKENIZER, parts_analyzer())
    index.register_tokenizer(STEM_TOKENIZER, stem_analyzer())
    index.register_tokenizer(BODY_STEM_TOKENIZER, body_stem_analyzer())
    index.register_tokenizer(WORDS_TOKENIZER, words_analyzer())


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


@lru_cache(maxsize=1)
def words_analyzer() -> tantivy.TextAnalyzer:
    """Words of body text as written (lowercased): the fast simple tokenizer."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(64))
        .build()
    )


@lru_cache(maxsize=1)
def body_stem_analyzer() -> tantivy.TextAnalyzer:
    """Words of body text, stemmed, via the fast simple tokenizer (camel parts: `extra`)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")


@lru_cache(maxsize=131072)
def _compound(ident: str) -> tuple[str, str]:
    """(whole identifier if compound, its camel parts) for one identifier, lowercased."""
    camel = _CAMEL.search(ident) is not None
    whole = ident.lower() if camel or "_" in ident.strip("_") else ""
    parts = " ".join(split_identifier(ident)) if camel else ""
    return whole, parts


def compound_terms(text: str) -> tuple[str, str]:
    """Two whitespace-separated strings for a chunk: whole compound identifiers (snake_case,
    camelCase; the simple tokenizer splits or glues those) and the parts of camelCase ones.
    Computed once per chunk in the parse workers, so the main process stays light."""
    wholes: list[str] = []
    parts: list[str] = []
    for ident in set(_IDENT.findall(text)):
        whole, split = _compound(ident)
        if whole:
            wholes.append(whole)
        if split:
            parts.append(split)
    return " ".join(wholes), " ".join(parts)


def compound_parts(text: str) -> str:
    return compound_terms(text)[1]


def is_compound(ident: str) -> bool:
    return bool(_compound(ident)[0])


@lru_cache(maxsize=65536)
def split_identifier(ident: str) -> tuple[str, ...]:
    """`getHTTPResponse2` -> ('get', 'http', 'response', '2'); lowercased."""
    return tuple(w.lower() for w in _WORDS.findall(ident))


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


def path_words(path: str) -> str:
    """Words of a path for the boosted path field: 'src/HttpServer.py' -> 'src HttpServer py'."""
    return re.sub(r"[^A-Za-z0-9_]+", " ", path)


def path_prefixes(path: str) -> list[str]:
    """Every directory prefix and the path itself, for exact path-prefix filtering."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
