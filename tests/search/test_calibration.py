"""The calibrated score: in [0, 1], monotonic in the evidence, 0.6 meaningful."""

from __future__ import annotations

import itertools

import pytest

from code_compass.constants import (
    DEFAULT_MIN_SCORE,
    SEARCH_ANSWER_WEIGHTS,
    SEARCH_RANK_SLOPE,
    SEARCH_WEIGHTS,
)
from code_compass.search.calibration import (
    MODES,
    answerability,
    from_relevance,
    relevance,
    score_candidates,
)
from code_compass.search.signals import (
    FEATURES,
    bm25_strength,
    query_info,
    query_signals,
    text_coverage,
)
from tests.search.helpers import cand, row

# Signals that say "this chunk matches the query": more of them can never lower the score.
EVIDENCE = ("cos", "lex", "coverage", "symbol")


def calibrated(
    features: dict[str, float], mode: str, qsig: dict[str, float] | None = None
) -> float:
    """The score `score_candidates` gives a hit with these signals; `qsig` describes its list
    (a list of that one hit when omitted)."""
    z = relevance(features, mode)
    if qsig is None:
        qsig = query_signals([features], [features.get("cos", 0.0)], z, 3)
    return from_relevance(z, qsig["z_top"], answerability(qsig, mode), mode)


def _base() -> dict[str, float]:
    return {f: 0.0 for f in FEATURES}


@pytest.mark.parametrize("mode", MODES)
def test_score_stays_in_unit_interval_at_the_extremes(mode: str) -> None:
    for values in itertools.product((0.0, 1.0), repeat=4):
        feats = _base()
        feats.update(zip(("cos", "lex", "coverage", "rank_sem"), values, strict=True))
        feats.update({"test": 1.0, "window": 1.0} if values[0] else {})
        s = calibrated(feats, mode)
        assert 0.0 <= s <= 1.0


@pytest.mark.parametrize("mode", MODES)
def test_score_is_monotonic_in_the_evidence_the_mode_uses(mode: str) -> None:
    used = [f for f in EVIDENCE if f in SEARCH_WEIGHTS[mode]]
    assert used, f"{mode} uses none of {EVIDENCE}"
    for f in used:
        assert SEARCH_WEIGHTS[mode][f] >= 0, f"{mode}: weight of {f} is negative"
        prev = -1.0
        for v in [i / 10 for i in range(11)]:
            feats = _base() | {"cos": 0.3, "lex": 0.3, "coverage": 0.5} | {f: v}
            s = calibrated(feats, mode)
            assert s >= prev
            prev = s


def test_no_evidence_falls_below_min_score_and_strong_evidence_clears_it() -> None:
    nothing = _base()
    assert calibrated(nothing, "hybrid") < DEFAULT_MIN_SCORE
    assert calibrated(nothing, "lexical") < DEFAULT_MIN_SCORE
    assert calibrated(nothing, "semantic") < DEFAULT_MIN_SCORE
    # Strong: the query's words are the definition's name, and both channels agree.
    strong = _base() | {
        "cos": 0.8, "lex": 0.99, "coverage": 1.0, "rank_lex": 1.0, "rank_sem": 1.0, "symbol": 1.0,
        "name": 1.0,
    }  # fmt: skip
    for mode in MODES:
        assert calibrated(strong, mode) > DEFAULT_MIN_SCORE


def test_bm25_strength_and_coverage_are_bounded() -> None:
    assert bm25_strength(None, 3) == 0.0
    assert 0.0 < bm25_strength(1.0, 3) < bm25_strength(10.0, 3) < 1.0
    words = query_info("parse the config file").words
    assert text_coverage(words, "def parse_config(path):") == pytest.approx(2 / 3)
    assert text_coverage((), "anything") == 0.0


def test_candidates_missing_from_the_semantic_list_get_its_floor_cosine() -> None:
    a = cand(row("a"), cosine=0.7, semantic_rank=0)
    b = cand(row("b", "b.py"), cosine=0.4, semantic_rank=1)
    lex_only = cand(row("c", "c.py"), bm25=4.0, lexical_rank=0)
    out = {c.row.id: c for c in score_candidates([a, b, lex_only], query_info("x y"), "hybrid")}
    assert out["c"].features["cos"] == pytest.approx(0.4)
    assert out["a"].features["cos"] == pytest.approx(0.7)


def test_query_signals_describe_the_whole_list() -> None:
    feats = [{"lex": bm25_strength(12.0, 3)}, {"lex": bm25_strength(3.0, 3)}]
    q = query_signals(feats, [0.4, 0.65, 0.5], z_top=7.0, n_words=3)
    assert q["z_top"] == 7.0
    assert q["cos_top"] == pytest.approx(0.65)
    assert q["cos_gap"] == pytest.approx(0.15)  # lead of the best cosine over the second
    assert q["lex_top"] == pytest.approx(feats[0]["lex"])
    assert q["bm25_per_word"] == pytest.approx(12.0 / 3 / 10)  # read back from `lex`
    assert query_signals([], [], 0.0, 0) == {
        "z_top": 0.0, "cos_top": 0.0, "cos_gap": 0.0, "lex_top": 0.0, "bm25_per_word": 0.0,
        "nwords": 0.0,
    }  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_list_evidence_never_lowers_a_score_and_scores_fall_with_relevance(mode: str) -> None:
    assert SEARCH_RANK_SLOPE[mode] >= 0.1  # strictly increasing in z within a list
    for g, w in SEARCH_ANSWER_WEIGHTS[mode].items():
        if g != "nwords":
            assert w >= 0, f"{mode}: answer weight of {g} is negative"
    hits = [
        cand(row(f"c{i}", f"m{i}.py"), cosine=0.7 - 0.05 * i, semantic_rank=i, bm25=9.0 - i,
             lexical_rank=i)
        for i in range(5)
    ]  # fmt: skip
    out = score_candidates(hits, query_info("parse config file"), mode)
    scores = [c.score for c in out]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_a_stronger_list_lifts_the_same_hit() -> None:
    """The same hit scores higher when the list's best cosine is higher (the workspace answers)."""
    feats = _base() | {"cos": 0.45, "lex": 0.8, "coverage": 0.5}
    weak = query_signals([feats], [0.45, 0.44], 0.0, 3)
    strong = query_signals([feats], [0.7, 0.45], 0.0, 3)
    weak["z_top"] = strong["z_top"] = relevance(feats, "hybrid")
    assert calibrated(feats, "hybrid", strong) > calibrated(feats, "hybrid", weak)


def test_name_signal_finds_query_words_glued_into_the_definitions_name() -> None:
    q = query_info("Return a complete week as a table row")
    r = row("w", "calendar.py", symbol="HTMLCalendar.formatweek", text="def formatweek(self):\n")
    f = score_candidates([cand(r, bm25=3.0, lexical_rank=0)], q, "hybrid")[0].features
    assert f["symbol"] == 0.0  # no whole word of the query is a word of the symbol
    assert f["name"] == pytest.approx(1 / 5)  # "week" is inside "formatweek"
