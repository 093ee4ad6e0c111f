"""How time, memory and disk grow with the repository: the synthetic monorepo, indexed lexically.

    .venv/bin/python scripts/bench_scale.py --copies 1,6,24 [--queries 100]

For each size (scripts/scale_corpus.py: Django replicated N times with renamed paths), indexes
into a fresh bench-data/store/scale-x<N> with `code-compass index --no-embed` (a child process:
wall time and peak RSS from wait4), then reports the index's disk size, and from one query
process (an engine opened as `search` opens it): lexical search p50/p95 and symbol lookup
p50/p95 (`symbols_named`, the index part of a hover; the language server's own resolution is
not in it), then cold `code-compass search --mode lexical` p50 (fresh processes) and the peak
RSS of the query process. Embeddings are not built here (1M chunks is ~9 h on this machine):
scripts/bench_embed.py measures the rate on a slice; docs/performance.md extrapolates.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchdata import django_source  # noqa: E402
from scale_corpus import replicate  # noqa: E402

QUERIES = [
    "validate user passwords", "PBKDF2 iterations", "QuerySet select_related", "csrf token",
    "how are database migrations applied", "render a template with a context",
    "cache a view's response", "parse the HTTP accept header", "send an email", "paginator",
]  # fmt: skip


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(copies: int, n_queries: int, cc: str) -> dict[str, str]:
    tree = replicate(django_source(), ROOT / "bench-data" / "scale", copies)
    storage = ROOT / "bench-data" / "store" / f"scale-x{copies}"
    shutil.rmtree(storage, ignore_errors=True)
    base = ["--workspace", str(tree), "--storage", str(storage)]
    t0 = time.perf_counter()
    proc = subprocess.Popen([cc, "index", "--no-embed", *base], stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    index_s = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        return {"copies": str(copies), "error": f"index exit {os.waitstatus_to_exitcode(status)}"}

    from code_compass_server.engine import Engine
    from code_compass_server.settings import EngineSettings
    from code_compass_server.validation import validate_search

    engine = Engine.open(storage, EngineSettings(embeddings=False), queries_only=True)
    name = engine.add_project(tree)
    engine.refresh()
    counts = engine.project(name).catalog.counts()
    rng = random.Random(0)
    rows = engine.project(name).catalog._query(
        "SELECT name FROM symbols WHERE rowid % 97 = 0 LIMIT 2000"
    )
    names = [str(r[0]) for r in rows]
    search_ms, symbol_ms = [], []
    for i in range(n_queries):
        params = validate_search(QUERIES[i % len(QUERIES)], mode="lexical")
        t = time.perf_counter()
        engine.search(params)
        search_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        engine.symbols_named(rng.choice(names))
        symbol_ms.append((time.perf_counter() - t) * 1000)
    engine.close()
    peak_rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cold = []
    for i in range(5):
        t = time.perf_counter()
        subprocess.run(
            [cc, "search", QUERIES[i], "--mode", "lexical", "--top-k", "5", *base],
            stdout=subprocess.DEVNULL, check=True,
        )  # fmt: skip
        cold.append(time.perf_counter() - t)
    return {
        "copies": str(copies),
        "files": f"{counts['files']:,}",
        "chunks": f"{counts['chunks']:,}",
        "index s": f"{index_s:.0f}",
        "index peak RSS MB": f"{usage.ru_maxrss / 1024:.0f}",
        "disk MB": f"{du(storage) / 1e6:.0f}",
        "search p50/p95 ms": f"{statistics.median(search_ms):.0f} / {pct(search_ms, 95):.0f}",
        "symbol p50/p95 ms": f"{statistics.median(symbol_ms):.1f} / {pct(symbol_ms, 95):.1f}",
        "cold search p50 s": f"{statistics.median(cold):.2f}",
        "query process peak RSS MB": f"{peak_rss_kb / 1024:.0f}",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", default="1,6,24")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--code-compass", default=str(Path(sys.executable).with_name("code-compass")))
    args = ap.parse_args()
    for copies in (int(c) for c in args.copies.split(",")):
        row = measure(copies, args.queries, args.code_compass)
        print(" | ".join(f"{k}: {v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
