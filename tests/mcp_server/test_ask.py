"""ask_code over stdio: the fixed refusal without evidence (and no LLM request), the extractive
answer without a key, and conversations kept in the server process."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from code_compass_server.answer.messages import EN
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.mcp_server.harness import mcp_client, ok, server_env, wait_indexed

UNANSWERABLE = "How does the kubernetes ingress rotate TLS certificates for the zebra herd?"


async def test_no_evidence_gives_the_fixed_refusal_and_no_llm_request(
    sample_ws: Path, tmp_path: Path
) -> None:
    with FakeAnthropic() as fake:
        fake.forever(Reply("`parse_config` is defined in {path:E1} {cite:E1}."))
        env = server_env(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="test-key")
        async with mcp_client(sample_ws, storage=tmp_path / "st", env=env) as client:
            await wait_indexed(client)
            refusal = await ok(client, "ask_code", question=UNANSWERABLE)
            assert refusal["answer"] == EN.no_evidence
            assert refusal["evidences"] == [] and refusal["citations"] == []
            assert refusal["meta"]["llmCalled"] is False and refusal["state"] == "FAIL"
            assert fake.message_requests == []

            # The same server does reach the (fake) model when there is evidence: the
            # silence above is the refusal rule, not a broken connection.
            grounded = await ok(client, "ask_code", question="Where is parse_config defined?")
    assert len(fake.message_requests) == 1
    assert grounded["meta"]["llmCalled"] is True
    cited = {c["id"]: c for c in grounded["citations"]}
    assert grounded["answer"] == f"`parse_config` is defined in {cited['E1']['path']} [E1]."
    assert "src/config_loader.py" in {e["path"] for e in grounded["evidences"]}


async def test_without_a_key_the_answer_is_extractive(sample_ws: Path, tmp_path: Path) -> None:
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        data = await ok(client, "ask_code", question="Where is parse_config defined?")
    assert data["answer"].startswith(EN.extractive_label)
    assert data["meta"]["llmCalled"] is False
    paths = {(e["path"], e["startLine"]) for e in data["evidences"]}
    assert ("src/config_loader.py", 5) in paths
    assert all(e["score"] >= 0.6 for e in data["evidences"])  # the default minScore
    assert data["state"] in ("OK", "PARTIAL") and 0 <= data["confidence"]["score"] <= 100
    assert data["coverage"] in ("high", "medium", "low") and data["partialIndex"] is False


async def test_a_conversation_is_kept_between_calls(sample_ws: Path, tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        fake.forever(Reply("It is {path:E1} {cite:E1}."))
        env = server_env(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="test-key")
        async with mcp_client(sample_ws, storage=tmp_path / "st", env=env) as client:
            await wait_indexed(client)
            first = await ok(client, "ask_code", question="Where is parse_config defined?")
            conversation = first["conversationId"]
            assert isinstance(conversation, str) and conversation
            follow = await ok(
                client,
                "ask_code",
                question="And what does the retry_backoff method return?",
                conversationId=conversation,
            )
            fresh = await ok(
                client, "ask_code", question="And what does the retry_backoff method return?"
            )
    assert follow["conversationId"] == conversation
    assert fresh["conversationId"] != conversation
    bodies = [r.body for r in fake.message_requests]
    assert len(bodies) == 3
    # The follow-up carried the first exchange; a new conversation did not.
    assert "Where is parse_config defined?" in bodies[1]
    assert "Where is parse_config defined?" not in bodies[2]
