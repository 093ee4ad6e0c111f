"""Every MCP request is answered (#32), malformed ones with a JSON-RPC error, over raw stdio.

The SDK's transport used to drop a lone surrogate in a query or path, `"params":
"notanobject"` and bad JSON with a DEBUG log, leaving the client waiting for ever. This
drives the real `code-compass mcp` with a raw client: the issue's cases, then seeded
mutations of valid calls; each request id must come back exactly once, and the server must
still serve a real search afterwards.
"""

from __future__ import annotations

import json
import queue
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import write_tree
from tests.mcp_server.harness import server_command, server_env

ANSWER_BOUND_S = 60.0
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "fuzz", "version": "1"},
}


class RawMcp:
    def __init__(self, ws: Path, storage: Path) -> None:
        self.proc = subprocess.Popen(
            server_command([ws], storage),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server_env(),
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.replies.put(json.loads(line))

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        self.send_line(json.dumps(msg).encode())

    def collect(self, ids: set[Any]) -> dict[Any, list[dict[str, Any]]]:
        """Replies by id until every id in `ids` came back (or the bound passed)."""
        got: dict[Any, list[dict[str, Any]]] = {}
        deadline = time.monotonic() + ANSWER_BOUND_S
        while not ids <= got.keys() and time.monotonic() < deadline:
            try:
                msg = self.replies.get(timeout=0.5)
            except queue.Empty:
                continue
            got.setdefault(msg.get("id"), []).append(msg)
        time.sleep(0.5)  # a late duplicate would show up here
        while not self.replies.empty():
            msg = self.replies.get()
            got.setdefault(msg.get("id"), []).append(msg)
        return got

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _call(id_: Any, name: str, arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


# (raw line, its id or None when only an id-null error can come back)
ISSUE_CASES: list[tuple[bytes, Any]] = [
    (b'{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"search_code",'
     b'"arguments":{"query":"\\ud800"}}}', "s1"),
    (b'{"jsonrpc":"2.0","id":"o1","method":"tools/call","params":{"name":"open_file",'
     b'"arguments":{"path":"a\\ud800.py"}}}', "o1"),
    (b'{"jsonrpc":"2.0","id":"p1","method":"tools/call","params":"notanobject"}', "p1"),
    (b'{"jsonrpc":"2.0","id":"p2","method":"tools/list","params":[1,2]}', "p2"),
    (b'{"jsonrpc":"2.0","id":"p3","method":"tools/call","params":null}', "p3"),
    (b'{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"search_code",'
     b'"arguments":{"query":"\xff\xfe bad utf-8"}}}', "b1"),
    (b'{"jsonrpc":"2.0","id":"k1","method":"tools/call","params":{"name":"search_code",'
     b'"arguments":{"\\udc00":"x"}}}', "k1"),
    (b'{"jsonrpc":"2.0","id":"j1","method":', None),
    (b"not json at all", None),
    (b"[1,2,3]", None),
    (b'{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}', None),
]  # fmt: skip


def _mutations(rng: random.Random, count: int) -> list[tuple[bytes, Any]]:
    junk: list[Any] = [None, 0, -1, 2**70, "", "\ud800", "x" * 5000, [], {}, [1], True, 1.5]
    out: list[tuple[bytes, Any]] = []
    for i in range(count):
        id_ = f"m{i}"
        base = _call(id_, rng.choice(["search_code", "open_file", "ask_code", "nope"]), {})
        roll = rng.random()
        if roll < 0.3:
            base["params"] = rng.choice(junk)
        elif roll < 0.6:
            base["params"]["arguments"] = {rng.choice(["query", "path", "limit"]): rng.choice(junk)}
        elif roll < 0.8:
            base["params"]["name"] = rng.choice(junk)
        else:
            base["method"] = rng.choice(["tools/call", "tools/list", "nope/nope", ""])
        line = json.dumps(base, ensure_ascii=True).encode()
        out.append((line, id_))
    return out


def test_every_request_is_answered(tmp_path: Path) -> None:
    ws = write_tree(tmp_path / "ws", {"shop.py": "def compute_discount(total):\n    return 1\n"})
    client = RawMcp(ws, tmp_path / "storage")
    try:
        client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
        assert "init" in client.collect({"init"})
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        cases = ISSUE_CASES + _mutations(random.Random(32), 150)
        for line, _ in cases:
            client.send_line(line)
        client.send(_call("last", "search_code", {"query": "compute discount"}))
        ids = {id_ for _, id_ in cases if id_ is not None} | {"last"}
        got = client.collect(ids)
        missing = sorted(ids - got.keys())
        assert missing == [], f"never answered: {missing}"
        twice = sorted(str(k) for k, v in got.items() if k is not None and len(v) > 1)
        assert twice == []
        for line, id_ in ISSUE_CASES:
            if id_ is not None:
                error = got[id_][0].get("error") or {}
                assert error.get("code") in (-32602, -32600), (line, got[id_])
                assert error.get("message"), line
        nulls = got.get(None, [])
        assert len(nulls) >= sum(1 for _, id_ in ISSUE_CASES if id_ is None)
        assert all(m["error"]["code"] in (-32700, -32600) for m in nulls)
        last = got["last"][0]
        assert "result" in last and not last["result"].get("isError"), last
    finally:
        client.close()
