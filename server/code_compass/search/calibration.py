"""The calibrated score in [0, 1] that minScore is compared with, for each search mode.

    z     = sum(weight[mode][f] * signal[f])                  relevance of one hit; ranks the list
    A     = sum(answer_weight[mode][g] * query_signal[g])     does the workspace answer at all?
    score = sigmoid(logit(0.6) + slope[mode] * (z - z_top) + A - threshold[mode])

z_top is the best z in the same list. Query signals describe the whole list, not one hit: the
best relevance, the best cosine and its lead over the second, the best BM25 strength. They are
what tells "this workspace answers the query" from "nothing here does" (a top cosine of 0.65
with a clear lead vs 0.4 among equals), which no single hit's relevance says as well. The slope
term keeps the score strictly increasing in z within a list, so ranking and thresholding never
disagree; every evidence weight is >= 0, so the score is monotonic in the evidence. Constants:
constants.py, fitted by `scripts/eval_search.py --fit` on the dev set (docs/search.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from code_compass.constants import (
    DEFAULT_MIN_SCORE,
    SEARCH_ANSWER_WEIGHTS,
    SEARCH_RANK_SLOPE,
    SEARCH_THRESHOLD,
    SEARCH_WEIGHTS,
)
from code_compass.search.candidates import Candidate
from code_compass.search.signals import QueryInfo, compute, query_signals

MODES = ("hybrid", "lexical", "semantic")
ANCHOR = math.log(DEFAULT_MIN_SCORE / (1 - DEFAULT_MIN_SCORE))  # logit(0.6)


def relevance(features: Mapping[str, float], mode: str) -> float:
    weights = SEARCH_WEIGHTS[mode]
    return sum(w * features.get(f, 0.0) for f, w in weights.items())


def answerability(qsig: Mapping[str, float], mode: str) -> float:
    """A, the query-level term: how well the list as a whole answers the query."""
    return sum(w * qsig.get(g, 0.0) for g, w in SEARCH_ANSWER_WEIGHTS[mode].items())


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def from_relevance(z: float, z_top: float, answer: float, mode: str) -> float:
    slope, t = SEARCH_RANK_SLOPE[mode], SEARCH_THRESHOLD[mode]
    return sigmoid(ANCHOR + slope * (z - max(z, z_top)) + answer - t)


def score_candidates(cands: Iterable[Candidate], q: QueryInfo, mode: str) -> list[Candidate]:
    """Fill each candidate's signals and calibrated score; return them best first."""
    out = list(cands)
    cosines = [c.cosine for c in out if c.cosine is not None]
    # A chunk the semantic channel did not return is at most as close as the last one it did.
    floor = min(cosines) if cosines else 0.0
    zs: list[float] = []
    for c in out:
        c.features = compute(c, q, floor)
        zs.append(relevance(c.features, mode))
    z_top = max(zs, default=0.0)
    qsig = query_signals([c.features for c in out], cosines, z_top, len(q.words))
    answer = answerability(qsig, mode)
    for c, z in zip(out, zs, strict=True):
        c.score = from_relevance(z, z_top, answer, mode)
    out.sort(key=lambda c: c.score, reverse=True)
    return out
