"""The calibrated score: in [0, 1], monotonic in the evidence, 0.6 meaningful."""

from __future__ import annotations

import pytest

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.search.calibration import (
    MODES,
    fitted,
    score_candidates,
)
from code_compass_server.search.gate import GATE_SIGNALS, question_terms
from code_compass_server.search.signals import (
    bm25_strength,
    query_info,
    query_signals,
    text_coverage,
)
from tests.search.helpers import cand, row


class Counts:
    """Document counts of a tiny index: the TermCounter the gate reads (LexicalIndex.count)."""

    def __init__(self, df: dict[str, int], n: int = 1000) -> None:
        self.df, self.n = df, n

    def count(self, term: str) -> int:
        return self.df.get(term.lower(), 0)

    def word_count(self, word: str) -> int:
        return self.count(word)

    def num_docs(self) -> int:
        return self.n


QUESTION = "how does parse_config read the settings file"


def _list(n: int, strong: int | None = 0) -> list:
    """n hits of similar weak evidence; hit `strong` (if any) matches the query's name and
    words in both channels."""
    out = []
    for i in range(n):
        if i == strong:
            r = row(
                f"c{i}",
                f"m{i}.py",
                symbol="parse_config",
                text="def parse_config(path):\n    # read the settings file\n",
            )
            out.append(cand(r, cosine=0.75, semantic_rank=0, bm25=30.0, lexical_rank=0))
        else:
            r = row(f"c{i}", f"m{i}.py", symbol=f"helper{i}", text="def helper(x):\n    return x\n")
            out.append(
                cand(
                    r,
                    cosine=0.3 - 0.01 * i,
                    semantic_rank=i + 1,
                    bm25=2.0 - 0.1 * i,
                    lexical_rank=i + 1,
                )
            )
    return out  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_scores_stay_in_unit_interval_and_fall_with_relevance(mode: str) -> None:
    for strong in (0, None):
        out = score_candidates(_list(8, strong), query_info(QUESTION), mode)
        scores = [c.score for c in out]
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)
        assert all(s < scores[0] for s in scores[1:])  # below the best, strictly
        rel = [c.relevance for c in out]
        assert all(0.0 <= r <= s + 1e-12 for r, s in zip(rel, scores, strict=True))


@pytest.mark.parametrize("mode", MODES)
def test_only_one_relevant_hit_cannot_show_two_hits_above_0_9(mode: str) -> None:
    """Saturation regression: one hit matches, the rest share nothing with the query."""
    df = {"parse_config": 1, "parse": 40, "config": 60, "read": 300, "settings": 80, "file": 400}
    terms = question_terms(QUESTION, Counts(df))
    out = score_candidates(_list(10, 0), query_info(QUESTION), mode, terms)
    assert out[0].row.symbol == "parse_config"
    assert sum(c.score >= 0.9 for c in out) <= 1
    assert out[1].score < 0.9 * out[0].score
    # Even hits of equal evidence do not both read ~1: rank costs the second its odds.
    same = score_candidates(_list(5, None), query_info(QUESTION), mode, terms)
    assert same[1].score < min(0.9, same[0].score)


def test_a_named_identifier_that_exists_nowhere_keeps_the_list_below_min_score() -> None:
    q = "what does the TEMPLATES_MINIFY option strip"
    known = Counts({"templates": 50, "option": 200, "strip": 30, "templates_minify": 0})
    exists = Counts({"templates": 50, "option": 200, "strip": 30, "templates_minify": 2})

    def hits() -> list:
        r = row("t", "t.py", symbol="Template.render", text="templates option strip")
        return [cand(r, cosine=0.6, semantic_rank=0, bm25=12.0, lexical_rank=0)]

    missing = score_candidates(hits(), query_info(q), "hybrid", question_terms(q, known))
    there = score_candidates(hits(), query_info(q), "hybrid", question_terms(q, exists))
    assert missing[0].score < DEFAULT_MIN_SCORE
    assert missing[0].score < there[0].score


def test_fitted_weights_have_the_signs_the_model_promises() -> None:
    for mode in MODES:
        gate, hit = fitted()[mode]["gate"]["weights"], fitted()[mode]["hit"]["weights"]
        assert set(gate) <= set(GATE_SIGNALS)
        for g, w in gate.items():
            if g in {"ident_named", "kwarg_named"}:  # naming something: either way
                continue
            negative = {"absent", "ident_missing", "kwarg_missing"}
            assert (w <= 0) == (g in negative), f"{mode}: gate {g} {w}"
        for h in ("dz", "rank", "top"):
            assert hit.get(h, 0.0) >= 0, f"{mode}: hit weight {h} must not be negative"


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


def test_name_signal_finds_query_words_glued_into_the_definitions_name() -> None:
    q = query_info("Return a complete week as a table row")
    r = row("w", "calendar.py", symbol="HTMLCalendar.formatweek", text="def formatweek(self):\n")
    f = score_candidates([cand(r, bm25=3.0, lexical_rank=0)], q, "hybrid")[0].features
    assert f["symbol"] == 0.0  # no whole word of the query is a word of the symbol
    assert f["name"] == pytest.approx(1 / 5)  # "week" is inside "formatweek"
