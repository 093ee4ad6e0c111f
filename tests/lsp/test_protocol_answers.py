"""Every request answered as JSON-RPC says (lsp/protocol.py), over raw stdio: a notification
method sent with an id, a reused id, params of the wrong type, a body that is not JSON; open
documents outside every workspace folder ignored; `$/cancelRequest` ends an ask with -32800."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.lsp.conftest import server_env
from tests.lsp.test_protocol_fuzz import attack_module

attack = attack_module()


@pytest_asyncio.fixture
async def raw(tmp_path: Path) -> AsyncIterator[Any]:
    """An initialized raw JSON-RPC client on a small workspace, index ready."""
    ws = attack.make_workspace(tmp_path, files=3)
    client = await attack.Client.start(server_env(tmp_path / "home"))
    try:
        await client.initialize(ws, tmp_path / "storage")
        await client.wait_ready()
        client.ws = ws
        yield client
    finally:
        await client.stop()


async def answers(client: Any, key: Any, count: int = 1, timeout: float = 10) -> list[Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(client.responses.get(json.dumps(key), [])) < count and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return client.responses.get(json.dumps(key), [])


async def test_a_notification_method_sent_with_an_id_is_answered_32601_and_not_run(
    raw: Any,
) -> None:
    uri = (raw.ws / "pkg" / "new.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "def zebra_unique(): pass\n"}
    reply = await raw.request(7, "textDocument/didOpen", {"textDocument": doc})
    assert reply["error"]["code"] == -32601
    assert "is a notification: send it without an 'id'" in reply["error"]["message"]
    cancel = await raw.request("c", "$/cancelRequest", {"id": 1})
    assert cancel["error"]["code"] == -32601
    await asyncio.sleep(0.5)
    await raw.wait_ready()
    found = await raw.request(8, "codeCompass/search", {"query": "zebra_unique"})
    assert found["result"]["hits"] == []  # the didOpen was not applied


async def test_a_reused_id_is_refused_with_id_null_and_the_first_answered_once(raw: Any) -> None:
    search = {"jsonrpc": "2.0", "id": 41, "method": "codeCompass/search",
              "params": {"query": "discount"}}  # fmt: skip
    raw.send(search)
    raw.send(search)
    await raw.drain()
    got = await answers(raw, 41)
    await asyncio.sleep(0.5)
    assert len(got) == 1 and "result" in got[0]
    refused = [m for m in raw.null_id_errors if "41" in m["error"]["message"]]
    assert len(refused) == 1 and refused[0]["error"]["code"] == -32600
    raw.send({"jsonrpc": "2.0", "id": 41, "method": "codeCompass/status", "params": {}})
    await raw.drain()  # answered already, and used again: refused too (ids are used once)
    await asyncio.sleep(0.5)
    assert len([m for m in raw.null_id_errors if "41" in m["error"]["message"]]) == 2
    assert len(raw.responses[json.dumps(41)]) == 1


async def test_params_of_the_wrong_type_get_32602_naming_the_field(raw: Any) -> None:
    uri = (raw.ws / "pkg" / "mod0.py").as_uri()
    bad = {"textDocument": {"uri": uri}, "position": {"line": 3, "character": "eight"}}
    reply = await raw.request(9, "textDocument/hover", bad)
    assert reply["error"]["code"] == -32602
    assert "position.character" in reply["error"]["message"]
    assert "expected int" in reply["error"]["message"]
    missing = await raw.request(10, "textDocument/hover", None)
    assert missing["error"]["code"] == -32602 and "params" in missing["error"]["message"]
    listed = await raw.request(11, "codeCompass/search", [1, 2])
    assert (
        listed["error"]["code"] == -32602 and "must be a JSON object" in listed["error"]["message"]
    )
    no_params = {"jsonrpc": "2.0", "id": 12, "method": "foo/bar"}  # no params at all
    raw.send(no_params)
    await raw.drain()
    assert (await answers(raw, 12))[0]["error"]["code"] == -32601
    assert raw.notifications["window/showMessage"] == 0


async def test_a_body_that_is_not_json_gets_32700_and_a_non_message_32600(raw: Any) -> None:
    raw.send_raw(b"{not json")
    raw.send_raw(b"[1, 2]")
    raw.send({"id": 5, "method": "codeCompass/status", "params": {}})  # no "jsonrpc"
    await raw.drain()
    got = await answers(raw, 5)
    assert got and got[0]["error"]["code"] == -32600 and "jsonrpc" in got[0]["error"]["message"]
    codes = sorted(m["error"]["code"] for m in raw.null_id_errors)
    assert codes == [-32700, -32600]
    status = await raw.request(6, "codeCompass/status", {})
    assert "result" in status


async def test_documents_outside_every_workspace_folder_are_never_indexed(raw: Any) -> None:
    outside = raw.ws.as_uri() + "/../outside/sneaky.py"
    doc = {"uri": outside, "languageId": "python", "version": 1,
           "text": "def quetzal_outside(): pass\n"}  # fmt: skip
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}})
    change = {"textDocument": {"uri": outside, "version": 2},
              "contentChanges": [{"text": "def quetzal_outside(): return 1\n"}]}  # fmt: skip
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change})
    await raw.drain()
    await asyncio.sleep(0.5)
    await raw.wait_ready()
    found = await raw.request(3, "codeCompass/search", {"query": "quetzal_outside"})
    assert found["result"]["hits"] == []
    status = await raw.request(4, "codeCompass/status", {})
    assert status["result"]["projects"][0]["files"] == 4  # 3 modules + README, nothing else


async def test_cancel_request_ends_an_ask_with_32800_and_stops_its_stream(
    start: Any, alpha: Path
) -> None:
    slow = Reply(text="Gold customers get a discount. " * 40, chunk_delay=0.1, chunk_size=8)
    with FakeAnthropic() as fake:
        fake.forever(slow)
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test-key-not-secret"}
        s = await start([alpha], env=env)
        await s.wait_indexed()
        question = {"question": "How is the gold discount computed?", "minScore": 0.0,
                    "requestId": "ask-c"}  # fmt: skip
        future = s.client.protocol.send_request("codeCompass/ask", question, msg_id="ask-9")
        deltas = s.seen("codeCompass/answerDelta")
        for _ in range(600):
            if deltas:
                break
            await asyncio.sleep(0.05)
        assert deltas, "the answer never started streaming"
        s.client.protocol.notify("$/cancelRequest", types.CancelParams(id="ask-9"))
        with pytest.raises(JsonRpcException) as cancelled:
            await asyncio.wait_for(asyncio.wrap_future(future), 20)
        assert cancelled.value.code == -32800
        await asyncio.sleep(1.0)
        streamed = len(deltas)
        await asyncio.sleep(1.5)
        assert len(deltas) == streamed  # no delta after the cancel settled: the stream stopped
        assert "".join(d["text"] for d in deltas) != slow.text
        assert (await s.request("codeCompass/status", {}))["projects"]
