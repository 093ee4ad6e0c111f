#!/usr/bin/env python3
"""Protocol fuzz and buffer flood against the real `code-compass serve`, over raw JSON-RPC.

Starts the server (this interpreter, so PYTHONPATH's checkout runs) on a generated workspace,
then pipelines N messages: unknown methods, wrong param types, notifications that carry an id,
mutated hover/codeLens params, huge params, duplicate ids, malformed JSON, plus valid hovers,
lenses and searches. Every request id (string or integer) must be answered exactly once within
10 s of the last message. Counts unanswered requests, ids answered twice, `window/showMessage`
pop-ups, -32603 errors (and those on valid hovers), and the server's RSS before and after.
`--buffers N` then opens N unsaved 1 MB buffers inside the workspace (and one outside it) and
reports the RSS once they are indexed.

Targets: 0 unanswered in 10k messages; RSS <= 400 MB after the fuzz and after 100 x 1 MB buffers.

    python scripts/attack_protocol.py [--messages 10000] [--buffers 100] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-P", "-m", "code_compass_server", "serve"]
ANSWER_WAIT_S = 10.0
BUFFER_BYTES = 1_000_000  # under the default index size limit: each one is really indexed

MODULE = '''"""Module {i}: pricing helpers for the quokka shop."""


def compute_discount_{i}(order_total, customer_tier):
    """Return the discount for a customer tier."""
    if customer_tier == "gold":
        return order_total * 0.2
    return helper_{i}(order_total)


def helper_{i}(value):
    return value * 0.01


class InvoiceBuilder{i}:
    """Builds invoices in the ledger format."""

    def build(self, order):
        rate = compute_discount_{i}(order.total, order.tier)
        return {{"total": order.total, "discount": rate}}
'''


def make_workspace(root: Path, files: int = 40) -> Path:
    ws = root / "ws"
    (ws / "pkg").mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (ws / "pkg" / f"mod{i}.py").write_text(MODULE.format(i=i))
    (ws / "README.md").write_text("# Shop\n\nThe `compute_discount_1` function applies rates.\n")
    return ws


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


@dataclass
class Client:
    """A raw JSON-RPC client: writes framed bodies, records every message the server sends."""

    proc: asyncio.subprocess.Process
    responses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    null_id_errors: list[dict[str, Any]] = field(default_factory=list)
    notifications: Counter[str] = field(default_factory=Counter)
    waiters: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    ready_polls: int = 0

    @classmethod
    async def start(cls, env: dict[str, str] | None = None) -> Client:
        proc = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=1 << 26,
        )
        client = cls(proc)
        client.reader = asyncio.create_task(client._read())
        return client

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = await stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            msg = json.loads(await stream.readexactly(length))
            self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "method" in msg and "id" in msg:  # a request from the server: answer it
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            self.notifications[msg["method"]] += 1
        elif "method" in msg:
            self.notifications[msg["method"]] += 1
        elif msg.get("id") is None:
            self.null_id_errors.append(msg)
        else:
            key = json.dumps(msg["id"])
            self.responses.setdefault(key, []).append(msg)
            waiter = self.waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(msg)

    def send_raw(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(body))

    def send(self, msg: Any) -> None:
        self.send_raw(json.dumps(msg).encode())

    async def drain(self) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def request(self, id_: int | str, method: str, params: Any, timeout: float = 60) -> Any:
        key = json.dumps(id_)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters[key] = fut
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        await self.drain()
        return await asyncio.wait_for(fut, timeout)

    async def initialize(self, ws: Path, storage: Path) -> None:
        params = {
            "processId": None,
            "capabilities": {
                "window": {"workDoneProgress": True},
                "textDocument": {"hover": {"contentFormat": ["markdown"]}},
            },
            "workspaceFolders": [{"uri": ws.as_uri(), "name": ws.name}],
            "initializationOptions": {
                "storageUri": storage.as_uri(),
                "settings": {"embeddings": {"enabled": False}},
            },
        }
        await self.request("init", "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        await self.drain()

    async def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ready_polls += 1  # ids are never reused (the server refuses a reused id)
            reply = await self.request(
                f"ready-{self.ready_polls}", "codeCompass/status", {}, timeout=120
            )
            status = reply.get("result") or {}
            projects = status.get("projects", [])
            if not status.get("indexing") and all(p.get("state") == "ready" for p in projects):
                return
            await asyncio.sleep(0.2)
        raise TimeoutError("index not ready")

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.request("bye", "shutdown", None), 20)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            await self.drain()
            await asyncio.wait_for(self.proc.wait(), 20)
        except Exception:
            self.proc.kill()
            await self.proc.wait()
        if self.reader is not None:
            self.reader.cancel()


# --- the fuzz ---------------------------------------------------------------------------


@dataclass
class FuzzReport:
    sent: int = 0
    requests: int = 0
    unanswered: int = 0
    duplicates: int = 0  # ids answered more than once
    show_message: int = 0
    log_message: int = 0
    internal_errors: int = 0  # -32603 answers
    valid_hover_errors: int = 0  # any error answering a valid hover
    valid_hovers: int = 0
    codes: Counter[int] = field(default_factory=Counter)
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    examples: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        codes = ", ".join(f"{c}: {n}" for c, n in sorted(self.codes.items()))
        return [
            f"messages sent            {self.sent}",
            f"requests (with an id)    {self.requests}",
            f"unanswered after {ANSWER_WAIT_S:.0f} s   {self.unanswered}",
            f"ids answered twice       {self.duplicates}",
            f"window/showMessage       {self.show_message}",
            f"window/logMessage        {self.log_message}",
            f"-32603 answers           {self.internal_errors}",
            f"valid hovers / errors    {self.valid_hovers} / {self.valid_hover_errors}",
            f"error codes              {codes}",
            f"RSS before / after       {self.rss_before_mb:.0f} MB / {self.rss_after_mb:.0f} MB",
        ] + [f"example {k}: {v}" for k, v in self.examples.items()]


class Fuzzer:
    """Builds the hostile messages; `expect` holds the ids that must be answered."""

    def __init__(self, rng: random.Random, ws: Path) -> None:
        self.rng = rng
        self.ws = ws
        self.uris = [(ws / "pkg" / f"mod{i}.py").as_uri() for i in range(5)]
        self.next_id = 1000
        self.valid_hover_ids: set[str] = set()

    def new_id(self) -> int | str:
        self.next_id += 1
        return self.next_id if self.rng.random() < 0.7 else f"s{self.next_id}"

    def valid_hover(self) -> dict[str, Any]:
        uri = self.rng.choice(self.uris)
        # line 3, column 8: the name of `compute_discount_<i>`
        return {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 8}}

    def mutate(self, value: Any, depth: int = 0) -> Any:
        r = self.rng
        if isinstance(value, dict) and value and depth < 4:
            out = dict(value)
            key = r.choice(list(out))
            choice = r.random()
            if choice < 0.25:
                del out[key]
            elif choice < 0.5:
                out[key] = self.mutate(out[key], depth + 1)
            else:
                out[key] = self.junk()
            return out
        return self.junk()

    def junk(self) -> Any:
        r = self.rng
        return r.choice(
            [
                None, -1, 2**31, 2**63, -(2**40), 1.5, "", "x" * r.randint(1, 3000), [], {},
                [1, 2], {"a": {"b": None}}, True, "\u0000\ud7ff", "file:///../../etc/passwd",
                "untitled:Untitled-1", float("1e300"),
            ]
        )  # fmt: skip

    def message(self) -> tuple[dict[str, Any] | bytes, list[str]]:
        """(message or raw body, ids that must be answered)."""
        r = self.rng
        kind = r.choices(
            [
                "valid_hover", "valid_lens", "valid_search", "unknown", "wrong_type",
                "notif_with_id", "mutated_hover", "mutated_lens", "huge", "duplicate",
                "notification", "malformed", "cancel", "outside_open",
            ],
            weights=[14, 6, 4, 10, 10, 10, 12, 8, 3, 6, 8, 3, 3, 3],
        )[0]  # fmt: skip
        if kind == "malformed":
            return r.choice([b"{", b"[]", b"42", b'"x"', b"{'id': 1}", b'{"jsonrpc": "2.0"}']), []
        if kind == "notification":
            method = r.choice(["foo/bar", "$/unknownThing", "textDocument/didSave", "x"])
            return {"jsonrpc": "2.0", "method": method, "params": self.junk()}, []
        if kind == "outside_open":
            uri = self.ws.as_uri() + f"/../outside/x{r.randint(0, 50)}.py"
            doc = {"uri": uri, "languageId": "python", "version": 1, "text": "def sneaky(): pass\n"}
            return {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                    "params": {"textDocument": doc}}, []  # fmt: skip
        if kind == "cancel":
            return {"jsonrpc": "2.0", "method": "$/cancelRequest",
                    "params": {"id": r.choice([self.next_id, "nope", None])}}, []  # fmt: skip
        id_ = self.new_id()
        key = json.dumps(id_)
        method, params = "textDocument/hover", self.valid_hover()
        if kind == "valid_hover":
            self.valid_hover_ids.add(key)
        elif kind == "valid_lens":
            method, params = "textDocument/codeLens", {"textDocument": {"uri": r.choice(self.uris)}}
        elif kind == "valid_search":
            method = "codeCompass/search"
            params = {"query": r.choice(["discount", "invoice builder", "helper rate"])}
        elif kind == "unknown":
            method = r.choice(["foo/bar", "$/unknown", "textDocument/nothing", "", "codeCompass/x"])
            params = self.junk() if r.random() < 0.5 else {}
        elif kind == "wrong_type":
            method = r.choice(["textDocument/hover", "textDocument/codeLens", "codeCompass/search",
                               "codeCompass/status", "codeCompass/ask", "codeLens/resolve",
                               "codeCompass/reindex"])  # fmt: skip
            params = r.choice([[1, 2], "text", 42, {"textDocument": 5}, {"query": 7}, None])
        elif kind == "notif_with_id":
            method = r.choice(["textDocument/didOpen", "textDocument/didChange",
                               "textDocument/didClose", "initialized", "$/cancelRequest",
                               "workspace/didChangeConfiguration", "$/setTrace"])  # fmt: skip
            params = {"textDocument": {"uri": r.choice(self.uris), "version": 2}}
        elif kind == "mutated_hover":
            params = self.mutate(self.valid_hover())
        elif kind == "mutated_lens":
            method = r.choice(["textDocument/codeLens", "codeLens/resolve"])
            lens = {"range": {"start": {"line": 3, "character": 4},
                              "end": {"line": 3, "character": 20}},
                    "data": {"project": "ws", "name": "helper_1", "uri": self.uris[1]}}  # fmt: skip
            doc = {"textDocument": {"uri": r.choice(self.uris)}}
            params = self.mutate(doc if method == "textDocument/codeLens" else lens)
        elif kind == "huge":
            big = "y" * r.choice([100_000, 1_000_000, 3_000_000])
            method, params = r.choice(
                [
                    ("codeCompass/search", {"query": big}),
                    ("textDocument/hover", {"textDocument": {"uri": big}, "position": {}}),
                    ("codeCompass/ask", {"question": big}),
                    ("textDocument/codeLens", {"textDocument": {"uri": self.uris[0]}, "x": big}),
                ]
            )
        msg = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        if kind == "duplicate":
            return msg, [key, key]  # the same id twice: answered exactly once
        return msg, [key]


async def run_fuzz(
    ws: Path, storage: Path, messages: int, seed: int, env: dict[str, str] | None = None
) -> FuzzReport:
    report = FuzzReport()
    client = await Client.start(env)
    try:
        await client.initialize(ws, storage)
        await client.wait_ready()
        # Warm up (the first hover loads jedi), then measure the baseline.
        await client.request(
            "warm", "textDocument/hover", Fuzzer(random.Random(0), ws).valid_hover()
        )
        report.rss_before_mb = rss_mb(client.pid)
        client.notifications.clear()
        fuzz = Fuzzer(random.Random(seed), ws)
        expected: Counter[str] = Counter()
        for n in range(messages):
            msg, ids = fuzz.message()
            repeats = 2 if len(ids) == 2 else 1
            for _ in range(repeats):
                if isinstance(msg, bytes):
                    client.send_raw(msg)
                else:
                    client.send(msg)
                report.sent += 1
            for key in set(ids):
                expected[key] += 1
            if n % 50 == 0:
                await client.drain()
        await client.drain()
        report.requests = len(expected)
        deadline = time.monotonic() + ANSWER_WAIT_S
        while time.monotonic() < deadline:
            if all(key in client.responses for key in expected):
                break
            await asyncio.sleep(0.1)
        for key in expected:
            got = client.responses.get(key, [])
            if not got:
                report.unanswered += 1
                report.examples.setdefault("unanswered", key)
            if len(got) > 1:
                report.duplicates += 1
                report.examples.setdefault("duplicate", key)
            for msg in got:
                if "error" in msg:
                    code = msg["error"].get("code")
                    report.codes[code] += 1
                    if code == -32603:
                        report.internal_errors += 1
                        report.examples.setdefault("-32603", str(msg["error"])[:300])
        report.valid_hovers = len(fuzz.valid_hover_ids)
        for key in fuzz.valid_hover_ids:
            for msg in client.responses.get(key, []):
                # -32800: cancelled by the fuzz; -32801: superseded by a newer hover (#32)
                if "error" in msg and msg["error"].get("code") not in (-32800, -32801):
                    report.valid_hover_errors += 1
                    report.examples.setdefault("hover error", str(msg["error"])[:300])
        report.show_message = client.notifications["window/showMessage"]
        report.log_message = client.notifications["window/logMessage"]
        # Still serving?
        final = await client.request("final", "textDocument/hover", fuzz.valid_hover(), 30)
        if "result" not in final:
            report.examples["final hover"] = str(final)[:300]
        report.rss_after_mb = rss_mb(client.pid)
    finally:
        await client.stop()
    return report


async def run_buffers(ws: Path, storage: Path, count: int, env: dict[str, str] | None) -> None:
    client = await Client.start(env)
    try:
        await client.initialize(ws, storage)
        await client.wait_ready()
        before = rss_mb(client.pid)
        line = "value_{n} = compute_total(order, tier)  # unsaved edit\n"
        for n in range(count):
            text = "".join(line.format(n=n) for _ in range(BUFFER_BYTES // len(line.format(n=n))))
            uri = (ws / "pkg" / f"unsaved_{n}.py").as_uri()
            doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                         "params": {"textDocument": doc}})  # fmt: skip
            await client.drain()
        outside = (ws.parent / "outside" / "x.py").as_uri()
        doc = {"uri": outside, "languageId": "python", "version": 1, "text": "def out(): pass\n"}
        client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": doc}})  # fmt: skip
        await client.drain()
        t0 = time.monotonic()
        await asyncio.sleep(1.0)
        await client.wait_ready(600)
        peak_wait = time.monotonic() - t0
        after = rss_mb(client.pid)
        reply = await client.request("outside", "codeCompass/search", {"query": "out"})
        leaked = [h["path"] for h in reply.get("result", {}).get("hits", []) if ".." in h["path"]]
        print(
            f"buffers opened           {count} x {BUFFER_BYTES / 1e6:.1f} MB (+1 outside the root)"
        )
        print(
            f"RSS before / indexed     {before:.0f} MB / {after:.0f} MB "
            f"(indexed in {peak_wait:.0f} s)"
        )
        print(f"outside rows in search   {len(leaked)}")
    finally:
        await client.stop()


async def main_async(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="cc-attack-"))
    try:
        ws = make_workspace(tmp)
        env = None
        if args.messages:
            report = await run_fuzz(ws, tmp / "storage", args.messages, args.seed, env)
            print("\n".join(report.lines()))
        if args.buffers:
            await run_buffers(ws, tmp / "storage-buffers", args.buffers, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--messages", type=int, default=10_000)
    ap.add_argument("--buffers", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
