"""Resolver memory and pauses over a long run: every Django module resolved, rounds over.

Resolves a few identifiers in each of the corpus's Python files, in one process, as requests
do (`SymbolResolver.foreground`), with no pause between them: the parse caches fill, then
evict on every new file. Prints, per round, the resident memory (it must level off: evicted
parses are reclaimed), the slowest request and how many full collections ran and how long
the longest took (a request waits for one that starts while it runs).

    python scripts/bench_resolve_memory.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import django_source
from code_compass_server.symbols.resolve import SymbolResolver

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}")


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-file", type=int, default=5, help="identifiers resolved per file")
    args = ap.parse_args()
    root = django_source()
    files = sorted(p.relative_to(root).as_posix() for p in (root / "django").rglob("*.py"))
    full: list[float] = []
    started = [0.0]

    def timing(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                full.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(timing)
    resolver = SymbolResolver()
    print(f"{len(files)} files; start: RSS {rss_mb():.0f} MB")
    try:
        for r in range(args.rounds):
            slowest = 0.0
            full.clear()
            for rel in files:
                lines = (root / rel).read_text(encoding="utf-8").split("\n")
                spots = [(i, m.start()) for i, ln in enumerate(lines) for m in IDENT.finditer(ln)]
                for line, col in spots[:: max(1, len(spots) // args.per_file)][: args.per_file]:
                    t0 = time.perf_counter()
                    with resolver.foreground():
                        resolver.fast(root, rel, "python", None, line, col)
                    slowest = max(slowest, (time.perf_counter() - t0) * 1000)
            print(
                f"round {r + 1}: RSS {rss_mb():.0f} MB; slowest request {slowest:.0f} ms; "
                f"{len(full)} full collections, longest {max(full, default=0):.0f} ms; "
                f"gc enabled {gc.isenabled()}"
            )
    finally:
        resolver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
