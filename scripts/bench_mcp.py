"""MCP tool latency over stdio: search_code, find_symbol, open_file, ask_code (p50/p95).

Starts the real `code-compass mcp` (a subprocess) with the MCP SDK's own client on a
workspace: this repository by default, any folder given, or a PyPI sdist (`--corpus flask`,
`--corpus django`, cached in bench-data/). With a fresh storage folder the server starts a
full index: search_code is timed while that runs ("indexing" rows), then every tool once no
file is left to index ("warm" rows). Times are client round trips; the `tools/list` row is
the transport's own cost. ask_code runs without an API key (extractive), so it measures
retrieval and grounding, not a model.

Target: search_code p95 <= 150 ms warm.

    .venv/bin/python scripts/bench_mcp.py [PATH | --corpus flask|django] [--samples 200]
        [--storage DIR] [--wait-embedded]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import ROOT, django_source, flask_source

QUERIES = [
    "how are errors handled and reported",
    "configuration loading from a file",
    "parse command line arguments",
    "read a file and decode its text",
    "http request handler",
    "cache invalidation",
    "logging setup",
    "test fixtures",
    "database connection",
    "serialize to json",
    "register a callback",
    "retry with back-off",
    "template rendering",
    "validate user input",
    "session cookie",
    "URL routing",
]
QUESTIONS = [
    "How are errors reported to the caller?",
    "Where is the configuration loaded?",
    "How are requests routed to handlers?",
    "What happens when a file cannot be read?",
    "How is the cache invalidated?",
    "Where are command line arguments parsed?",
]
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


class Bench:
    def __init__(self, client: Client, samples: int) -> None:
        self.client = client
        self.samples = samples
        self.rows: list[tuple[str, str, list[float], str]] = []
        self.rng = random.Random(7)

    async def timed(self, tool: str, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        t0 = time.perf_counter()
        result = await self.client.call_tool(tool, args)
        ms = (time.perf_counter() - t0) * 1000
        if result.is_error:
            raise SystemExit(f"{tool}({args}) failed: {result.content}")
        data = result.structured_content
        return ms, data if isinstance(data, dict) else {}

    def add(self, phase: str, name: str, times: list[float], note: str = "") -> None:
        self.rows.append((phase, name, times, note))

    async def during_indexing(self) -> float:
        """search_code while the first index runs; returns the seconds the index took."""
        t0 = time.perf_counter()
        times: list[float] = []
        while True:
            ms, data = await self.timed("search_code", {"query": self.rng.choice(QUERIES)})
            if not data.get("partialIndex"):
                break
            times.append(ms)
            await anyio.sleep(0.02)
        took = time.perf_counter() - t0
        if times:
            self.add("indexing", "search_code", times, f"{len(times)} calls in {took:.1f}s")
        return took

    async def wait_embedded(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _ms, data = await self.timed("search_code", {"query": "probe"})
            if "semanticPending" not in data:
                return
            await anyio.sleep(1.0)
        print(f"(embeddings still catching up after {timeout:.0f}s)", file=sys.stderr)

    async def warm(self) -> None:
        baseline: list[float] = []
        for _ in range(min(self.samples, 50)):
            t0 = time.perf_counter()
            await self.client.list_tools()
            baseline.append((time.perf_counter() - t0) * 1000)
        self.add("warm", "tools/list (baseline)", baseline)

        names: list[str] = []
        places: list[tuple[str, int, int, str]] = []
        for query in QUERIES:  # a first pass gathers names and places to ask about
            _ms, data = await self.timed("search_code", {"query": query, "topK": 10})
            for hit in data.get("hits", []):
                places.append((hit["path"], hit["startLine"], hit["endLine"], hit["project"]))
                names.extend(n for n in IDENT.findall(hit["symbol"].split(".")[-1]))
        names = sorted(set(names)) or ["main"]

        kinds: dict[str, list[float]] = {"natural language": [], "identifier": []}
        server_ms: list[float] = []
        for i in range(self.samples):
            if i % 2:
                kind, query = "identifier", self.rng.choice(names)
            else:
                kind, query = "natural language", self.rng.choice(QUERIES)
            ms, data = await self.timed("search_code", {"query": query})
            kinds[kind].append(ms)
            server_ms.append(float(data.get("tookMs", 0.0)))
        self.add("warm", "search_code", kinds["natural language"] + kinds["identifier"],
                 f"server tookMs p95 {pct(server_ms, 0.95):.1f}")  # fmt: skip
        for kind, times in kinds.items():
            self.add("warm", f"  search_code ({kind})", times)
        lexical = []
        for _ in range(self.samples // 2):
            args = {"query": self.rng.choice(names), "mode": "lexical"}
            lexical.append((await self.timed("search_code", args))[0])
        self.add("warm", "  search_code (mode lexical)", lexical)

        await self.row("find_symbol", lambda: {"name": self.rng.choice(names)})
        if places:

            def open_args() -> dict[str, Any]:
                path, start, end, project = self.rng.choice(places)
                return {"path": path, "startLine": start, "endLine": end, "project": project}

            await self.row("open_file", open_args)

            def page_args() -> dict[str, Any]:
                path, start, _end, project = self.rng.choice(places)
                return {"path": path, "startLine": start, "project": project}

            await self.row("  open_file (400-line page)", page_args, tool="open_file")
        ask = [
            (await self.timed("ask_code", {"question": q}))[0]
            for q in QUESTIONS * max(1, self.samples // 50)
        ]
        self.add("warm", "ask_code (extractive)", ask)

    async def row(
        self, name: str, make_args: Callable[[], dict[str, Any]], tool: str | None = None
    ) -> None:
        times = [(await self.timed(tool or name, make_args()))[0] for _ in range(self.samples)]
        self.add("warm", name, times)

    def report(self, title: str) -> None:
        print(title)
        print(f"{'phase':<9} {'call':<32} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for phase, name, times, note in self.rows:
            print(
                f"{phase:<9} {name:<32} {len(times):>5} {pct(times, 0.5):>8.1f} "
                f"{pct(times, 0.95):>8.1f} {max(times, default=float('nan')):>8.1f}  {note}"
            )


def workspace(args: argparse.Namespace) -> Path:
    if args.corpus == "flask":
        return flask_source()
    if args.corpus == "django":
        return django_source()
    return Path(args.path or ROOT).resolve()


async def run(args: argparse.Namespace) -> None:
    ws = workspace(args)
    storage = args.storage or Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.setdefault("CODE_COMPASS_MODEL_DIR", str(ROOT / "models" / "build"))
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "code_compass_server",
            "mcp",
            "--workspace",
            str(ws),
            "--storage",
            str(storage),
        ],
        env=env,
    )
    try:
        async with Client(params, mode="legacy", read_timeout_seconds=300) as client:
            bench = Bench(client, args.samples)
            took = await bench.during_indexing()
            if args.wait_embedded:
                await bench.wait_embedded(args.embed_timeout)
            await bench.warm()
        bench.report(f"{ws} (first index {took:.1f}s, storage {storage})")
    finally:
        if args.storage is None:
            shutil.rmtree(storage, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("path", nargs="?", help="workspace folder (default: this repository)")
    ap.add_argument("--corpus", choices=("flask", "django"), help="a PyPI sdist instead")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--storage", type=Path, help="reuse this index folder (default: fresh)")
    ap.add_argument("--wait-embedded", action="store_true",
                    help="time the warm rows only once every passage has its vector")  # fmt: skip
    ap.add_argument("--embed-timeout", type=float, default=1800.0)
    anyio.run(run, ap.parse_args())


if __name__ == "__main__":
    main()
