#!/usr/bin/env python3
"""Clients for scripts/smoke_install.sh, run by the *installed* venv's python (not the checkout's).

  mcp DIR    the official MCP SDK client against `code-compass mcp --workspace DIR`:
             tools/list, then one search_code call that must cite auth.py.
  serve DIR  a raw JSON-RPC client against `code-compass serve`: initialize, open auth.py,
             hover on a call of hash_password until it cites its definition (auth.py:8).

Each starts the server as its own child and ends it (kill on timeout); exit 1 with the reason
on a wrong answer. Uses only the stdlib and the `mcp` package the wheel depends on."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT_S = 60.0


def fail(message: str) -> None:
    print(f"smoke: FAIL {message}", file=sys.stderr)
    sys.exit(1)


def code_compass() -> str:
    """The console script beside this interpreter (the installed one)."""
    exe = Path(sys.executable).with_name("code-compass")
    if not exe.is_file():
        found = shutil.which("code-compass")
        if found is None:
            fail("no code-compass command beside the interpreter or on PATH")
        return str(found)
    return str(exe)


async def run_mcp(workspace: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=code_compass(), args=["mcp", "--workspace", str(workspace)], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        missing = {"search_code", "ask_code", "open_file"} - names
        if missing:
            fail(f"mcp tools/list lacks {sorted(missing)} (got {sorted(names)})")
        result = await session.call_tool("search_code", {"query": "reset a user's password"})
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error or "auth.py" not in text or "reset_password" not in text:
            fail(f"mcp search_code did not find reset_password in auth.py: {text[:300]}")
    print(f"smoke: mcp ok ({len(names)} tools; search_code cites auth.py)")


class RawLsp:
    """Content-Length framed JSON-RPC over a child's stdio; server requests get null."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.responses: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:  # a request from the server
                self._send({"id": msg["id"], "result": None})
            elif "id" in msg:
                self.responses.put(msg)

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                msg = self.responses.get(timeout=1)
            except queue.Empty:
                continue
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    fail(f"{method}: {msg['error']}")
                return msg.get("result")
        fail(f"{method}: no answer in {TIMEOUT_S:.0f} s")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def run_serve(workspace: Path, storage: Path) -> None:
    lsp = RawLsp([code_compass(), "serve"])
    try:
        init = lsp.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
                "initializationOptions": {"storageUri": storage.as_uri()},
            },
        )
        if not init or not init["capabilities"].get("hoverProvider"):
            fail(f"serve initialize: no hoverProvider in {init}")
        lsp.notify("initialized", {})
        path = workspace / "auth.py"
        uri = path.as_uri()
        text = path.read_text("utf-8")
        lsp.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        line = next(i for i, ln in enumerate(text.split("\n")) if "= hash_password(" in ln)
        col = text.split("\n")[line].index("hash_password") + 3
        deadline = time.monotonic() + TIMEOUT_S
        value = ""
        while time.monotonic() < deadline:  # the index is built in the background
            hover = lsp.request(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}},
            )
            value = (hover or {}).get("contents", {}).get("value", "")
            if "auth.py:8" in value:
                print("smoke: serve ok (initialize + hover cites auth.py:8)")
                return
            time.sleep(0.5)
        fail(f"serve hover never cited the definition auth.py:8: {value[:300]!r}")
    finally:
        lsp.close()


def main() -> None:
    if len(sys.argv) < 3:
        fail("usage: smoke_install_clients.py mcp|serve WORKSPACE [STORAGE]")
    kind, workspace = sys.argv[1], Path(sys.argv[2]).resolve()
    if kind == "mcp":
        asyncio.run(asyncio.wait_for(run_mcp(workspace), TIMEOUT_S))
    elif kind == "serve":
        run_serve(workspace, Path(sys.argv[3]).resolve())
    else:
        fail(f"unknown client {kind!r}")


if __name__ == "__main__":
    main()
