"""The signals the calibrated score is made of, each in [0, 1], computed per candidate.

Absolute signals (cosine, BM25 strength, query-word coverage) say whether a chunk answers the
query at all, so they carry the calibration; rank signals say how it compares with the other
candidates of the same query; the rest encode what a code question usually wants: a definition
whose name or path uses the query's words, implementation rather than tests (unless the query
asks for tests), a symbol rather than a loose window of module code.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from code_compass_server.constants import SEARCH_RANK_K, STUB_SUFFIXES
from code_compass_server.index.catalog import ChunkRow
from code_compass_server.index.tokens import stem_words
from code_compass_server.search.candidates import Candidate

FEATURES = (
    "cos",
    "lex",
    "coverage",
    "rank_lex",
    "rank_sem",
    "symbol",
    "name",
    "path",
    "test",
    "test_wanted",
    "doc",
    "config",
    "window",
    "impl",
    "decl",
)
# Signals of the whole list (calibration.py's answerability term), not of one hit.
QUERY_SIGNALS = ("z_top", "cos_top", "cos_gap", "lex_top", "bm25_per_word", "nwords")
_WANTS_TESTS = re.compile(r"\b(tests?|testing|tested|spec|specs|fixtures?|unittest|pytest)\b", re.I)
_LOOSE_KINDS = frozenset({"module", "window"})
# "Why/how does it …" asks for the code that decides; a declaration that documents an option
# (a TS interface, a .pyi stub) and prose that describes it stay, ranked below it. Read on the
# rendering the channels search with, where a Portuguese question has lost its auxiliaries
# ("como faço pra desistir" -> "how desistir"): keyed to "how do/does/can", the flag was set for
# 333 of 591 English questions of the dev and held-out sets and for 57 of their Portuguese twins
# (linear relevance and ranker both read it); keyed to the question word, twins agree 94 %.
_BEHAVIOUR = re.compile(
    r"\b(?:why|how(?! (?:many|much|long|often|big|far|old)\b)|what happens?|when does|"
    r"does \w+ (?:\w+ )?(?:retry|fail|raise|throw|return|call|close|handle)|por ?que|"
    r"o que acontece|como)\b",
    re.I,
)
_CODE_KINDS = frozenset({"function", "method", "constructor"})
_DECL_KINDS = frozenset({"interface", "type", "enum", "struct", "trait"})
# BM25 strength saturates per query word: bm25 ~ SATURATION * words is a strong match.
_SATURATION = 1.2


@dataclass(frozen=True, slots=True)
class QueryInfo:
    words: tuple[str, ...]  # stemmed content words, stop words removed
    wants_tests: bool
    behaviour: bool = False  # "why/how does …": the implementation first


@lru_cache(maxsize=256)
def query_info(query: str) -> QueryInfo:
    words = tuple(dict.fromkeys(stem_words(query)))
    return QueryInfo(
        words=words,
        wants_tests=bool(_WANTS_TESTS.search(query)),
        behaviour=bool(_BEHAVIOUR.search(query)),
    )


@lru_cache(maxsize=65536)
def _name_words(text: str) -> frozenset[str]:
    """Stemmed words of a symbol or a path (separators need no care: stem_words reads only
    letters and digits)."""
    return frozenset(stem_words(text))


def word_share(words: tuple[str, ...], found: frozenset[str]) -> float:
    if not words:
        return 0.0
    return sum(1 for w in words if w in found) / len(words)


def text_coverage(words: tuple[str, ...], text: str) -> float:
    """Share of query stems found in the text as substrings.

    Stems are word prefixes ("pars" for parse/parsing), so a substring test finds them in
    identifiers too (parseHeader, parse_header) without tokenizing the chunk, which would cost
    ~0.5 ms a chunk: too slow for 100 candidates per query.
    """
    if not words:
        return 0.0
    low = text.lower()
    return sum(1 for w in words if w in low) / len(words)


def bm25_strength(bm25: float | None, n_words: int) -> float:
    if not bm25 or n_words <= 0:
        return 0.0
    return 1.0 - math.exp(-bm25 / (_SATURATION * n_words))


def rank_signal(rank: int | None) -> float:
    return 0.0 if rank is None else SEARCH_RANK_K / (SEARCH_RANK_K + rank)


def compute(c: Candidate, q: QueryInfo, cos_floor: float = 0.0) -> dict[str, float]:
    """All signals of one candidate; a channel that did not return it contributes its floor."""
    row = c.row
    is_test = row.category == "test"
    return {
        "cos": max(0.0, c.cosine if c.cosine is not None else cos_floor),
        "lex": bm25_strength(c.bm25, len(q.words)),
        "coverage": text_coverage(q.words, f"{row.symbol}\n{row.path}\n{row.text}"),
        "rank_lex": rank_signal(c.lexical_rank),
        "rank_sem": rank_signal(c.semantic_rank),
        "symbol": word_share(q.words, _name_words(row.symbol)),
        # The definition's own name (last part of the qualified symbol), by substring: stems
        # find glued names too ("week" in formatweek, "formset" in BaseInlineFormSet).
        "name": text_coverage(q.words, row.symbol.rsplit(".", 1)[-1]),
        "path": word_share(q.words, _name_words(row.path)),
        "test": 1.0 if is_test and not q.wants_tests else 0.0,
        "test_wanted": 1.0 if is_test and q.wants_tests else 0.0,
        "doc": 1.0 if row.category == "doc" else 0.0,
        "config": 1.0 if row.category == "config" else 0.0,
        "window": 1.0 if row.kind in _LOOSE_KINDS else 0.0,
        "impl": 1.0 if q.behaviour and _implementation(row) else 0.0,
        "decl": 1.0 if q.behaviour and _declaration(row) else 0.0,
    }


def _implementation(row: ChunkRow) -> bool:
    return (
        row.category == "code" and row.kind in _CODE_KINDS and not row.path.endswith(STUB_SUFFIXES)
    )


def _declaration(row: ChunkRow) -> bool:
    return row.category == "doc" or row.kind in _DECL_KINDS or row.path.endswith(STUB_SUFFIXES)


def query_signals(
    features: Sequence[Mapping[str, float]], cosines: Sequence[float], z_top: float, n_words: int
) -> dict[str, float]:
    """How well a list answers its query: best relevance, best cosine and its lead over the
    second (the semantic channel's raw cosines), best BM25 strength, and query length.

    `bm25_per_word` is the strongest BM25 per query word, read back from `lex` (its saturating
    transform) and capped: `lex` itself is near 1 for most matches, the raw ratio still orders
    them.
    """
    top2 = heapq.nlargest(2, cosines)
    lex_top = max((f.get("lex", 0.0) for f in features), default=0.0)
    per_word = -_SATURATION * math.log(max(1e-9, 1.0 - lex_top))
    return {
        "z_top": z_top,
        "cos_top": top2[0] if top2 else 0.0,
        "cos_gap": top2[0] - top2[1] if len(top2) > 1 else 0.0,
        "lex_top": lex_top,
        "bm25_per_word": min(per_word, 10.0) / 10.0,
        "nwords": min(n_words, 12) / 12.0,
    }
