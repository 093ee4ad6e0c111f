"""The calibrated score in [0, 1] that minScore is compared with, for each search mode.

    z       = sum(weight[mode][f] * signal[f])                relevance of one hit; ranks the list
    P(ans)  = sigmoid(gate.bias + sum(gate.w[g] * list[g]))   does the workspace answer at all?
    P(rel | ans) = sigmoid(hit.bias + hit.w · (z - z_top, 1 / (1 + rank), list signals))
    relevance = P(ans) * P(rel | ans)                         P(this hit is relevant)
    relevance of the hit shown first = sigmoid(first.bias + first.w · (logit P(ans),
                logit P(rel | ans), named definition, guessed name))   (weights <= 0 dropped)
    score   = S(P(ans)) * (P(rel | ans) / P(top hit rel | ans)) ** gamma   what minScore reads

An unanswerable question has no relevant hit, so `relevance` is the probability that the hit is
relevant (calibrated against gold spans and the hits a reader judged to answer). The hit shown
first is a population of its own: it is the best of its list, and the name channel may have put
a definition there (search/names.py). Its `relevance` is therefore P(the first hit shown is
relevant), refitted on exactly those hits of every dev question, unanswerable ones included
(`calibrate_first`): the product of the two models above, fitted on all the hits of answerable
questions, was miscalibrated there even in sample.

`score` reads the best hit at S(P(ans)): P(ans) with its logit shifted so that 0.6 is the
fitted cut between answerable and unanswerable dev questions. The top hit of a list that
answers passes minScore; every other hit loses its relevance odds against the best, raised to
gamma (< 1, fitted so that the hits below the best that clear 0.6 in the lists the gate keeps
catch the answering ones best: F1 over graded dev labels).

The list signals (search/gate.py: rarity-weighted coverage of the question by the top
hits, words and names that exist nowhere in the index, channel agreement, score gaps, the best
cosine and BM25 strength) tell a workspace that answers from one that only shares common words;
the hit term says how much a hit below the best loses, by its relevance gap and rank. Within a
list the score falls with z (the hit weights are fitted >= 0 on the gap and rank), so ranking and
thresholding never disagree. The parameters are fitted by `scripts/fit_calibration.py` on the dev
split of eval/realqa and stored next to this module (calibration_fit.json, docs/search.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from code_compass_server.constants import DEFAULT_MIN_SCORE, SEARCH_WEIGHTS
from code_compass_server.search import ranker
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.gate import (
    GATE_SIGNALS,
    QuestionTerms,
    gate_signals,
    question_terms,
)
from code_compass_server.search.signals import QueryInfo, compute, query_signals

MODES = ("hybrid", "lexical", "semantic")
# "partial": the lexical model while a project is only partly embedded, with the cut fitted to
# keep nearly every answerable question (a refusal must not come from missing vectors alone).
PARTIAL = "partial"
ANCHOR = math.log(DEFAULT_MIN_SCORE / (1 - DEFAULT_MIN_SCORE))  # logit(0.6)
HIT_SIGNALS = ("dz", "rank", "top")
# The first shown hit's own recalibration: the two probabilities as logits, and what the name
# channel did (a named definition put first, or one guessed from the question's words).
FIRST_SIGNALS = ("answer", "hit", "named", "guess")
_LOGIT_CAP = 8.0
FIT_FILE = "calibration_fit.json"  # package data beside this module


@lru_cache(maxsize=1)
def fitted() -> dict[str, Any]:
    """{mode: {"gate": {"bias", "weights"}, "hit": {"bias", "weights"}}} from the fit file."""
    text = (
        resources.files("code_compass_server.search").joinpath(FIT_FILE).read_text(encoding="utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


def relevance(features: Mapping[str, float], mode: str) -> float:
    weights = SEARCH_WEIGHTS["lexical" if mode == PARTIAL else mode]
    return sum(w * features.get(f, 0.0) for f, w in weights.items())


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def linear(model: Mapping[str, Any], values: Mapping[str, float]) -> float:
    weights: Mapping[str, float] = model["weights"]
    return float(model["bias"]) + sum(w * values.get(k, 0.0) for k, w in weights.items())


def hit_signals(z: float, z_top: float, rank: int) -> dict[str, float]:
    """A hit's place in its list: relevance gap to the best (<= 0), rank, whether it is first."""
    return {
        "dz": max(-10.0, z - z_top),
        "rank": 1.0 / (1.0 + rank),
        "top": 1.0 if rank == 0 else 0.0,
    }


def logit(p: float) -> float:
    return max(-_LOGIT_CAP, min(_LOGIT_CAP, math.log(max(p, 1e-12) / max(1 - p, 1e-12))))


def first_signals(answer: float, hit: float, named: bool, guess: bool) -> dict[str, float]:
    """The first shown hit's recalibration inputs: P(ans) and its own P(rel | ans) (the best
    of the list's when the name channel added it), and how the name channel placed it."""
    return {
        "answer": logit(answer),
        "hit": logit(hit),
        "named": 1.0 if named and not guess else 0.0,
        "guess": 1.0 if guess else 0.0,
    }


def first_probability(values: Mapping[str, float], mode: str) -> float | None:
    """P(the first shown hit is relevant), or None when the fit has no first-hit model."""
    model = fitted()[mode].get("first")
    return None if model is None else sigmoid(linear(model, values))


def calibrate_first(ranked: list[Candidate], mode: str) -> None:
    """Set the `relevance` of the hit shown first (after the name channel placed its
    definitions and the list was diversified) to the first-hit model's probability."""
    if not ranked:
        return
    best = next((c for c in ranked if "answerable" in c.features), None)
    if best is None:  # nothing was scored: only definitions the name channel added
        return
    first = ranked[0]
    hit = first.features.get("p_hit", best.features.get("p_hit", 0.0))
    gsig = {k.removeprefix("list_"): v for k, v in best.features.items() if k.startswith("list_")}
    values = {
        **gsig,
        **first_signals(best.features["answerable"], hit, first.exact_definition, first.name_guess),
    }
    p = first_probability(values, mode)
    if p is not None:
        first.relevance = p


def answer_probability(gsig: Mapping[str, float], mode: str) -> float:
    return sigmoid(linear(fitted()[mode]["gate"], gsig))


def answer_score(answer: float, mode: str) -> float:
    """The top hit's score: P(answers) with its logit shifted so that minScore 0.6 falls at
    the fitted cut between answerable and unanswerable questions (the gate's decision point)."""
    p = min(max(answer, 1e-9), 1 - 1e-9)
    return sigmoid(math.log(p / (1 - p)) - float(fitted()[mode].get("offset", 0.0)))


def hit_probability(hsig: Mapping[str, float], mode: str) -> float:
    return sigmoid(linear(fitted()[mode]["hit"], hsig))


def signal_values(cands: list[Candidate], q: QueryInfo, mode: str) -> list[float]:
    """Fill each candidate's signals (signals.compute); return their linear relevance z."""
    cosines = [c.cosine for c in cands if c.cosine is not None]
    # A chunk the semantic channel did not return is at most as close as the last one it did.
    floor = min(cosines) if cosines else 0.0
    for c in cands:
        c.features = compute(c, q, floor)
    return [relevance(c.features, mode) for c in cands]


def list_evidence(
    cands: Iterable[Candidate],
    q: QueryInfo,
    mode: str,
    terms: QuestionTerms | None = None,
) -> tuple[list[Candidate], list[float], dict[str, float]]:
    """Candidates with their signals, best relevance first; their z; the list's gate signals.

    `terms` are the question's words looked up in the project's index (gate.question_terms);
    without them every word counts as present, which only weakens the gate."""
    out = list(cands)
    cands_in = list(out)  # their order when linear_z was computed
    cosines = [c.cosine for c in out if c.cosine is not None]
    linear_z = signal_values(out, q, mode)
    # The learned ranker's correction of z, where the mode has one (search/ranker.py).
    learned = ranker.corrected(out, q, linear_z, mode)
    zs = {id(c): z for c, z in zip(out, learned or linear_z, strict=True)}
    out.sort(key=lambda c: zs[id(c)], reverse=True)
    ordered = [zs[id(c)] for c in out]
    # The gate reads the list in the linear z's order: the ranker is fitted to order a list,
    # not to say whether it answers. Read in the ranker's order, its top hits cover more of an
    # unanswerable question's words and z_top moves: on the last round's blind corpora
    # unanswerable passing went 19 -> 26-29 % with the gate unchanged.
    by_linear = sorted(range(len(linear_z)), key=linear_z.__getitem__, reverse=True)
    gate_list = [cands_in[i] for i in by_linear] if learned else out
    gate_z = [linear_z[i] for i in by_linear] if learned else ordered
    z_top = gate_z[0] if gate_z else 0.0
    base = query_signals([c.features for c in out], cosines, z_top, len(q.words))
    gsig = gate_signals(gate_list, gate_z, base, terms or question_terms(" ".join(q.words), None))
    return out, ordered, gsig


def score_candidates(
    cands: Iterable[Candidate],
    q: QueryInfo,
    mode: str,
    terms: QuestionTerms | None = None,
) -> list[Candidate]:
    """Fill each candidate's signals and calibrated score; return them best first."""
    out, ordered, gsig = list_evidence(cands, q, mode, terms)
    if not out:
        return out
    z_top = ordered[0]
    answer = answer_probability(gsig, mode)
    top = answer_score(answer, mode)
    probs = [
        hit_probability({**gsig, **hit_signals(z, z_top, rank)}, mode)
        for rank, z in enumerate(ordered)
    ]
    gamma = float(fitted()[mode].get("evidence_gamma", 1.0))
    for c, z, p in zip(out, ordered, probs, strict=True):
        c.relevance = answer * p
        # The best hit reads P(the workspace answers); the others fall with their relevance
        # odds against it, softened by the fitted gamma: a hit below the best is rarely more
        # than 30 % likely to answer even when it does (graded dev labels), so the plain ratio
        # kept one evidence per answer. Capped at the best's: the order stays the relevance order.
        c.score = top * min(1.0, p / probs[0]) ** gamma
        c.features = {**c.features, "z": z, "p_hit": p}
    out[0].features.update({f"list_{k}": v for k, v in gsig.items()})
    out[0].features["answerable"] = answer
    return out


__all__ = [
    "FIRST_SIGNALS",
    "GATE_SIGNALS",
    "HIT_SIGNALS",
    "MODES",
    "calibrate_first",
    "score_candidates",
]
