#!/usr/bin/env python3
"""Hover latency while a client pipelines hundreds of searches (the priority lane).

Starts `code-compass serve` (this interpreter, so PYTHONPATH's checkout runs) on Django's
source (PyPI sdist, cached in bench-data/; `--corpus flask` for a smaller one) with a fresh
storage folder and embeddings off unless `--embed`, waits for the index, opens a few files and
warms hovers on their definitions. Then it writes N searches at once (pipelined, as a client
that fires a search per keystroke or a script would) and, while they are outstanding, sends
hovers one at a time and times each round trip. Prints hover p50/p95/max idle and under the
burst, how many hovers were answered while searches were still queued, and the searches' own
latencies.

Target: hover p95 <= 100 ms while 500 searches are pipelined.

    python scripts/bench_load.py [--corpus django|flask] [--searches 500] [--rounds 5] [--embed]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attack_protocol import Client
from benchdata import django_source, flask_source

CORPORA = {"django": (django_source, "django/db/models"), "flask": (flask_source, "src/flask")}
QUERIES = [
    "how are database migrations applied",
    "QuerySet.filter",
    "csrf token validation",
    "get_object_or_404",
    "template context processors",
    "password hashing algorithm",
    "URL resolver reverse",
    "middleware process_request",
    "signals post_save",
    "cache backend timeout",
    "form field validation clean",
    "request session",
]
DEF = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_]\w{3,})")
HOVER_GAP_S = 0.02


def hover_targets(folder: Path, limit: int = 12) -> list[tuple[Path, int, int]]:
    """(file, 0-based line, column) of definition names in the first few files of `folder`."""
    out: list[tuple[Path, int, int]] = []
    for path in sorted(folder.glob("*.py"))[:6]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            m = DEF.match(line)
            if m:
                out.append((path, n, m.start(1) + 1))
                if len([t for t in out if t[0] == path]) >= limit // 6 + 1:
                    break
    return out[:limit]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(name: str, ms: list[float]) -> str:
    return (
        f"{name:<28} n={len(ms):<4} p50 {pct(ms, 0.5):7.1f} ms   p95 {pct(ms, 0.95):7.1f} ms"
        f"   max {max(ms) if ms else float('nan'):7.1f} ms"
    )


async def timed(client: Client, id_: str, method: str, params: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    reply = await client.request(id_, method, params, timeout=600)
    return (time.perf_counter() - t0) * 1000, reply


def burst_of_searches(
    client: Client, burst: int, searches: int, latencies: list[float]
) -> list[asyncio.Future[dict[str, Any]]]:
    """Write `searches` search requests at once; each future resolves with its response."""
    loop = asyncio.get_running_loop()
    sent_at = time.perf_counter()
    futures: list[asyncio.Future[dict[str, Any]]] = []
    for i in range(searches):
        id_ = f"s-{burst}-{i}"
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        client.waiters[f'"{id_}"'] = fut
        fut.add_done_callback(lambda _f: latencies.append((time.perf_counter() - sent_at) * 1000))
        futures.append(fut)
        query = {"query": QUERIES[i % len(QUERIES)], "topK": 10}
        client.send({"jsonrpc": "2.0", "id": id_, "method": "codeCompass/search", "params": query})
    return futures


async def run(corpus: str, searches: int, embed: bool, rounds: int) -> None:
    source_fn, sub = CORPORA[corpus]
    src = source_fn()
    tmp = Path(tempfile.mkdtemp(prefix="cc-load-"))
    client = await Client.start()
    try:
        params = {
            "processId": None,
            "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
            "workspaceFolders": [{"uri": src.as_uri(), "name": corpus}],
            "initializationOptions": {
                "storageUri": (tmp / "storage").as_uri(),
                "settings": {"embeddings": {"enabled": embed}},
            },
        }
        t0 = time.monotonic()
        await client.request("init", "initialize", params, timeout=120)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        await client.drain()
        await client.wait_ready(3600)
        print(f"corpus {corpus}: indexed in {time.monotonic() - t0:.0f} s")

        targets = hover_targets(src / sub)
        for path, _, _ in targets:
            doc = {
                "uri": path.as_uri(),
                "languageId": "python",
                "version": 1,
                "text": path.read_text(encoding="utf-8"),
            }
            client.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": doc},
                }
            )
        await client.drain()

        def hover_params(i: int) -> dict[str, Any]:
            path, line, col = targets[i % len(targets)]
            return {
                "textDocument": {"uri": path.as_uri()},
                "position": {"line": line, "character": col},
            }

        idle: list[float] = []
        for i in range(3 * len(targets)):  # the first round warms jedi and the caches
            ms, _ = await timed(client, f"idle-{i}", "textDocument/hover", hover_params(i))
            if i >= len(targets):
                idle.append(ms)
        search_ms: list[float] = []
        loaded: list[float] = []
        errors = 0
        burst_s: list[float] = []
        for burst in range(rounds):
            futures = burst_of_searches(client, burst, searches, search_ms)
            sent_at = time.perf_counter()
            await client.drain()
            i = 0
            while not all(f.done() for f in futures):  # sent while searches are queued
                ms, _ = await timed(
                    client, f"load-{burst}-{i}", "textDocument/hover", hover_params(i)
                )
                loaded.append(ms)
                i += 1
                await asyncio.sleep(HOVER_GAP_S)
            burst_s.append(time.perf_counter() - sent_at)
            errors += sum(1 for f in futures if "error" in f.result())
        print(summary("hover, idle", idle))
        print(summary(f"hover, {searches} searches queued", loaded))
        print(summary("search (from its burst start)", search_ms))
        mean_burst = statistics.mean(burst_s)
        print(
            f"{rounds} bursts of {searches} searches, each answered in {mean_burst:.1f} s "
            f"({searches / mean_burst:.0f}/s), {errors} errors; target hover p95 <= 100 ms"
        )
    finally:
        await client.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="django")
    ap.add_argument("--searches", type=int, default=500)
    ap.add_argument("--embed", action="store_true")
    ap.add_argument("--rounds", type=int, default=5, help="bursts, hovers pooled over them")
    args = ap.parse_args()
    asyncio.run(run(args.corpus, args.searches, args.embed, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
