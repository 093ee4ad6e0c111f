"""List signals of the answerability gate that carry across repositories."""

from __future__ import annotations

import pytest

from code_compass_server.search.calibration import score_candidates
from code_compass_server.search.gate import gate_signals, named_identifiers, question_terms
from code_compass_server.search.signals import query_info
from tests.search.helpers import cand, row
from tests.search.test_calibration import Counts


def _signals(question: str, texts: list[str], df: dict[str, int] | None = None) -> dict:
    hits = [
        cand(row(f"c{i}", f"m{i}.py", symbol=f"f{i}", text=t), bm25=10.0 - i, lexical_rank=i)
        for i, t in enumerate(texts)
    ]
    terms = question_terms(question, Counts(df or {}) if df is not None else None)
    ranked = score_candidates(hits, query_info(question), "lexical", terms)
    return gate_signals(ranked, [c.features["z"] for c in ranked], {}, terms)


def test_a_keyword_argument_no_hit_takes_is_missing() -> None:
    q = "how do I mark a field private with field(private=True)?"
    lacks = _signals(q, ["def field(default=None, init=True, repr=True):\n    ..."])
    takes = _signals(q, ["def field(default=None, private: bool = False):\n    ..."])
    assert lacks["kwarg_named"] == takes["kwarg_named"] == 1.0
    assert lacks["kwarg_missing"] == 1.0
    assert takes["kwarg_missing"] == 0.0
    plain = _signals("how do I mark a field private?", ["def field(default=None):\n    ..."])
    assert plain["kwarg_named"] == plain["kwarg_missing"] == 0.0


def test_question_words_held_together_score_above_the_same_words_apart() -> None:
    q = "how do I set a per route rate limit"
    df = {"route": 30, "rate": 40, "limit": 50, "per": 200, "set": 300}
    together = _signals(q, ["apply a rate limit to each route"], df)
    apart = _signals(q, ["the exchange rate of a route\n...\nno limit applies"], df)
    assert together["phrase3"] > apart["phrase3"]
    assert together["idf_cov3"] == pytest.approx(apart["idf_cov3"])  # same words, either way


def test_acronym_and_dotted_identifiers_are_named_and_abbreviations_are_not() -> None:
    found = named_identifiers("where is the JSONSchemaValidator for JSONField, e.g. in URLs?")
    assert found == ["JSONSchemaValidator", "JSONField"]
    assert named_identifiers("does BehaviorSubject.reset() restore it?") == [
        "BehaviorSubject.reset"
    ]


def test_a_dotted_name_is_in_the_top_hits_only_with_its_owner() -> None:
    q = "how does BehaviorSubject.reset() restore the initial value?"
    other = _signals(q, ["class ReplaySubject:\n    def reset(self): ..."])
    owner = _signals(q, ["class BehaviorSubject:\n    def reset(self): ..."])
    assert other["ident_in_top"] == 0.0
    assert owner["ident_in_top"] == 1.0


def test_where_is_x_declared_does_not_count_declared_as_absent() -> None:
    q = "where is the AuthTypes alias declared?"
    terms = question_terms(q, Counts({"authtypes": 3, "alias": 0}))
    assert "declared" not in terms.words
    assert terms.present == (True, False)  # authtypes, alias
