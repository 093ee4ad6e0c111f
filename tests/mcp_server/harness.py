"""Harness: the real `code-compass mcp` over stdio, driven by the MCP SDK's own client.

Every test starts its own server subprocess (`python -m code_compass_server mcp`) with private
storage in tmp_path and no Anthropic key unless the test sets one (extractive answers). The
SDK client stops the process when its context exits.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types

HIT_FIELDS = {
    "path", "startLine", "endLine", "score", "relevance", "symbol", "kind", "language", "project",
    "snippet",
}  # fmt: skip


def server_env(**extra: str) -> dict[str, str]:
    """This process's environment (PYTHONPATH, model dir) without any Anthropic settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(extra)
    return env


def server_command(workspaces: Sequence[Path], storage: Path, *extra: str) -> list[str]:
    args = ["-m", "code_compass_server", "mcp", "--storage", str(storage), *extra]
    for ws in workspaces:
        args += ["--workspace", str(ws)]
    return [sys.executable, *args]


@asynccontextmanager
async def mcp_client(
    *workspaces: Path,
    storage: Path,
    env: dict[str, str] | None = None,
    roots: Sequence[Path] | None = None,
    mode: str = "legacy",
    cwd: Path | None = None,
    extra_args: Sequence[str] = (),
) -> AsyncIterator[Client]:
    """A connected client. `roots` are offered to the server (roots capability) when given."""
    command = server_command(workspaces, storage, *extra_args)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=env or server_env(), cwd=cwd
    )
    callback = None
    if roots is not None:
        offered = [types.Root(uri=p.as_uri(), name=p.name) for p in roots]

        async def callback(_ctx: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=offered)

    async with Client(
        params, mode=mode, list_roots_callback=callback, read_timeout_seconds=120
    ) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool(tool, arguments)


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Structured content of a successful call."""
    result = await call(client, tool, **arguments)
    assert not result.is_error, _text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The error text of a call that must fail as a tool error (isError), not a crash."""
    result = await call(client, tool, **arguments)
    assert result.is_error, f"{tool}({arguments}) succeeded: {_text(result)[:300]}"
    return _text(result)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def wait_indexed(
    client: Client, timeout: float = 90.0, *, embedded: bool = False, **scope: Any
) -> None:
    """Poll search_code until no workspace in scope is still indexing (and, with `embedded`,
    until every vector is computed: hybrid ranking is only stable from then on)."""
    deadline = time.monotonic() + timeout
    while True:
        data = await ok(client, "search_code", query="index readiness probe", **scope)
        if not data["partialIndex"] and not (embedded and data.get("semanticPending")):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"index not ready in {timeout}s: {data}")
        await anyio.sleep(0.1)
