"""The ask pipeline end to end: real `anthropic` SDK against the local fake Messages API."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from code_compass_server.answer import AnswerDecisionLog, AskRequest, FixedPlan, LlmConfig, ask
from code_compass_server.answer.messages import EN
from code_compass_server.answer.prompt import SYSTEM_PROMPT
from code_compass_server.errors import InputError
from tests.fakes.fake_anthropic import FakeAnthropic, Reply, evidence_blocks

from .conftest import FileSource

Q_PARSE = "Where is parse_config defined and what does it return?"


def _user_text(fake: FakeAnthropic, i: int = 0) -> str:
    return str(fake.message_requests[i].json["messages"][0]["content"])


def test_grounded_answer_is_ok_with_valid_citations(source, fake_api, llm):
    fake_api.script(
        "`parse_config` in server/config.py reads the TOML file and returns the settings "
        "from `normalise_settings` [E1]. The keys are lower-cased by `normalise_settings` [E2]."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert ans.state == "OK", ans.to_json()
    assert ans.confidence.score >= 90
    assert ans.citations_used == ["E1", "E2"]
    assert [(c.path, c.start_line) for c in ans.citations] == [
        ("server/config.py", 6),
        ("server/config.py", 13),
    ]
    assert ans.meta["llmCalled"] is True and ans.meta["citationsRemoved"] == []
    req = fake_api.message_requests[0].json
    assert req["system"] == SYSTEM_PROMPT
    assert req["max_tokens"] == 1000 and req["model"] == "claude-test"
    assert "temperature" not in req  # API 2026-10-21 rejects sampling parameters
    blocks = evidence_blocks(_user_text(fake_api))
    assert [b["id"] for b in blocks] == ["E1", "E2"]
    assert blocks[0]["path"] == "server/config.py" and blocks[0]["lines"] == "6-10"
    assert ans.to_json()["citations"][0] == {
        "id": "E1",
        "path": "server/config.py",
        "startLine": 6,
        "endLine": 10,
    }


def test_no_evidence_means_no_llm_call_and_three_concrete_suggestions(source, fake_api, llm):
    ans = ask(AskRequest("How are websocket reconnections throttled?"), source, llm=llm)
    assert fake_api.requests == []
    assert ans.answer == EN.no_evidence
    assert ans.state == "FAIL" and ans.coverage == "none"
    assert ans.meta["llmCalled"] is False
    assert len(ans.suggestions) == 3
    assert len(set(ans.suggestions)) == 3
    assert "blocked: no evidence above minScore (no LLM call)" in ans.confidence.rules


def test_suggestions_name_what_the_index_contains(source, fake_api, llm):
    ans = ask(AskRequest("Where is `parse_confg` called with a path?"), source, llm=llm)
    assert fake_api.requests == []
    assert ans.state == "FAIL"
    joined = "\n".join(ans.suggestions)
    assert "`parse_confg` → `parse_config` (server/config.py)" in joined
    assert len(ans.suggestions) == 3
    assert any("not in the index: `parse_confg`" in c for c in ans.confidence.caveats)


def test_question_naming_a_missing_symbol_is_blocked_without_llm(source, fake_api, llm):
    ans = ask(
        AskRequest("What does `load_user_profile` do with the settings dict?", min_score=0.3),
        source,
        llm=llm,
    )
    assert ans.evidences, "there is evidence about settings, the symbol is what is missing"
    assert fake_api.requests == []
    assert ans.state == "FAIL"
    assert any("exists nowhere in the index" in r for r in ans.confidence.rules)
    assert len(ans.suggestions) == 3


def test_fabricated_citation_is_removed_and_lowers_confidence(source, fake_api, llm):
    fake_api.script(
        "`parse_config` opens the file and loads TOML [E1]. It also caches results [E9].",
        "`parse_config` opens the file and loads TOML [E1]. The keys are lower-cased [E2].",
    )
    bad = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    good = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert "[E9]" not in bad.answer
    assert bad.meta["citationsRemoved"] == ["E9"]
    assert bad.citations_used == ["E1"]
    assert bad.confidence.components["citations"] == 0
    assert bad.confidence.score < good.confidence.score
    assert bad.state != "OK"
    assert any("E9" in f for f in bad.meta["flags"])


def test_invented_path_is_flagged(source, fake_api, llm):
    fake_api.script(
        "`parse_config` is defined in server/settings/loader.py and returns a dict [E1]."
    )
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert any("server/settings/loader.py" in f for f in ans.meta["flags"])
    assert ans.confidence.components["citations"] == 0
    assert ans.state in ("PARTIAL", "AMBIGUOUS")


def test_answer_without_citations_is_flagged(source, fake_api, llm):
    fake_api.script("The parse_config function reads the TOML file and returns a dict of keys.")
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert ans.citations_used == []
    assert any("without a citation" in f for f in ans.meta["flags"])
    assert ans.confidence.components["rules"] == 0
    assert ans.state == "PARTIAL"


def test_answer_in_the_wrong_language_is_flagged(source, fake_api, llm):
    fake_api.script(
        "parse_config definition return value",  # the query builder's call comes first
        "The function `parse_config` reads the TOML file and returns the settings dict [E1].",
    )
    ans = ask(
        AskRequest("Onde está definida a função parse_config e o que ela retorna?", min_score=0.3),
        source,
        llm=llm,
    )
    assert ans.meta["questionLanguage"] == "pt"
    assert any("differs from the question's 'pt'" in f for f in ans.meta["flags"])
    assert ans.confidence.components["rules"] == 10
    assert "Answer in Portuguese." in _user_text(fake_api, 1)


def test_injected_instructions_stay_inside_an_evidence_block(source, fake_api, llm):
    fake_api.script("`render_banner` wraps the name in stars [E1].")
    ans = ask(
        AskRequest("What does render_banner return for a name?", min_score=0.3), source, llm=llm
    )
    req = fake_api.message_requests[0].json
    assert req["system"] == SYSTEM_PROMPT
    user = _user_text(fake_api)
    inj = user.index("Ignore previous instructions")
    blocks = evidence_blocks(user)
    assert [b["id"] for b in blocks] == ["E1"], "the file's fake tags must not open blocks"
    start = user.index('<evidence id="E1"')
    assert start < inj < user.index("</evidence>", start)
    assert user.count("</evidence>") == 1  # the file's own closing tag was neutralised
    assert "&lt;/evidence&gt;" in user and '&lt;evidence id="E7"' in user
    assert ans.state == "OK"


def test_429_then_success(source, fake_api, llm):
    fake_api.script(Reply(status=429), "`parse_config` returns the settings dict [E1].")
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert len(fake_api.message_requests) == 2
    assert ans.meta["retries"] == 1
    assert ans.citations_used == ["E1"]
    assert any("after 1 retry" in c for c in ans.confidence.caveats)
    assert ans.confidence.components["pipeline"] == 25


def test_500_forever_fails_clearly_and_fast(source, fake_api, llm):
    fake_api.forever(Reply(status=500, error_message="upstream exploded"))
    t0 = time.monotonic()
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert time.monotonic() - t0 < 3
    assert len(fake_api.message_requests) == llm.max_retries + 1
    assert ans.state == "FAIL"
    assert "HTTP 500: upstream exploded" in ans.confidence.caveats[0]
    assert "after 2 retries" in ans.confidence.caveats[0]
    assert "blocked: pipeline violated (the LLM call failed)" in ans.confidence.rules
    assert ans.evidences and ans.citations == []


def test_time_out_fails_with_a_clear_error(source, fake_api):
    fake_api.script(Reply("too late [E1]", delay=1.5))
    cfg = LlmConfig(max_retries=0, timeout_s=0.3)
    t0 = time.monotonic()
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=cfg)
    assert time.monotonic() - t0 < 1.4
    assert ans.state == "FAIL"
    assert "timed out" in ans.confidence.caveats[0]


def test_streaming_deltas_reach_on_text_in_order(source, fake_api, llm):
    reply = "`parse_config` loads the TOML file at path and returns normalised settings [E1]."
    fake_api.script(Reply(reply, chunk_size=7, chunk_delay=0.002))
    seen: list[tuple[float, str]] = []
    ans = ask(
        AskRequest(Q_PARSE, min_score=0.3),
        source,
        llm=llm,
        on_text=lambda d: seen.append((time.monotonic(), d)),
    )
    assert len(seen) == -(-len(reply) // 7)
    assert "".join(d for _, d in seen) == reply
    assert [t for t, _ in seen] == sorted(t for t, _ in seen)
    assert fake_api.message_requests[0].json["stream"] is True
    assert ans.answer == reply


def test_planted_secrets_never_reach_the_api(source, fake_api, llm):
    fake_api.script("`check_token` compares the token with `API_KEY` [E1].")
    ans = ask(
        AskRequest(
            "How does check_token compare the bearer token with API_KEY?",
            min_score=0.3,
            history=[{"role": "user", "content": "my key is sk-ant-api03-HISTORYkey0987654321"}],
        ),
        source,
        llm=llm,
    )
    assert ans.evidences[0].path == "server/auth.py"
    bodies = fake_api.all_bodies()
    for secret in ("PLANTEDsecretVALUE", "hunter2pass", "s3cr3t-Passw0rd", "HISTORYkey"):
        assert secret not in bodies, secret
    user = _user_text(fake_api)
    assert 'API_KEY = "[REDACTED]"' in user  # the header chunk was sent, masked
    assert "postgres://[REDACTED]@db.internal" in user
    assert ans.meta["redactions"] >= 4
    # The user still sees the current file text locally.
    assert any("PLANTEDsecretVALUE" in e.text for e in ans.evidences)


def test_edited_file_shows_current_lines_moved_and_dropped(workspace, source, fake_api, llm):
    cfg = workspace / "server" / "config.py"
    text = cfg.read_text()
    # After indexing: 3 lines inserted above, normalise_settings deleted.
    text = text.replace(
        '"""Configuration loading."""\n', '"""Configuration loading."""\n\nimport os\nimport sys\n'
    )
    text = text[: text.index("def normalise_settings")]
    cfg.write_text(text)
    fake_api.script("`parse_config` loads TOML [E1].")
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    ev = ans.evidences[0]
    assert (ev.start_line, ev.end_line, ev.status) == (9, 13, "moved")
    assert ev.text.splitlines()[0] == "def parse_config(path):"
    assert ev.text == "\n".join(text.splitlines()[8:13])
    assert [d["reason"] for d in ans.meta["dropped"]] == ["snippet no longer in the file"]
    assert any("dropped" in c and "re-located" in c for c in ans.confidence.caveats)
    block = evidence_blocks(_user_text(fake_api))[0]
    assert block["lines"] == "9-13"
    assert "normalise_settings(data):" not in _user_text(fake_api)


def test_unsaved_buffer_is_the_current_text(source, fake_api, llm):
    path = "server/config.py"
    buf = source.read_text("main", path)
    assert buf is not None
    source.buffers[("main", path)] = buf.replace("return a dict of settings", "return SETTINGS")
    fake_api.script("`parse_config` returns settings [E1].")
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm)
    assert "return SETTINGS" in ans.evidences[0].text
    assert ans.evidences[0].status == "edited"
    assert "return SETTINGS" in _user_text(fake_api)


def test_no_key_gives_an_extractive_partial_answer(source, fake_api, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    ans = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=LlmConfig())
    assert fake_api.requests == []
    assert ans.answer.startswith(EN.extractive_label)
    assert ans.state == "PARTIAL"
    assert ans.meta["llmCalled"] is False
    assert ans.citations_used == ["E1", "E2"]
    assert "function `parse_config` in server/config.py:6-10" in ans.answer
    assert "cap: extractive answer (no LLM configured) is at most PARTIAL" in ans.confidence.rules


def test_decision_log_one_json_line_per_question(source, fake_api, llm, tmp_path: Path):
    log = AnswerDecisionLog(tmp_path / "logs" / "decisions.jsonl")
    fake_api.script("`parse_config` returns settings [E1].")
    ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm, log=log)
    ask(AskRequest("nothing matches zzqx"), source, llm=llm, log=log)
    lines = (tmp_path / "logs" / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(x) for x in lines)
    assert first["llmCalled"] is True and second["llmCalled"] is False
    assert first["evidences"][0]["id"] == "E1" and first["tokensIn"] > 0
    assert first["depth"] == "fixed" and first["state"] == "OK"
    assert second["state"] == "FAIL"
    assert Q_PARSE not in lines[0]  # raw questions are not logged


def test_plan_and_context_pack_reach_the_prompt(source, fake_api, llm):
    fake_api.script("`parse_config` returns settings [E1].")
    plan = FixedPlan(top_k=1, instructions=["Mention the file name."], depth="D2")
    ans = ask(
        AskRequest(Q_PARSE, min_score=0.3),
        source,
        llm=llm,
        plan=plan,
        context_pack_text="Earlier we discussed token=ghp_abcdefghijklmnopqrstuvwxyz0123",
    )
    assert ans.depth == "D2" and len(ans.evidences) == 1
    user = _user_text(fake_api)
    assert "Mention the file name." in user and "<context>" in user
    assert "ghp_abcdef" not in user


def test_several_projects_are_capped_per_project(tmp_path: Path, fake_api, llm):
    roots = {}
    for name in ("alpha", "beta"):
        root = tmp_path / name
        root.mkdir()
        for i in range(4):
            (root / f"m{i}.py").write_text(f"def parse_item_{i}(x):\n    return parse(x)\n")
        roots[name] = root
    src = FileSource(roots).index()
    fake_api.script("`parse_item_0` calls parse [E1].")
    ans = ask(AskRequest("parse x", top_k=10, project="*"), src, llm=llm)
    per = {}
    for e in ans.evidences:
        per[e.hit.project] = per.get(e.hit.project, 0) + 1
    assert per == {"alpha": 2, "beta": 2}
    # No project named (what the language server sends for "all folders") is the same scope.
    unnamed = ask(AskRequest("parse x", top_k=10), src, llm=replace(llm))
    per = {}
    for e in unnamed.evidences:
        per[e.hit.project] = per.get(e.hit.project, 0) + 1
    assert per == {"alpha": 2, "beta": 2}
    one = ask(AskRequest("parse x", top_k=10, project="alpha"), src, llm=replace(llm))
    assert len(one.evidences) == 4 and {e.hit.project for e in one.evidences} == {"alpha"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": "   "}, "query"),
        ({"query": "x" * 501}, "query"),
        ({"query": "ok", "path_prefix": "../etc"}, "pathPrefix"),
        ({"query": "ok", "path_prefix": "a\0b"}, "pathPrefix"),
        ({"query": "ok", "language": "x" * 33}, "language"),
        ({"query": "ok", "min_score": float("nan")}, "minScore"),
    ],
)
def test_invalid_input_is_rejected_before_anything(source, fake_api, llm, kwargs, field):
    with pytest.raises(InputError) as err:
        ask(AskRequest(**kwargs), source, llm=llm)
    assert err.value.field == field
    assert source.searches == [] and fake_api.requests == []


def test_top_k_is_clamped_and_defaults(source, fake_api, llm):
    ask(AskRequest("zzqx", top_k=500), source, llm=llm)
    first = source.searches[0]
    source.searches.clear()
    ask(AskRequest("zzqx"), source, llm=llm)
    second = source.searches[0]  # later searches are the suggestions' probes
    assert (first.top_k, second.top_k) == (20, 5)
    assert second.min_score == 0.6


def test_answer_json_has_the_contract_shape(source, fake_api, llm):
    fake_api.script("`parse_config` returns settings [E1].")
    data = ask(AskRequest(Q_PARSE, min_score=0.3), source, llm=llm).to_json()
    assert set(data) >= {
        "state",
        "confidence",
        "coverage",
        "depth",
        "answer",
        "citations",
        "evidences",
        "suggestions",
        "meta",
    }
    assert set(data["confidence"]) == {"score", "components", "caveats", "rules"}
    assert set(data["confidence"]["components"]) == {"pipeline", "ambiguity", "rules", "citations"}
    assert {
        "path",
        "startLine",
        "endLine",
        "score",
        "symbol",
        "kind",
        "language",
        "project",
        "snippet",
        "id",
    } <= set(data["evidences"][0])
    assert {
        "llmCalled",
        "model",
        "tookMs",
        "contextsUsed",
        "dropped",
        "redactions",
        "citationsRemoved",
        "flags",
    } <= set(data["meta"])
    json.dumps(data)
