"""Code-aware tokenization shared by indexing and querying.

Indexing cost is kept close to bare Tantivy: body text goes once through Tantivy's fast simple
tokenizer (measured on Django: its regex tokenizers ran ~5x slower, and a second stemmed pass
of the body ~1.5x). What the simple tokenizer can't do — keep `parse_config` whole, split
`parseConfig` and `HTTPServer` into words — is computed here, in the parse worker processes,
into one small whitespace field; symbol names and paths get the same treatment. Word forms
("parsing" for `parse`) are matched at query time instead of by a stemmed copy of the body
(lexical.LexicalIndex._stem_variants).
"""

from __future__ import annotations

import re
from functools import lru_cache

import tantivy

# Whole identifiers and numbers, as the query side sees them.
IDENT_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+"
WORDS_TOKENIZER = "cc_words"
MAX_STEM_WORD = 40  # longer "words" are data (hashes, base64), not language

# Parts of identifiers: camelCase humps (acronyms apart: HTTPServer), snake_case pieces, digits.
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IDENT = re.compile(IDENT_PATTERN)
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
# bytes.translate table: identifier characters stay, everything else becomes a space. Bytes of
# non-ASCII characters stay too, so a word is never cut inside one (and is then left out).
_NON_IDENT = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95 or c >= 128) else 32
    for c in range(256)
)


def register_tokenizers(index: tantivy.Index) -> None:
    """Tokenizers are not persisted by tantivy: register them after every open."""
    index.register_tokenizer(WORDS_TOKENIZER, words_analyzer())


@lru_cache(maxsize=1)
def words_analyzer() -> tantivy.TextAnalyzer:
    """Words of body text as written (lowercased): the fast simple tokenizer. It splits
    `parse_config` and keeps `parseConfig` as one word ("parseconfig")."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(64))
        .build()
    )


@lru_cache(maxsize=1)
def _stem_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@lru_cache(maxsize=1)
def _stop_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .build()
    )


@lru_cache(maxsize=131072)
def word_stem(word: str) -> str:
    """One word's English stem ("parsing" -> "pars"), by Tantivy's Snowball stemmer."""
    stems = _stem_analyzer().analyze(word)
    return stems[0] if stems else ""


@lru_cache(maxsize=131072)
def is_stop_word(word: str) -> bool:
    return not _stop_analyzer().analyze(word)


def stem_words(text: str) -> list[str]:
    """Content words of a query or a name: identifier parts, lowercased, without English stop
    words, stemmed ("how is HTTPServer parsing" -> ["how", "http", "server", "pars"]). Per-word
    caches make this several times cheaper than a Tantivy analyzer call per text."""
    out: list[str] = []
    for part in _WORDS.findall(text):
        word = part.lower()
        if len(word) <= MAX_STEM_WORD and not is_stop_word(word):
            out.append(word_stem(word))
    return out


@lru_cache(maxsize=262144)
def _word_terms(word: bytes) -> str:
    """Code-field terms of one word: the whole if it has an underscore (the simple tokenizer
    splits it), the parts if it is camelCase (the simple tokenizer glues them)."""
    if not word.isascii():  # the query side only knows ASCII identifiers
        return ""
    ident = word.decode("ascii")
    terms: list[str] = []
    if "_" in ident and any(c.isalpha() for c in ident):
        terms.append(ident.lower())
    if _CAMEL.search(ident):
        terms.extend(split_identifier(ident))
    return " ".join(terms)


def code_terms(text: str) -> str:
    """The `code` field of a chunk: whole snake_case identifiers and camelCase parts,
    whitespace-separated. Computed once per chunk in the parse workers (bytes.translate and
    split run in C: ~40 % cheaper than a regex findall over every identifier)."""
    words = set(text.encode("utf-8", "replace").translate(_NON_IDENT).split())
    return " ".join(t for t in map(_word_terms, words) if t)


def is_underscored(ident: str) -> bool:
    """Identifiers the code field keeps whole; any other identifier is one body word."""
    return "_" in ident


@lru_cache(maxsize=65536)
def split_identifier(ident: str) -> tuple[str, ...]:
    """`getHTTPResponse2` -> ('get', 'http', 'response', '2'); lowercased."""
    return tuple(w.lower() for w in _WORDS.findall(ident))


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


def identifier_parts(text: str) -> list[str]:
    """Parts of every identifier in a text, in order, lowercased."""
    return [w for i in _IDENT.findall(text) for w in split_identifier(i)]


@lru_cache(maxsize=65536)
def symbol_terms(symbol: str) -> str:
    """The `symbol` field: each identifier of a symbol name whole, then its parts, lowercased
    ("HttpServer.parseConfig" -> "httpserver parseconfig http server parse config")."""
    idents = identifiers(symbol)
    return " ".join(dict.fromkeys([*(i.lower() for i in idents), *identifier_parts(symbol)]))


@lru_cache(maxsize=16384)
def path_terms(path: str) -> str:
    """The `path_parts` field: the parts of every directory and file name in a path."""
    return " ".join(identifier_parts(path))
