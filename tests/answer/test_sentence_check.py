"""Per-sentence verdicts of an answer against the passages each sentence cites."""

from __future__ import annotations

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.sentence_check import judge_sentences, sentence_spans
from code_compass_server.records import SearchParams

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


def test_a_number_or_path_the_cited_lines_lack_makes_a_sentence_unsupported(
    source, fake_api, llm
) -> None:
    fake_api.script(
        "`parse_config` reads the TOML configuration file in 3 seconds and returns 42 "
        "settings [E1]. `parse_config` reads the TOML configuration file from "
        "server/loader.py and returns the settings [E1]."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    got = [(s.verdict, s.mismatches) for s in ans.sentences]
    assert got == [("unsupported", ("42",)), ("unsupported", ("server/loader.py",))], got
    assert ans.state != "OK"


def test_a_sentence_whose_citation_was_removed_is_marked(source, fake_api, llm) -> None:
    fake_api.script(
        "`parse_config` reads the TOML configuration file and returns the settings [E1]. "
        "The loader also caches every parsed file for later requests [E9]."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    rows = ans.to_json()["sentences"]
    assert [r["verdict"] for r in rows] == ["supported", "uncited"]
    assert "removedCitations" not in rows[0] and rows[1]["removedCitations"] == ["E9"]
    assert ans.state == "PARTIAL"  # an invented source is never OK


def test_off_topic_but_well_cited_is_not_ok(source, fake_api, llm) -> None:
    fake_api.script(
        "Environment variables override the deployment region of the service [E1]. "
        "Kubernetes operators reconcile helm charts across every cluster namespace [E1]."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert [s.verdict for s in ans.sentences] == ["unsupported", "unsupported"]
    assert ans.confidence.components["rules"] == 0
    assert ans.state != "OK"


def test_similarity_moves_a_verdict_one_step(source) -> None:
    from code_compass_server.answer.reread import reread

    hit = source.search(SearchParams("parse_config", 1, None, None, None))
    evidences = reread(hit, source).evidences
    text = "It turns the file into a mapping of options [E1]."
    plain = judge_sentences(text, evidences)
    assert plain[0].verdict == "unsupported" and plain[0].similarity is None
    close = judge_sentences(text, evidences, similarity=lambda s, p: [0.8] * len(s))
    assert close[0].verdict == "weak" and close[0].similarity == 0.8
    far = judge_sentences(
        "`parse_config` reads the TOML file [E1].", evidences, similarity=lambda s, p: [0.1]
    )
    assert far[0].verdict == "weak"  # the terms say supported, the meaning says otherwise


def test_a_percentage_matches_the_fraction_the_code_writes() -> None:
    from code_compass_server.answer.sentence_check import _mismatches as mismatches
    from code_compass_server.answer.sentence_check import stated_facts

    class _Cited:  # the two fields the check reads
        path = "pricing.py"
        text = "def compute_discount(total):\n    return total * 0.2\n"

    said = "Gold customers get 20% off [E1]."
    assert stated_facts(said)[0] == ["20"]
    assert mismatches(said, [_Cited()]) == ()  # type: ignore[list-item]
    assert mismatches("Gold customers get 25% off [E1].", [_Cited()]) == ("25",)  # type: ignore[list-item]
    assert mismatches("It retries 20 times [E1].", [_Cited()]) == ("20",)  # type: ignore[list-item]
