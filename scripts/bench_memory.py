"""Resident memory per component of a long-running engine, at Django scale.

    .venv/bin/python scripts/bench_memory.py [--lexical-store bench-data/store/django]
        [--vector-store bench-data/store/date-fns] [--searches 50]

One process, components added one at a time; after each, /proc/self/status's RssAnon (heap:
what the process allocated) and RssFile (file pages mapped and touched: Tantivy segments,
memory-mapped vectors; the kernel can drop them under pressure) are printed with their growth.
Steps: imports; the engine with the Django project open (catalog + Tantivy reader); lexical
searches; symbol lookups (the tables a hover and a lens read); the embedding model; then the
vectors of an embedded project two ways: loaded into memory (`VectorStore`, what the
language server holds) and memory-mapped (`VectorReader`, what a query process reads), each
with searches. Run as its own process: the figures are this process's, nothing else's.

    .venv/bin/python scripts/bench_memory.py --parses-only

The resolvers' parse caches, filled as a navigation session fills them: tree-sitter parses
of date-fns files (as many as the cache keeps) and Python parses of Django modules (until the
cache's byte bound evicts), each with the source bytes it holds.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchdata import date_fns_source, django_source  # noqa: E402

QUERIES = ["validate user passwords", "PBKDF2 iterations", "QuerySet select_related", "csrf"]


def rss() -> tuple[float, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["RssAnon"], fields["RssFile"]


class Ledger:
    def __init__(self) -> None:
        self.last = rss()
        print(f"{'step':<48} {'anon MB':>8} {'+':>7} {'file MB':>8} {'+':>7}")
        self.row("interpreter")

    def row(self, step: str) -> None:
        gc.collect()
        anon, file = rss()
        print(
            f"{step:<48} {anon:8.1f} {anon - self.last[0]:+7.1f} "
            f"{file:8.1f} {file - self.last[1]:+7.1f}",
            flush=True,
        )
        self.last = (anon, file)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lexical-store", type=Path, default=ROOT / "bench-data/store/django")
    ap.add_argument("--vector-store", type=Path, default=ROOT / "bench-data/store/date-fns")
    ap.add_argument("--searches", type=int, default=50)
    ap.add_argument("--parses-only", action="store_true", help="only the parse caches' steps")
    args = ap.parse_args()
    ledger = Ledger()
    if args.parses_only:
        parse_caches(ledger)
        return
    import numpy  # noqa: F401 - a server holds it: counted with the imports

    from code_compass_server.engine import Engine
    from code_compass_server.settings import EngineSettings
    from code_compass_server.validation import validate_search

    ledger.row("imports (engine, numpy)")
    engine = Engine.open(args.lexical_store, EngineSettings(embeddings=False))
    name = engine.add_project(django_source())
    project = engine.project(name)
    ledger.row("Django open: catalog + Tantivy reader")
    for i in range(args.searches):
        engine.search(validate_search(QUERIES[i % len(QUERIES)], mode="lexical"))
    ledger.row(f"{args.searches} lexical searches")
    rows = project.catalog._query("SELECT name, path FROM symbols WHERE rowid % 53 = 0")
    rng = random.Random(0)
    for _ in range(500):
        sym, path = rng.choice(rows)
        engine.symbols_named(str(sym))
        engine.symbols_in_file(name, str(path))
    ledger.row("500 symbol lookups (by name and by file)")
    engine.close()
    ledger.row("Django closed")

    from code_compass_server.embed.model import Embedder
    from code_compass_server.embed.model_id import store_id
    from code_compass_server.embed.vector_reader import VectorReader
    from code_compass_server.embed.vectors import VectorStore
    from code_compass_server.storage import project_storage

    embedder = Embedder(threads=1)
    ledger.row("embedding model (ONNX session, tokenizer)")
    vectors = project_storage(args.vector_store, date_fns_source().resolve()) / "vectors"
    queries = [embedder.embed_query(q) for q in QUERIES]
    store = VectorStore(vectors, store_id(embedder), embedder.dims, writable=lambda: False)
    ledger.row(f"vectors loaded (VectorStore, {store.row_count()} rows)")
    for i in range(args.searches):
        store.search(queries[i % len(queries)], 20)
    ledger.row(f"{args.searches} vector searches, loaded")
    del store
    ledger.row("loaded vectors dropped")
    reader = VectorReader(vectors, store_id(embedder), embedder.dims)
    for i in range(args.searches):
        reader.search(queries[i % len(queries)], 20)
    ledger.row(f"{args.searches} vector searches, mapped (VectorReader)")
    reader.close()
    parse_caches(ledger)


def parse_caches(ledger: Ledger) -> None:
    """The resolvers' caches filled to their bounds (entries or source bytes)."""
    from code_compass_server.index.heap import trim_heap
    from code_compass_server.symbols.resolve_python import PythonScopes
    from code_compass_server.symbols.resolve_treecache import TREE_CACHE_FILES, TreeFiles
    from code_compass_server.symbols.stamped_cache import release_retired

    ledger.row("resolver modules imported")
    root = date_fns_source()
    trees = TreeFiles(root)
    files = sorted(f.relative_to(root).as_posix() for f in root.rglob("*.js"))
    held = [trees.load(rel) for rel in files[:TREE_CACHE_FILES]]
    source = sum(len(p.source) for p in held if p is not None)
    ledger.row(f"tree-sitter: {len(held)} date-fns files ({source / 1e6:.2f} MB source)")
    del held, trees
    trim_heap()
    ledger.row("tree-sitter cache dropped")
    root = django_source()
    scopes = PythonScopes(root)
    modules = sorted(f.relative_to(root).as_posix() for f in (root / "django").rglob("*.py"))
    for rel in modules:
        scopes.module(rel)
    while release_retired()[1]:  # the evicted parses, freed as the server's pacer frees them
        pass
    trim_heap()  # and their pages given back, as the pacer does
    held, source = scopes._files.size()  # what the cache keeps once its bounds evicted the rest
    ledger.row(f"Python: {len(modules)} Django modules, {held} kept ({source / 1e6:.2f} MB src)")


if __name__ == "__main__":
    main()
