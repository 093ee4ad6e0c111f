"""Claims of docs/protocol.md that no other test checks: capabilities, errors, answerDelta."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.fakes.fake_anthropic import FakeAnthropic

QUESTION = {"question": "How is the discount for gold customers computed?", "minScore": 0.0}


async def test_advertised_capabilities_are_the_documented_set(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    caps = s.capabilities
    assert caps is not None
    assert caps.hover_provider is True
    assert caps.code_lens_provider is not None and caps.code_lens_provider.resolve_provider is True
    sync = caps.text_document_sync
    change = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
    assert change == types.TextDocumentSyncKind.Incremental
    assert caps.position_encoding in (None, types.PositionEncodingKind.Utf16)
    folders = caps.workspace.workspace_folders if caps.workspace else None
    assert folders is not None and folders.supported and folders.change_notifications


async def test_unknown_method_is_32601_and_unknown_project_is_32602(
    start: Any, alpha: Path
) -> None:
    s = await start([alpha])
    with pytest.raises(JsonRpcException) as unknown:
        await s.request("codeCompass/nothingHere", {})
    assert unknown.value.code == -32601
    with pytest.raises(JsonRpcException) as bad:
        await s.request("codeCompass/reindex", {"project": "nope"})
    assert bad.value.code == -32602
    assert "known: alpha" in bad.value.message
    assert (await s.request("codeCompass/status", {}))["projects"]  # the server kept running


async def test_ask_streams_deltas_then_a_result_citing_e_ids(start: Any, alpha: Path) -> None:
    with FakeAnthropic() as fake:
        fake.forever("Gold customers get a discount, computed in one function {cite:E1}.")
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test-key-not-secret"}
        s = await start([alpha], env=env)
        await s.wait_indexed()
        answer = await s.request(
            "codeCompass/ask", {**QUESTION, "requestId": "ask-17", "conversationId": "c-3"}, 60
        )
    deltas = s.seen("codeCompass/answerDelta")
    assert deltas, "no codeCompass/answerDelta notification"
    assert {d["requestId"] for d in deltas} == {"ask-17"}
    assert {d["conversationId"] for d in deltas} == {"c-3"}
    assert "".join(d["text"] for d in deltas).startswith("Gold customers get a discount")
    assert answer["meta"]["llmCalled"] is True
    assert answer["evidences"][0]["id"] == "E1"
    assert "[E1]" in answer["answer"]
    assert answer["citations"][0]["id"] == "E1"
    assert set(answer["confidence"]["components"]) == {
        "pipeline",
        "ambiguity",
        "rules",
        "citations",
    }
