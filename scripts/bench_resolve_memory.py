"""Resolver memory and pauses over a long run: every Django module resolved, rounds over.

Resolves a few identifiers in each of the corpus's Python files, in one process, as requests
do (`SymbolResolver.foreground`), with no pause between them: the parse caches fill, then
evict on every new file. Prints, per round, the resident memory (it must level off: evicted
parses are reclaimed), the slowest request and how many full collections ran and how long
the longest took (a request waits for one that starts while it runs).

`--components`: the bytes each resolver cache holds at Django scale, measured on its own.
Under tracemalloc, the rounds above fill the parse cache; then lens usages are sorted for
the names Django defines most often (every file scanned for their tokens: the comment and
string spans cached per file, the answers per file version) and a sample of positions goes
to jedi (its answers cache; its process's resident memory is read apart). Each cache is
then emptied in turn and the Python memory that frees is its size (tree-sitter's C memory
is not traced: Django's resolution is Python).

    python scripts/bench_resolve_memory.py [--rounds 3] [--components]
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import django_source
from code_compass_server.constants import PYTHON_PARSE_CACHE_BYTES
from code_compass_server.symbols.lens_usages import USAGE_CACHE_FILES
from code_compass_server.symbols.resolve import JEDI_CACHE_ENTRIES, SymbolResolver
from code_compass_server.symbols.resolve_python import MODULE_CACHE_FILES

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}")
DEF = re.compile(r"^\s*def ([A-Za-z_]\w*)\(self", re.M)


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-file", type=int, default=5, help="identifiers resolved per file")
    ap.add_argument("--components", action="store_true", help="bytes held per cache")
    ap.add_argument("--lens-names", type=int, default=20, help="--components: names sorted")
    ap.add_argument("--jedi-positions", type=int, default=200, help="--components: to jedi")
    args = ap.parse_args()
    if args.components:
        return components(args)
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


def _traced() -> int:
    # The collection pacer freezes the heap (gc.freeze): a frozen cycle is never collected,
    # so a cache emptied would seem to free nothing.
    gc.unfreeze()
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def components(args: argparse.Namespace) -> int:
    from code_compass_server.symbols import code_names
    from code_compass_server.symbols.code_names import code_columns_in
    from code_compass_server.symbols.lens_usages import UsageResolver
    from code_compass_server.symbols.stamped_cache import release_retired

    root = django_source()
    files = sorted(p.relative_to(root).as_posix() for p in (root / "django").rglob("*.py"))
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in files}
    tracemalloc.start()
    base = _traced()
    resolver = SymbolResolver()
    usages = UsageResolver(resolver)
    t0 = time.perf_counter()
    try:
        # Hovers: a few identifiers per file, every file, `--rounds` times.
        spots: list[tuple[str, int, int]] = []
        for _ in range(args.rounds):
            for rel in files:
                lines = texts[rel].split("\n")
                found = [(i, m.start()) for i, ln in enumerate(lines) for m in IDENT.finditer(ln)]
                for line, col in found[:: max(1, len(found) // args.per_file)][: args.per_file]:
                    with resolver.foreground():
                        resolver.fast(root, rel, "python", None, line, col)
                    spots.append((rel, line, col))
        # Lenses: the names defined most often, every file's tokens of them sorted.
        defined = Counter(m.group(1) for t in texts.values() for m in DEF.finditer(t))
        names = [n for n, _ in defined.most_common(args.lens_names)]
        for name in names:
            candidates = {
                rel: [(ln, col) for ln, cols in code_columns_in(texts[rel], "python", name).items()
                      for col in cols]
                for rel in files
            }  # fmt: skip
            usages.classify(root, frozenset(), {k: v for k, v in candidates.items() if v},
                            lambda _rel: None, 2.0)  # fmt: skip
        # jedi: positions the fast path leaves undecided, answered in its process.
        sent = 0
        for rel, line, col in spots:
            if sent >= args.jedi_positions:
                break
            if resolver.fast(root, rel, "python", None, line, col) is None:
                resolver.resolve(root, rel, "python", texts[rel], line, col, budget_s=30.0)
                sent += 1
        jedi_rss = sum(c.memory_info().rss for c in psutil.Process().children(recursive=True))
        took = time.perf_counter() - t0
        scopes = resolver.python_scopes(root)
        parse_cache = scopes._files
        rows: list[tuple[str, int, int, str]] = []
        total = _traced() - base

        def drop(what: str, entries: int, empty: Any, bound: str) -> None:
            before = _traced()
            empty()
            rows.append((what, entries, before - _traced(), bound))

        # Evicted parses the pacer frees between requests (this run has no idle time).
        drop("evicted parses not freed yet", 0, release_retired, "freed between requests")
        with parse_cache._lock:
            parsed, source = len(parse_cache._cache), parse_cache._bytes

        def empty_parses() -> None:
            with parse_cache._lock:
                parse_cache._cache.clear()
                parse_cache._bytes = 0
            release_retired()

        bound = f"{MODULE_CACHE_FILES} files / {PYTHON_PARSE_CACHE_BYTES / 1e6:.1f} MB source"
        drop(f"Python parse cache ({source / 1e6:.1f} MB of source)", parsed, empty_parses, bound)
        drop("comment/string spans (code_names)", len(code_names._masks),
             code_names._masks.clear, f"{code_names.MASK_CACHE_FILES} files")  # fmt: skip
        drop("lens usage answers", sum(len(v) for v in usages._answers.values()),
             usages._answers.clear, f"{USAGE_CACHE_FILES} files")  # fmt: skip
        drop("jedi answers", len(resolver._jedi_cache), resolver._jedi_cache.clear,
             f"{JEDI_CACHE_ENTRIES} positions")  # fmt: skip
        left = _traced() - base
    finally:
        resolver.close()
    print(f"{len(files)} files, {len(spots)} hovers, {len(names)} lens names, {sent} to jedi; "
          f"{took:.0f} s under tracemalloc")  # fmt: skip
    print("| cache | entries | bytes | bytes/entry | bound |")
    print("| --- | ---: | ---: | ---: | --- |")
    for what, entries, size, bound in rows:
        per = f"{size / entries:,.0f}" if entries else "-"
        print(f"| {what} | {entries:,} | {size / 1e6:.1f} MB | {per} | {bound} |")
    print(f"| all traced after the run | | {total / 1e6:.1f} MB | | |")
    print(f"| left after emptying the caches | | {left / 1e6:.1f} MB | | |")
    print(f"| jedi's process (resident, apart) | | {jedi_rss / 1e6:.1f} MB | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
