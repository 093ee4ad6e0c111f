"""The calibrated score: in [0, 1], monotonic in the evidence, 0.6 meaningful."""

from __future__ import annotations

import itertools

import pytest

from code_compass.constants import DEFAULT_MIN_SCORE, SEARCH_WEIGHTS
from code_compass.search.calibration import MODES, calibrated, score_candidates
from code_compass.search.signals import FEATURES, bm25_strength, query_info, text_coverage
from tests.search.helpers import cand, row

# Signals that say "this chunk matches the query": more of them can never lower the score.
EVIDENCE = ("cos", "lex", "coverage", "symbol")


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
    strong = _base() | {
        "cos": 0.8, "lex": 0.95, "coverage": 1.0, "rank_lex": 1.0, "rank_sem": 1.0, "symbol": 1.0
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
