"""A Portuguese question reads Portuguese: refusal, suggestions, caveats, extractive framing;
and the query builder's model call: only with a key, its own budget and time-out, a fallback."""

from __future__ import annotations

import string
import time
from dataclasses import fields
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, LlmConfig, ask
from code_compass_server.answer.messages import EN, PT, Messages
from code_compass_server.answer.query_rewrite import REWRITE_SYSTEM, rewrite_query
from code_compass_server.constants import QUERY_REWRITE_MAX_TOKENS
from code_compass_server.engine import Engine
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

from .conftest import FileSource

SEED_REFUSAL = "Sem evidência suficiente. Tente refinar a pergunta ou ajustar os filtros."
PT_PARSE = "Onde está definida a função parse_config e o que ela retorna?"


def _english_templates() -> list[str]:
    """The fixed English beginnings of every English message (before its first field)."""
    out = []
    for f in fields(Messages):
        value = getattr(EN, f.name)
        for text in value if isinstance(value, tuple) else [value]:
            if isinstance(text, str) and len(text.split("{")[0]) > 8:
                out.append(text.split("{")[0])
    return out


def _is_english(text: str) -> bool:
    return any(text.startswith(t) for t in _english_templates())


def test_the_catalogues_have_the_same_messages_and_fields() -> None:
    names = string.Formatter()
    for f in fields(Messages):
        en, pt = getattr(EN, f.name), getattr(PT, f.name)
        if isinstance(en, str) and f.name != "language":
            assert (pt and pt != en) or f.name == "other_languages", f.name
            assert {n for _, n, _, _ in names.parse(en) if n} == {
                n for _, n, _, _ in names.parse(pt) if n
            }, f.name
    assert len(EN.generic) == len(PT.generic) == 3
    assert PT.no_evidence == SEED_REFUSAL


def test_no_evidence_refusal_suggestions_and_caveats_are_portuguese(source: FileSource) -> None:
    ans = ask(AskRequest("como configuro o agendador de filas do kubernetes?"), source)
    assert ans.state == "FAIL" and ans.coverage == "none"
    assert ans.answer == SEED_REFUSAL
    assert ans.meta["questionLanguage"] == "pt"
    assert ans.meta["query"]["source"] == "lexicon"
    assert len(ans.suggestions) == 3
    assert not any(_is_english(s) for s in ans.suggestions), ans.suggestions
    assert ans.confidence.caveats and all(
        c.startswith("busca: nenhuma evidência") for c in ans.confidence.caveats
    )


def test_unknown_symbol_refusal_is_portuguese(source: FileSource) -> None:
    ans = ask(AskRequest("onde fica definida a função parse_confg?", min_score=0.1), source)
    assert ans.state == "FAIL"
    assert ans.answer.startswith("Não é possível responder")
    assert "fora do índice: `parse_confg`" in ans.confidence.caveats
    assert any(
        s.startswith("Confira a grafia: `parse_confg` → `parse_config`") for s in ans.suggestions
    )


def test_extractive_answer_is_framed_in_portuguese_and_still_verified(
    source: FileSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ans = ask(AskRequest(PT_PARSE, min_score=0.3), source)
    lines = ans.answer.split("\n")
    assert lines[0] == f"{PT.extractive_label}. {PT.extractive_intro}"
    assert lines[-1] == PT.extractive_footer
    assert any("função `parse_config` em server/config.py:" in ln for ln in lines)
    assert ans.citations_used  # the body's [E#] were read: the frame was recognised
    assert ans.meta["flags"] == []  # the Portuguese label and footer make no claims
    assert PT.extractive_caveat in ans.confidence.caveats
    assert not any(_is_english(c) for c in ans.confidence.caveats)


def test_english_question_keeps_english_messages(source: FileSource) -> None:
    ans = ask(AskRequest("how do I configure the kubernetes queue scheduler?"), source)
    assert ans.answer == EN.no_evidence
    assert ans.meta["query"] == {
        "language": "en",
        "rewritten": "how do I configure the kubernetes queue scheduler?",
        "source": "none",
        "added": [],
    }


# --- the query builder's model call ---------------------------------------------------


def test_no_call_of_any_kind_without_a_key(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        engine = Engine.open(tmp_path / "storage")
        try:
            engine.add_project(workspace)
            engine.index(embed=False)
            out = engine.ask({"query": PT_PARSE, "minScore": 0.1})
            out_none = engine.ask({"query": "onde fica o agendador do kubernetes?"})
        finally:
            engine.close()
        assert fake.requests == []
    assert out["meta"]["query"]["source"] == "lexicon" and not out["meta"]["llmCalled"]
    assert out["evidences"] and out["evidences"][0]["path"] == "server/config.py"
    assert out_none["answer"] == SEED_REFUSAL


def test_model_rewrite_feeds_retrieval_and_the_answer_is_asked_in_portuguese(
    source: FileSource, fake_api: FakeAnthropic, llm: LlmConfig
) -> None:
    fake_api.script(
        "parse_config definition returns settings dict TOML",
        "`parse_config` lê o arquivo TOML e devolve um dicionário de configurações [E1].",
    )
    cheap = LlmConfig(model="claude-test", query_model="claude-small", max_retries=0, timeout_s=5.0)
    ans = ask(AskRequest(PT_PARSE, min_score=0.3), source, llm=cheap)
    rewrite, answer = fake_api.message_requests
    assert rewrite.json["model"] == "claude-small"
    assert rewrite.json["max_tokens"] == QUERY_REWRITE_MAX_TOKENS < cheap.max_tokens
    assert rewrite.json["system"] == REWRITE_SYSTEM
    assert "Portuguese" in rewrite.json["messages"][0]["content"]
    assert answer.json["model"] == "claude-test"
    assert "Answer in Portuguese." in answer.json["messages"][0]["content"]
    q = ans.meta["query"]
    assert q["source"] == "llm" and q["llmCalled"] is True
    assert q["rewritten"] == "parse_config definition returns settings dict TOML"
    # Retrieval searched with the model's rendering (and the offline words for BM25).
    searched = source.searches[0]
    assert searched.rewrite is not None and searched.rewrite.source == "llm"
    assert ans.citations_used == ["E1"] and ans.meta["llmCalled"]


def test_model_rewrite_has_its_own_time_out_and_falls_back(fake_api: FakeAnthropic) -> None:
    fake_api.script(Reply("too late", delay=5.0))
    llm = LlmConfig(model="claude-test", max_retries=3, timeout_s=60.0)
    started = time.monotonic()
    out = rewrite_query(PT_PARSE, llm, timeout_s=0.3)
    assert time.monotonic() - started < 4.0  # the answer's 60 s time-out did not apply
    assert len(fake_api.message_requests) == 1  # and neither did its retries
    assert out.llm_called and out.error and "timed out" in out.error
    assert out.query.source == "lexicon"
    assert out.query.rewritten.startswith("where define")


def test_failed_model_rewrite_falls_back_and_the_answer_still_comes(
    source: FileSource, fake_api: FakeAnthropic, llm: LlmConfig
) -> None:
    fake_api.script(Reply(status=500), "`parse_config` devolve as configurações [E1].")
    ans = ask(AskRequest(PT_PARSE, min_score=0.3), source, llm=llm)
    assert len(fake_api.message_requests) == 2  # one failed rewrite, no retry; the answer
    assert ans.meta["query"]["source"] == "lexicon"
    assert "HTTP 500" in ans.meta["query"]["error"]
    assert ans.citations_used == ["E1"]


def test_english_question_makes_no_rewrite_call(
    source: FileSource, fake_api: FakeAnthropic, llm: LlmConfig
) -> None:
    fake_api.script("`parse_config` returns the settings dict [E1].")
    ans = ask(AskRequest("Where is parse_config defined?", min_score=0.3), source, llm=llm)
    assert len(fake_api.message_requests) == 1
    assert ans.meta["query"]["source"] == "none"


def test_a_portuguese_follow_up_stays_d1_and_is_searched_as_rendered(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Depth reads the question as asked, retrieval its rendering: a Portuguese follow-up in a
    conversation is a follow-up (D1), answered in Portuguese, through the offline builder."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    engine = Engine.open(tmp_path / "storage")
    try:
        engine.add_project(workspace)
        engine.index(embed=False)
        first = engine.ask({"query": PT_PARSE, "minScore": 0.1, "conversationId": "pt-thread"})
        follow = engine.ask(
            {"query": "E os valores padrão dela?", "minScore": 0.1, "conversationId": "pt-thread"}
        )
    finally:
        engine.close()
    assert first["depth"] == "D0"
    assert follow["depth"] == "D1", follow["depthSignals"]
    assert follow["meta"]["questionLanguage"] == "pt"
    assert follow["meta"]["query"]["source"] == "lexicon"
    assert not any(_is_english(c) for c in follow["confidence"]["caveats"])
