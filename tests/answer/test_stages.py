"""Each stage of `ask` on its own: validate, plan, retrieve, re-read, grounds, call, verify,
score, assemble. The end-to-end behaviour is in test_pipeline.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from code_compass_server.answer.actions import Suggestions
from code_compass_server.answer.ambiguity import AmbiguityResult
from code_compass_server.answer.answer_log import answer_record
from code_compass_server.answer.assembly import answer_meta, assemble
from code_compass_server.answer.confidence import (
    RULE_FABRICATED_CAP,
    RULE_LLM_FAILED,
    RULE_NO_EVIDENCE,
    RULE_NO_LLM_CAP,
    RULE_UNKNOWN_SYMBOL,
)
from code_compass_server.answer.extractive import extractive_answer
from code_compass_server.answer.generation import EXTRACTIVE, MODEL, REFUSED, Generation, generate
from code_compass_server.answer.grounds import Grounds, Refusal, missing_symbols, refusal
from code_compass_server.answer.llm import LlmConfig, LlmError, LlmResult, complete
from code_compass_server.answer.messages import EN
from code_compass_server.answer.prompt import PromptInput
from code_compass_server.answer.request import AskRequest
from code_compass_server.answer.reread import MOVED, Dropped, Evidence, Reread
from code_compass_server.answer.retrieval import retrieve
from code_compass_server.answer.scope import FixedPlan, Scope, plan_scope
from code_compass_server.answer.scoring import score
from code_compass_server.answer.sentence_check import judge_sentences
from code_compass_server.answer.stages import Stages
from code_compass_server.answer.verify import Verification, verify, verify_answer
from code_compass_server.constants import (
    MAX_CONTEXTS_PER_PROJECT_WIDE,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
)
from code_compass_server.errors import InputError
from code_compass_server.records import SearchHit, SearchParams
from tests.fakes.fake_anthropic import FakeAnthropic


def _hit(path: str, score: float, project: str = "p", start: int = 1, text: str = "") -> SearchHit:
    body = text or f"def f_{path.replace('/', '_').replace('.', '_')}(x):\n    return x"
    end = start + len(body.splitlines()) - 1
    return SearchHit(path, start, end, score, "", "function", "python", project, body, text=body)


def _ev(i: int, path: str, text: str, score: float = 0.8, symbol: str = "") -> Evidence:
    end = len(text.splitlines())
    hit = SearchHit(path, 1, end, score, symbol, "function", "python", "p", text)
    return Evidence(f"E{i}", hit, text, 1, end)


@dataclass
class ListSource:
    """An EvidenceSource over a fixed list of hits, returned as the index would (unfiltered)."""

    hits: list[SearchHit]
    files: dict[str, str] = field(default_factory=dict)
    symbols: set[str] = field(default_factory=set)
    searches: list[SearchParams] = field(default_factory=list)

    def search(self, params: SearchParams) -> list[SearchHit]:
        self.searches.append(params)
        return list(self.hits)

    def read_text(self, project: str, path: str) -> str | None:
        return self.files.get(path)

    def symbol_exists(self, name: str) -> bool:
        return name in self.symbols

    def nearby_terms(self, query: str, limit: int) -> list[str]:
        return []

    def projects(self) -> list[str]:
        return ["p"]

    def index_unfinished(self) -> bool:
        return False


# --- validate ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"query": 42}, "query", "must be a string"),
        ({"query": "   "}, "query", "must not be empty"),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "query", f"the limit is {MAX_QUERY_CHARS}"),
        ({"top_k": "five"}, "topK", "must be a number between 1 and 20"),
        ({"top_k": float("inf")}, "topK", "must be a finite number"),
        ({"path_prefix": 7}, "pathPrefix", "must be a string"),
        ({"path_prefix": "a\0b"}, "pathPrefix", "must not contain a NUL character"),
        ({"path_prefix": "a" * 201}, "pathPrefix", "the limit is 200"),
        ({"path_prefix": "src/../etc"}, "pathPrefix", "must not contain '..'"),
        ({"language": ["py"]}, "language", "must be a string"),
        ({"language": "x" * 33}, "language", "the limit is 32"),
        ({"min_score": "high"}, "minScore", "must be a number between 0 and 1"),
        ({"min_score": True}, "minScore", "must be a number between 0 and 1"),
        ({"min_score": float("nan")}, "minScore", "must be a finite number"),
        ({"project": 3}, "project", "must be a project name"),
    ],
)
def test_validate_rejects_each_bad_field_with_its_message(
    kwargs: dict[str, Any], field: str, message: str
) -> None:
    request = AskRequest(**{"query": "where is x", **kwargs})
    with pytest.raises(InputError) as err:
        request.validated()
    assert err.value.field == field
    assert message in err.value.message


def test_validate_defaults_and_normalises() -> None:
    params = AskRequest("  where is x ", path_prefix="./src/app", language=" Python ").validated()
    assert (params.query, params.top_k, params.min_score) == ("where is x", 5, 0.6)
    assert (params.path_prefix, params.language, params.mode) == ("src/app", "python", "hybrid")
    assert AskRequest("q", top_k=99).validated().top_k == MAX_TOP_K


def test_request_from_json_rejects_malformed_history() -> None:
    with pytest.raises(InputError) as err:
        AskRequest.from_json({"query": "q", "history": [{"role": "user"}]})
    assert err.value.field == "history"
    req = AskRequest.from_json({"question": "q", "topK": 3, "history": [{"content": "hi"}]})
    assert (req.query, req.top_k, req.history) == ("q", 3, [{"role": "user", "content": "hi"}])


# --- plan ----------------------------------------------------------------------------------


def test_plan_scope_clamps_top_k_and_reports_its_rules() -> None:
    params = AskRequest("q", min_score=0.3, project="*").validated()
    scope = plan_scope(params, FixedPlan(top_k=50, instructions=["Be brief."], depth="D2"))
    assert (scope.top_k, scope.depth, scope.instructions) == (MAX_TOP_K, "D2", ("Be brief.",))
    assert scope.applied == (
        "minScore >= 0.3",
        f"top 20, at most {MAX_CONTEXTS_PER_PROJECT_WIDE} per project",
        "evidence re-read from the current text",
    )
    default = plan_scope(AskRequest("q", top_k=3).validated())
    assert (default.top_k, default.depth, default.applied[1]) == (3, "fixed", "top 3")
    assert plan_scope(params, FixedPlan(top_k=0)).top_k == 1


# --- retrieve ------------------------------------------------------------------------------


def test_retrieve_applies_min_score_best_first_and_top_k() -> None:
    source = ListSource([_hit("a.py", 0.5), _hit("b.py", 0.9), _hit("c.py", 0.59), _hit("d", 0.7)])
    params = AskRequest("q", min_score=0.6).validated()
    assert [h.path for h in retrieve(source, params, top_k=5)] == ["b.py", "d"]
    assert (source.searches[0].top_k, source.searches[0].mode) == (5, "hybrid")
    assert [h.path for h in retrieve(source, params, top_k=1)] == ["b.py"]
    unfiltered = replace(params, min_score=None)
    assert len(retrieve(source, unfiltered, top_k=5)) == 4


def test_retrieve_caps_each_project_only_when_all_are_searched() -> None:
    hits = [_hit(f"m{i}.py", 0.9 - i / 100, project="alpha") for i in range(4)]
    hits += [_hit(f"n{i}.py", 0.8 - i / 100, project="beta") for i in range(4)]
    source = ListSource(hits)
    wide = retrieve(source, AskRequest("q", min_score=0.1, project="*").validated(), top_k=10)
    per: dict[str, int] = {}
    for h in wide:
        per[h.project] = per.get(h.project, 0) + 1
    assert per == {"alpha": MAX_CONTEXTS_PER_PROJECT_WIDE, "beta": MAX_CONTEXTS_PER_PROJECT_WIDE}
    one = retrieve(source, AskRequest("q", min_score=0.1, project="alpha").validated(), top_k=10)
    assert len(one) == 8  # one project named: the source's scope, no per-project cap


def test_retrieve_adds_extra_hits_above_the_floor_once() -> None:
    source = ListSource([_hit("a.py", 0.9)])
    params = AskRequest("q", min_score=0.6).validated()
    extra = [_hit("a.py", 0.95), _hit("low.py", 0.2), _hit("claim.py", 0.7)]
    assert [h.path for h in retrieve(source, params, 5, extra)] == ["a.py", "claim.py"]


# --- re-read -------------------------------------------------------------------------------


def test_reread_caveat_names_what_was_dropped_and_moved() -> None:
    assert Reread([_ev(1, "a.py", "x = 1")], []).caveat() is None
    moved = _ev(1, "a.py", "x = 1")
    moved.start_line, moved.status = 4, MOVED
    caveat = Reread([moved], [Dropped("b.py", 3, 9, "file no longer exists")]).caveat()
    assert caveat == (
        "re-read: 1 evidence(s) dropped (b.py:3-9 file no longer exists); "
        "1 evidence(s) re-located in edited files (E1 a.py:1->4 moved)"
    )


# --- grounds (refusal before any call) -----------------------------------------------------


def test_missing_symbols_checks_evidence_text_then_the_symbol_table() -> None:
    source = ListSource([], symbols={"Pool"})
    evs = [_ev(1, "a.py", "def parse_config(path):\n    return load(path)")]
    named = ["parse_config", "db.Pool", "load_user", "cfg.load"]
    assert missing_symbols(named, source, evs) == ["load_user"]


def test_refusal_without_evidence_or_with_a_missing_symbol() -> None:
    none = refusal(Reread([], [Dropped("a.py", 1, 2, "file no longer exists")]), ["ghost"], EN)
    assert none is not None and none.text == EN.no_evidence
    assert none.blocking == (RULE_NO_EVIDENCE, RULE_UNKNOWN_SYMBOL)
    assert none.critical_failure == (
        "retrieval: no evidence above minScore (1 hit(s) dropped as stale)"
    )
    assert none.caveats == ("not in the index: `ghost`",)
    missing = refusal(Reread([_ev(1, "a.py", "x = 1")], []), ["ghost"], EN)
    assert missing is not None and missing.critical_failure is None
    assert missing.blocking == (RULE_UNKNOWN_SYMBOL,)
    assert "`ghost` exists nowhere in the index" in missing.text
    assert refusal(Reread([_ev(1, "a.py", "x = 1")], []), [], EN) is None


# --- call ----------------------------------------------------------------------------------


def _given(evs: list[Evidence]) -> PromptInput:
    return PromptInput("Where is parse_config?", evs, "en")


def test_generate_refused_and_extractive_never_call_the_api(
    fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    evs = [_ev(1, "a.py", "def parse_config(path):\n    return 1", symbol="parse_config")]
    refused = generate(Refusal("No.", (RULE_NO_EVIDENCE,)), _given(evs), LlmConfig())
    assert (refused.text, refused.source, refused.verifiable) == ("No.", REFUSED, False)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    extractive = generate(None, _given(evs), LlmConfig())
    assert extractive.source == EXTRACTIVE and extractive.text == extractive_answer(evs)
    assert extractive.verifiable and not extractive.llm_called
    assert fake_api.requests == []


def test_generate_calls_the_model_with_secrets_masked(fake_api: FakeAnthropic) -> None:
    fake_api.script("`parse_config` returns 1 [E1].")
    evs = [
        _ev(1, "a.py", "def parse_config(path):\n    token = 'ghp_abcdefghijklmnopqrstuvwxyz0123'")
    ]
    gen = generate(None, _given(evs), LlmConfig(model="claude-test"))
    assert (gen.source, gen.text, gen.model) == (
        MODEL,
        "`parse_config` returns 1 [E1].",
        "claude-test",
    )
    assert gen.redactions == 1 and gen.applied() == ["secrets redacted before sending (1)"]
    assert "ghp_abcdef" not in fake_api.all_bodies()


def test_non_streaming_call_shows_the_whole_text_once(fake_api: FakeAnthropic) -> None:
    fake_api.script("Whole answer [E1].")
    seen: list[str] = []
    result = complete(
        LlmConfig(model="claude-test", stream=False),
        "system",
        [{"role": "user", "content": "q"}],
        on_text=seen.append,
    )
    assert result.text == "Whole answer [E1]." and seen == ["Whole answer [E1]."]
    assert not fake_api.message_requests[0].json.get("stream")


# --- verify --------------------------------------------------------------------------------

EVS = [
    _ev(1, "src/config.py", "def parse_config(path):\n    return load_toml(path)", 0.9),
    _ev(2, "src/db.py", "class Pool:\n    def acquire(self):\n        ...", 0.8),
]


def test_verify_flags_an_unknown_e9_citation() -> None:
    v = verify_answer("`parse_config` calls load_toml [E1]. It caches results [E9].", EVS, "q")
    assert v.text == "`parse_config` calls load_toml [E1]. It caches results."
    assert v.removed == ["E9"] and v.citations_used == ["E1"]
    assert v.flags()[0] == "removed citations to evidence never sent: E9"


def test_verify_answer_checks_only_the_body_of_an_extractive_answer() -> None:
    text = extractive_answer(EVS)
    v = verify_answer(text, EVS, "Where is parse_config?", extractive=True)
    assert v.text == text and v.text.startswith(EN.extractive_label)
    assert v.uncited_claims == [] and v.citations_used == ["E1", "E2"]
    judged = judge_sentences(text, EVS, extractive=True)
    assert all(s.verdict == "supported" for s in judged)  # never flagged by its own verifier


# --- score ---------------------------------------------------------------------------------


def _stages(
    *,
    grounds: Grounds | None = None,
    generation: Generation | None = None,
    verification: Verification | None = None,
    evidences: list[Evidence] = EVS,
) -> Stages:
    scope = Scope(5, "fixed", (), ("minScore >= 0.6", "top 5", "re-read"))
    grounds = grounds or Grounds("high", "en", [], AmbiguityResult("none"), None)
    generation = generation or Generation("`parse_config` returns [E1].", MODEL, "m")
    sentences = (
        tuple(judge_sentences(verification.text, list(evidences), extractive=generation.extractive))
        if verification
        else ()
    )
    found = Reread(list(evidences), [])
    return Stages(scope, found, grounds, generation, verification, sentences=sentences)


def test_score_of_a_clean_cited_answer_is_ok_100() -> None:
    v = verify("`parse_config` calls `load_toml` with the path [E1].", EVS, "q")
    state, conf = score(_stages(verification=v))
    assert (state, conf.score) == ("OK", 100)
    assert conf.components == {"pipeline": 40, "ambiguity": 30, "rules": 20, "citations": 10}
    assert "citations verified against the evidence sent" in conf.rules


def test_score_state_follows_the_components() -> None:
    fabricated = verify("`parse_config` calls `load_toml` [E1]. Cached [E9].", EVS, "q")
    state, conf = score(_stages(verification=fabricated))
    assert conf.components["citations"] == 0 and conf.components["pipeline"] == 25
    # 75 would be "OK with a caveat"; an invented source caps the answer at PARTIAL.
    assert (conf.score, state) == (75, "PARTIAL")
    assert RULE_FABRICATED_CAP in conf.rules
    uncited = verify("The parse_config function reads the file and returns a dict.", EVS, "q")
    low = Grounds("low", "en", [], AmbiguityResult("unresolved", "two defs"), None)
    state, conf = score(_stages(grounds=low, verification=uncited))
    assert conf.components == {"pipeline": 15, "ambiguity": 0, "rules": 0, "citations": 10}
    assert (conf.score, state) == (25, "FAIL")


def test_score_caps_and_blocks_whatever_the_points() -> None:
    extractive = Generation(extractive_answer(EVS), EXTRACTIVE)
    v = verify_answer(extractive.text, EVS, "q", extractive=True)
    state, conf = score(_stages(generation=extractive, verification=v))
    assert conf.score == 85 and state == "PARTIAL" and RULE_NO_LLM_CAP in conf.rules
    error = LlmError("LLM call failed: HTTP 500", status=500, retries=2)
    failed = Generation("No answer", MODEL, "m", error=error)
    state, conf = score(_stages(generation=failed))
    assert state == "FAIL" and conf.caveats[0] == "LLM call failed: HTTP 500"
    assert conf.components["pipeline"] == 0 and RULE_LLM_FAILED in conf.rules
    refused = Refusal(EN.no_evidence, (RULE_NO_EVIDENCE,), critical_failure="no evidence")
    nothing = Grounds("none", "en", [], AmbiguityResult("none"), refused)
    state, conf = score(
        _stages(grounds=nothing, generation=Generation(refused.text, REFUSED), evidences=[])
    )
    assert (state, conf.score) == ("FAIL", 30) and conf.rules[-1] == RULE_NO_EVIDENCE


# --- assemble ------------------------------------------------------------------------------


def test_meta_keys_keep_their_order_for_answers_and_failures() -> None:
    result = LlmResult("t [E1]", "m", 10, 5, retries=1, latency_ms=3)
    ok = _stages(generation=Generation("t [E1]", MODEL, "m", result=result, redactions=2))
    tail = ["citationsRemoved", "flags", "questionLanguage", "tokensIn", "tokensOut"]
    head = ["tookMs", "contextsUsed", "dropped", "redactions"]
    meta = answer_meta(ok, took_ms=7)
    assert list(meta) == ["llmCalled", "model", "depth", *head, *tail, "retries", "partialIndex"]
    assert (meta["retries"], meta["tokensIn"], meta["redactions"]) == (1, 10, 2)
    error = LlmError("boom", status=None, retries=2)
    failed = answer_meta(_stages(generation=Generation("x", MODEL, "m", error=error)), 7)
    first = ["llmCalled", "model", "depth", "retries", "error"]
    assert list(failed) == [*first, *head, *tail, "partialIndex"]


def test_assemble_and_log_record_without_the_raw_question() -> None:
    v = verify("`parse_config` calls `load_toml` [E1].", EVS, "q")
    stages = _stages(verification=v)
    state, conf = score(stages)
    answer = assemble(stages, state=state, confidence=conf, suggestions=Suggestions([]), took_ms=4)
    assert answer.citations_used == ["E1"] and answer.citations[0].path == "src/config.py"
    params = AskRequest("Where is parse_config defined?").validated()
    record = answer_record(params, answer, [])
    assert "parse_config defined" not in json.dumps(record)
    assert (record["questionChars"], record["citations"], record["state"]) == (30, ["E1"], "OK")


RST = """\
Configuration Handling
======================

.. versionadded:: 2.0

.. code-block:: python

Applications need some kind of configuration. The config attribute of the
Flask object is the place where Flask itself puts certain configuration values.
Environment variables can be loaded with from_prefixed_env, which reads every
variable starting with FLASK_ and strips the prefix.
Some unrelated closing sentence here.
"""


def test_extractive_quotes_the_lines_that_answer_grouped_by_file_markup_cleaned() -> None:
    docs = _ev(1, "docs/config.rst", RST, 0.9, symbol="Configuration Handling")
    code = _ev(2, "src/app.py", "class App:\n    x = 1\n    def from_env(self):\n        pass", 0.8)
    more = _ev(3, "docs/config.rst", "Other section\n-------------\n\nText.", 0.7)
    text = extractive_answer(
        [docs, code, more], EN, "How are environment variables with a prefix loaded?"
    )
    assert "=====" not in text and ".. versionadded" not in text and ".. code-block" not in text
    assert "Environment variables can be loaded with from_prefixed_env" in text
    assert "Applications need some kind" not in text  # not the first lines: the best ones
    assert text.count("**docs/config.rst**") == 1  # grouped by file
    assert text.index("[E3]") < text.index("**src/app.py**")
    judged = judge_sentences(text, [docs, code, more], extractive=True)
    assert judged and all(s.verdict == "supported" for s in judged)
