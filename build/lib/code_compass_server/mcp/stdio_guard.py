"""The MCP stdio transport with every request answered, even a malformed one.

The SDK's stdio transport drops a line it cannot validate (bad JSON, `"params":
"notanobject"`, a lone surrogate `"\\ud800"`) with a DEBUG log, and the client then waits for
ever. Here each line is checked first: what the SDK would drop is answered with a JSON-RPC
error (-32700 not JSON, -32600 not a request, -32602 bad params) naming what is wrong, and
only valid lines reach the SDK. Both the SDK's replies and ours go through one locked writer,
so lines never interleave.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types
from mcp.server.stdio import stdio_server

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def _bad_string(value: Any, where: str) -> str | None:
    """Where the first string that is not valid Unicode (an unpaired surrogate) sits."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "the message"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _bad_string(key, where) or _bad_string(item, f"{where}.{key}" if where else key)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _bad_string(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _error(id_: Any, code: int, message: str) -> str:
    body = {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}
    return json.dumps(body, ensure_ascii=True)


def triage(line: str) -> str | None:
    """None if the SDK can take `line`; else the error line to answer (or "" to drop it).

    Only requests are answered; a broken notification has nobody waiting for it.
    """
    if not line.strip():
        return ""
    try:
        msg = json.loads(line)
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"not JSON: {exc}")
    if not isinstance(msg, dict):
        kind = "a batch (array)" if isinstance(msg, list) else type(msg).__name__
        return _error(None, INVALID_REQUEST, f"a message must be one JSON object, not {kind}")
    id_ = msg.get("id")
    is_request = "method" in msg and id_ is not None
    if (id_ is not None and not isinstance(id_, (str, int))) or isinstance(id_, bool):
        return _error(None, INVALID_REQUEST, "id must be a string or an integer")
    if isinstance(id_, str) and _bad_string(id_, "id"):
        return _error(None, INVALID_REQUEST, "id is not valid Unicode (unpaired surrogate)")
    bad = _bad_string(msg, "")
    if bad is not None:
        if not is_request:
            return ""
        return _error(id_, INVALID_PARAMS, f"{bad}: not valid Unicode (unpaired surrogate)")
    if is_request and "params" in msg and not isinstance(msg["params"], dict):
        got = type(msg["params"]).__name__
        return _error(id_, INVALID_PARAMS, f"params must be an object, got {got}")
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
    except ValueError as exc:
        if not is_request:
            log.debug("dropped an invalid message: %s", exc)
            return ""
        first = str(exc).splitlines()[1:3]
        return _error(id_, INVALID_REQUEST, "not a valid JSON-RPC request: " + " ".join(first))
    return None


class _LockedOut:
    """stdout for the SDK's writer and ours: one whole line per write, never interleaved."""

    def __init__(self, file: anyio.AsyncFile[str]) -> None:
        self._file = file
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._file.write(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._file.flush()


class _Triaged:
    """The lines of stdin that the SDK can take; the rest answered on the spot."""

    def __init__(self, source: anyio.AsyncFile[str], out: _LockedOut) -> None:
        self._source = source
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            verdict = triage(line)
            if verdict is None:
                yield line
            elif verdict:
                await self._out.write(verdict + "\n")
                await self._out.flush()


def _claim(fd: int, mode: str) -> Any:
    """A private copy of a standard descriptor; the standard one then points elsewhere
    (stdin at the null device, stdout at stderr) so stray reads and prints miss the wire."""
    private = os.dup(fd)
    target = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
    os.dup2(target, fd)
    os.close(target)
    return os.fdopen(private, mode, encoding="utf-8", errors="surrogateescape", newline="\n")


@asynccontextmanager
async def guarded_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """Like the SDK's stdio_server, with malformed requests answered instead of dropped."""
    sys.stdout.flush()
    raw_in = anyio.wrap_file(_claim(0, "r"))
    out = _LockedOut(anyio.wrap_file(_claim(1, "w")))
    async with stdio_server(stdin=_Triaged(raw_in, out), stdout=out) as streams:  # type: ignore[arg-type]
        yield streams
