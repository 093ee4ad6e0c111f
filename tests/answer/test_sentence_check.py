"""Per-sentence verdicts of an answer against the passages each sentence cites."""

from __future__ import annotations

from code_compass.answer import AskRequest, ask
from code_compass.answer.sentence_check import sentence_spans

from .test_pipeline import Q_PARSE


def test_spans_skip_code_and_headings_and_keep_trailing_citations() -> None:
    text = "First claim here [E1]. Second one.\n- an item. [E2]\n```\nx = 1.\n```\n## Head\nLast?"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "First claim here [E1].",
        "Second one.",
        "an item. [E2]",
        "Last?",
    ]


def test_each_sentence_is_judged_against_what_it_cites(source, fake_api, llm) -> None:
    fake_api.script(
        "`parse_config` reads the TOML configuration file and returns the settings [E1]. "
        "Kubernetes operators reconcile helm charts across every cluster namespace [E1]. "
        "The keys are always lower-cased before anything else happens to them."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    got = [(s.verdict, s.citations) for s in ans.sentences]
    assert got == [("supported", ("E1",)), ("unsupported", ("E1",)), ("uncited", ())], got
    for s in ans.sentences:  # offsets point into the answer the client shows
        assert ans.answer[s.start : s.end] == s.text
    assert ans.to_json()["sentences"][1]["verdict"] == "unsupported"


def test_a_refusal_has_no_sentences_to_judge(source, fake_api, llm) -> None:
    ans = ask(
        AskRequest("how does the kubernetes operator reconcile helm charts?"), source, llm=llm
    )
    assert ans.state == "FAIL" and ans.sentences == [] and not fake_api.message_requests
