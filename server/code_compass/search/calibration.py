"""The calibrated score in [0, 1] that minScore is compared with, for each search mode.

    z     = sum(weight[mode][f] * signal[f])          relevance of one hit; ranks the list
    score = sigmoid(logit(0.6) + (1 - share) * (z - threshold) + share * (z_top - threshold))

z_top is the best z in the same list. A hit's score thus mixes its own relevance with how well
the workspace answers the query at all: the right chunk at rank 7 of a query whose best hit is
strong stays above 0.6, while no hit of a query the workspace can't answer does. Within a list
the score is an increasing function of z, so ranking and thresholding never disagree; it is
monotonic in every evidence signal (positive weights). Constants: constants.py, fitted by
`scripts/eval_search.py --fit` on the dev set (docs/search.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from code_compass.constants import (
    DEFAULT_MIN_SCORE,
    SEARCH_THRESHOLD,
    SEARCH_TOP_SHARE,
    SEARCH_WEIGHTS,
)
from code_compass.search.candidates import Candidate
from code_compass.search.signals import QueryInfo, compute

MODES = ("hybrid", "lexical", "semantic")
ANCHOR = math.log(DEFAULT_MIN_SCORE / (1 - DEFAULT_MIN_SCORE))  # z == threshold -> 0.6


def relevance(features: Mapping[str, float], mode: str) -> float:
    weights = SEARCH_WEIGHTS[mode]
    return sum(w * features.get(f, 0.0) for f, w in weights.items())


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def from_relevance(z: float, z_top: float, mode: str) -> float:
    share, t = SEARCH_TOP_SHARE[mode], SEARCH_THRESHOLD[mode]
    return sigmoid(ANCHOR + (1 - share) * (z - t) + share * (max(z, z_top) - t))


def calibrated(features: Mapping[str, float], mode: str, z_top: float | None = None) -> float:
    """Score of one hit; `z_top` is the best relevance in its list (itself when alone)."""
    z = relevance(features, mode)
    return from_relevance(z, z if z_top is None else z_top, mode)


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
    for c, z in zip(out, zs, strict=True):
        c.score = from_relevance(z, z_top, mode)
    out.sort(key=lambda c: c.score, reverse=True)
    return out
