"""The calibrated score in [0, 1] that minScore is compared with, for each search mode.

score = sigmoid(bias[mode] + sum(weight[mode][f] * signal[f])): a logistic model over the
signals of search/signals.py, fitted by `scripts/eval_search.py --fit` on a dev set (see
constants.py). The same number ranks the candidates, so ranking and thresholding never
disagree. It is monotonic in every signal whose weight is positive (cosine, BM25 strength,
coverage, ...), and the bias puts 0.6 where, on the dev set, correct hits stay above and the
best hit of a query the workspace can't answer falls below.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from code_compass.constants import SEARCH_BIAS, SEARCH_WEIGHTS
from code_compass.search.candidates import Candidate
from code_compass.search.signals import QueryInfo, compute

MODES = ("hybrid", "lexical", "semantic")


def logit(features: Mapping[str, float], mode: str) -> float:
    weights = SEARCH_WEIGHTS[mode]
    return SEARCH_BIAS[mode] + sum(w * features.get(f, 0.0) for f, w in weights.items())


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def calibrated(features: Mapping[str, float], mode: str) -> float:
    return sigmoid(logit(features, mode))


def score_candidates(cands: Iterable[Candidate], q: QueryInfo, mode: str) -> list[Candidate]:
    """Fill each candidate's signals and calibrated score; return them best first."""
    out = list(cands)
    cosines = [c.cosine for c in out if c.cosine is not None]
    # A chunk the semantic channel did not return is at most as close as the last one it did.
    floor = min(cosines) if cosines else 0.0
    for c in out:
        c.features = compute(c, q, floor)
        c.score = calibrated(c.features, mode)
    out.sort(key=lambda c: c.score, reverse=True)
    return out
