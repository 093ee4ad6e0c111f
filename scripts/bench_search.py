"""Hybrid query latency at Django scale, query embedding included (target p95 <= 30 ms).

    .venv/bin/python scripts/bench_search.py [--limit 3000] [--no-fill] [--queries 300]

Indexes all of Django 5.2.8 (sdist, bench-data) into a persistent storage, then embeds chunks
with the real model into a persistent VectorStore (bench-data/bench-search/vectors): the first
--limit chunks not yet in the store per run (0 = all, ~52k chunks, ~12 min at 70 chunks/s), so
repeated runs converge on a fully embedded Django. Unless --no-fill, the chunks still missing
get a random unit vector each, flagged as such in the output: the matrix then has Django's real
size, which is what latency depends on (their similarities are meaningless, not their cost).
Prints p50/p95/max of hybrid search through Engine.search, its parts (query embedding, BM25,
vector top-k, fusion) and raw Tantivy BM25 as the baseline of the same run, and the same search
with the learned ranker switched off (main's path before it), interleaved query by query so
both see the same load: the ranker's cost paired in one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "eval" / "search"))

from benchdata import CACHE, django_source  # noqa: E402
from code_compass_server.constants import SEARCH_CANDIDATE_POOL  # noqa: E402
from code_compass_server.embed.model import Embedder  # noqa: E402
from code_compass_server.embed.project_link import store_id, to_pending  # noqa: E402
from code_compass_server.embed.vectors import VectorItem, VectorStore  # noqa: E402
from code_compass_server.embed.worker import EmbeddingWorker  # noqa: E402
from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.index.project import Project  # noqa: E402
from code_compass_server.records import SearchParams  # noqa: E402
from code_compass_server.search import calibration  # noqa: E402
from code_compass_server.search.candidates import Candidate  # noqa: E402
from code_compass_server.search.fusion import fuse  # noqa: E402
from code_compass_server.search.searcher import lexical_candidates  # noqa: E402
from code_compass_server.search.semantic import semantic_candidates  # noqa: E402

OUT = CACHE / "bench-search"


class _NoRanker:
    """Stands in for search/ranker.py in the paired run: no correction, the linear z ranks."""

    @staticmethod
    def corrected(*_args: object) -> None:
        return None


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def line(name: str, ms: list[float]) -> str:
    return (
        f"{name:<28} p50 {statistics.median(ms):7.2f} ms  p95 {pct(ms, 95):7.2f} ms"
        f"  max {max(ms):7.2f} ms"
    )


def embed_some(project: Project, store: VectorStore, embedder: Embedder, limit: int) -> int:
    """Embed up to `limit` chunks not in the store yet (all if 0); returns how many."""
    have = store.chunk_ids(project.name)
    ids = [str(r[0]) for r in project.catalog._query("SELECT id FROM chunks ORDER BY id")]
    todo = [i for i in ids if i not in have]
    if limit:
        todo = todo[:limit]
    done = 0
    t0 = time.perf_counter()
    worker = EmbeddingWorker(lambda _n: [], embedder, store)  # the worker's own embedding path
    for s in range(0, len(todo), 64):
        rows = project.catalog.chunks_by_ids(todo[s : s + 64])
        worker.process([to_pending(project.name, r) for r in rows.values()])
        done += len(rows)
        if (s // 64) % 10 == 0:
            rate = done / max(1e-9, time.perf_counter() - t0)
            print(f"  embedded {done}/{len(todo)} chunks ({rate:.0f}/s)", file=sys.stderr)
            store.flush()
    store.flush()
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=3000, help="chunks to embed this run (0 = all)")
    ap.add_argument("--no-fill", action="store_true", help="search only the embedded chunks")
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args(argv)

    src = django_source()
    engine = Engine.open(OUT / "storage")
    name = engine.add_project(src, name="django")
    t0 = time.perf_counter()
    engine.index(name, embed=False)
    project = engine.project(name)
    counts = project.catalog.counts()
    print(
        f"django: {counts['chunks']} chunks, lexical index ready in {time.perf_counter() - t0:.1f}s"
    )

    embedder = Embedder()
    store = VectorStore(OUT / "vectors", store_id(embedder))
    t0 = time.perf_counter()
    n = embed_some(project, store, embedder, args.limit)
    secs = time.perf_counter() - t0
    real = store.count(name)
    print(f"embedded {n} chunks this run in {secs:.0f}s; {real}/{counts['chunks']} really embedded")

    searched = store
    if not args.no_fill and real < counts["chunks"]:
        # A throwaway in-memory copy: the persistent store keeps only real vectors.
        searched = VectorStore(OUT / "vectors-filled", store_id(embedder))
        searched.delete_project(name)
        have = store.chunk_ids(name)
        ids = [str(r[0]) for r in project.catalog._query("SELECT id FROM chunks ORDER BY id")]
        rows = project.catalog.chunks_by_ids(ids)
        rng = np.random.default_rng(0)
        snap = store._snapshot  # real vectors, copied row by row
        items = [
            VectorItem(snap.chunk_ids[i], name, rows[snap.chunk_ids[i]].path,
                       rows[snap.chunk_ids[i]].language, snap.mat[i])
            for i in range(snap.n) if snap.alive[i] and snap.chunk_ids[i] in rows
        ]  # fmt: skip
        for cid in ids:
            if cid not in have:
                v = rng.standard_normal(embedder.dims).astype(np.float32)
                items.append(VectorItem(cid, name, rows[cid].path, rows[cid].language, v))
        searched.add(items)
        print(
            f"filled {counts['chunks'] - real} chunks with random vectors:"
            f" {searched.row_count()} rows searched"
        )

    def semantic(p: Project, params: SearchParams, limit: int) -> list[Candidate]:
        return semantic_candidates(p, params, limit, embedder=embedder, store=searched)

    engine.search_service.semantic = lambda: semantic

    import devset

    qdir = devset.build_all(["django"])["django"]
    queries = [q.query for q in devset.load_queries(qdir)][: args.queries]
    for q in queries[:10]:  # warm caches (mask, tokenizer, Tantivy searcher)
        engine.search(SearchParams(q, 10, None, None, None, mode="hybrid"))

    total: list[float] = []
    no_ranker: list[float] = []
    t_embed: list[float] = []
    t_lex: list[float] = []
    t_vec: list[float] = []
    t_fuse: list[float] = []
    t_bm25: list[float] = []
    with_ranker = calibration.ranker
    for i, q in enumerate(queries):
        p = SearchParams(q, 10, None, None, None, mode="hybrid")
        for ranked in (True, False) if i % 2 == 0 else (False, True):
            calibration.ranker = with_ranker if ranked else _NoRanker  # type: ignore[assignment]
            a = time.perf_counter()
            engine.search(p)
            (total if ranked else no_ranker).append((time.perf_counter() - a) * 1000)
        calibration.ranker = with_ranker
        a = time.perf_counter()
        vec = embedder.embed_query(q)
        b = time.perf_counter()
        searched.search(vec, SEARCH_CANDIDATE_POOL, project=name)
        c = time.perf_counter()
        lex = lexical_candidates(project, p, SEARCH_CANDIDATE_POOL)
        d = time.perf_counter()
        sem = semantic(project, p, SEARCH_CANDIDATE_POOL)
        e = time.perf_counter()
        fuse(q, lex, sem)
        f = time.perf_counter()
        project.lexical.search(q, SEARCH_CANDIDATE_POOL)
        g = time.perf_counter()
        t_embed.append((b - a) * 1000)
        t_vec.append((c - b) * 1000)
        t_lex.append((d - c) * 1000)
        t_fuse.append((f - e) * 1000)
        t_bm25.append((g - f) * 1000)
    print(
        f"\n{len(queries)} Django dev-set queries, top-k 10, pool {SEARCH_CANDIDATE_POOL}/channel"
    )
    print(line("hybrid Engine.search", total))
    print(line("  same, ranker off (paired)", no_ranker))
    print(
        f"  ranker's cost at p50: {statistics.median(total) - statistics.median(no_ranker):+.2f} ms"
    )
    print(line("  query embedding", t_embed))
    print(line("  vector top-k", t_vec))
    print(line("  lexical candidates", t_lex))
    print(line("  fusion + calibration", t_fuse))
    print(line("raw Tantivy BM25 (baseline)", t_bm25))
    print(f"hybrid p95 / raw BM25 p95: {pct(total, 95) / max(1e-9, pct(t_bm25, 95)):.1f}x")
    print(f"target p95 <= 30 ms: {'met' if pct(total, 95) <= 30 else 'NOT met'}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
