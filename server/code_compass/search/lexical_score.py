"""A calibrated lexical score in [0, 1] from BM25 and query-word coverage.

Raw BM25 is unbounded and depends on the corpus; what says "this chunk answers the query" is
mostly how many of the query's content words it contains (weighted by rarity) and whether the
match is strong. score = coverage^COVERAGE_POWER * (1 - exp(-bm25 / (SATURATION * n_words))).
"""

from __future__ import annotations

import math

from code_compass.index.lexical import STEM_TOKENIZER, analyze

COVERAGE_POWER = 1.5
SATURATION = 1.2


def content_words(text: str) -> set[str]:
    return set(analyze(text, STEM_TOKENIZER))


def coverage(query_words: list[str], chunk_words: set[str]) -> float:
    if not query_words:
        return 0.0
    return sum(1 for w in query_words if w in chunk_words) / len(query_words)


def lexical_score(bm25: float, cov: float, n_words: int) -> float:
    if n_words <= 0 or bm25 <= 0:
        return 0.0
    strength = 1.0 - math.exp(-bm25 / (SATURATION * n_words))
    return max(0.0, min(1.0, (cov**COVERAGE_POWER) * strength))
