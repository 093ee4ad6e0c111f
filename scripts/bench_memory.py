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
    args = ap.parse_args()
    ledger = Ledger()
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


if __name__ == "__main__":
    main()
