"""JSON-RPC error codes of docs/protocol.md: -32002 and -32603."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from code_compass_server.lsp.server import create_server
from tests.lsp.conftest import SERVER, server_env


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_message(stream: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while (line := await stream.readline()).strip():
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(await stream.readexactly(length))  # type: ignore[no-any-return]


async def test_a_request_before_initialize_is_32002(tmp_path: Path) -> None:
    # Raw JSON-RPC: LSP clients refuse to send anything before initialize.
    proc = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=server_env(tmp_path / "home"),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "codeCompass/status", "params": {}}
        proc.stdin.write(frame(request))
        await proc.stdin.drain()
        reply = await asyncio.wait_for(read_message(proc.stdout), 20)
        assert reply["id"] == 1 and reply["error"]["code"] == -32002
        assert reply["error"]["message"] == "the server is not initialized yet"
    finally:
        proc.kill()
        await proc.wait()


async def test_an_unexpected_exception_is_32603_and_requests_go_on() -> None:
    ls = create_server()
    try:
        with pytest.raises(JsonRpcException) as err:
            await ls.run_blocking(lambda: 1 // 0)
        assert err.value.code == -32603
        assert "ZeroDivisionError" in err.value.message
        assert await ls.run_blocking(lambda: 42) == 42  # the request pool still serves
    finally:
        ls.close_all()
