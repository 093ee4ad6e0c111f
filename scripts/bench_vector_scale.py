"""The semantic side of the 1M-chunk table: the vector store at the scale corpus's size.

    .venv/bin/python scripts/bench_vector_scale.py [--chunks 1256580] [--queries 100]
        [--pieces-per-s 25]

Embedding ~1.3M chunks is out of reach on 2 cores (hours), so what is measured and what is
extrapolated are kept apart:
- measured on Django (its chunks by the project's chunker, model texts by the project's rule):
  pieces per chunk, and the share of chunks whose embedding texts contain no `django` — those
  texts are identical in every copy of scripts/scale_corpus.py (it renames only `django`), so
  the embedding cache legitimately embeds them once for all copies;
- measured at full size, with synthetic unit vectors in place of embeddings, clustered as
  embeddings are (synthetic_vectors.clustered_unit_vectors: uniform random vectors have no near
  neighbours, so no approximate index could be judged on them): the store's build (add +
  save), the approximate index's build (embed/ivf.py, what the embedding worker does once
  caught up) and its disk, and in separate child processes (each process's own peak RSS) the
  two ways it is read — loaded (`VectorStore`, what the language server holds) and
  memory-mapped (`VectorReader`, what a query process reads) — open time, resident memory
  after open, search p50/p95 (top 20, the whole store as a monorepo's one project, and with a
  path prefix), and recall@10 of the approximate search against the exact scan on
  --recall-queries queries (a query is a stored vector moved by noise, as a question is near
  the passage that answers it);
- with --embed-chunks N: the real embedding worker (its thread, its save policy, a fresh
  embedding cache, the project's model) embeds the same N of Django's chunks into an empty
  store and into a copy of the full-size store, each in its own child process, for this code
  and, with --baseline DIR (a checkout with the code to compare, e.g. a detached worktree),
  for that code too: pieces/s at full size against an empty store in the same run, the saves
  it made and the seconds they took — the rate the last stretch of a 1M-chunk index runs at;
- extrapolated: the time to embed, from --pieces-per-s (a rate measured by bench_embed.py on
  this machine), or else the rate measured at full size above, and the pieces left after the
  cache's reuse.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchdata import django_source  # noqa: E402
from synthetic_vectors import clustered_unit_vectors  # noqa: E402

COPIES = 24  # scripts/scale_corpus.py's default: ~1.26M chunks
PROJECT = "monorepo"  # the scale corpus is one project: its store holds every copy
DIMS = 384
MODEL_ID = "synthetic-vectors"
BATCH = 20_000


def rss_mb() -> dict[str, float]:
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            found[key] = int(value.split()[0]) / 1024
    return found


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def django_shape(sample: int) -> tuple[float, float, int]:
    """(pieces per chunk, share of chunks whose model texts never say `django`, chunks), on
    a sample of Django's chunks."""
    from bench_embed import django_chunks
    from code_compass_server.embed.model import Embedder
    from code_compass_server.embed.split import model_texts

    chunks = django_chunks(django_source())
    embedder = Embedder(threads=1)
    picked = random.Random(0).sample(chunks, min(sample, len(chunks)))
    pieces = same = 0
    for c in picked:
        texts = model_texts(c.text, c.start_line, c.symbol, c.language, embedder, c.context)
        pieces += len(texts)
        same += not any("django" in t for t in texts)
    return pieces / len(picked), same / len(picked), len(chunks)


def build(directory: Path, chunks: int, pieces_per_chunk: float) -> None:
    """Child: fill a store like the scale corpus's (24 projects' worth of paths in one project
    per copy), save it; prints JSON."""
    from code_compass_server.embed.vectors import VectorItem, VectorStore

    rng = np.random.default_rng(0)
    store = VectorStore(directory, MODEL_ID, DIMS)
    t0 = time.perf_counter()
    rows_needed = int(chunks * pieces_per_chunk * 1.01) + BATCH  # the pieces, with room
    pool = clustered_unit_vectors(rows_needed, DIMS, rng)
    used = 0
    rows = 0
    extra = pieces_per_chunk - 1.0
    chunk = 0
    while chunk < chunks:
        n = min(BATCH, chunks - chunk)
        items: list[VectorItem] = []
        counts = 1 + (rng.random(n) < extra).astype(int)  # pieces of each chunk
        vecs = pool[used : used + int(counts.sum())]
        used += len(vecs)
        k = 0
        for i in range(n):
            cid = chunk + i
            copy = cid * COPIES // chunks
            path = f"svc{copy:02d}/django{copy}/mod{cid // 12}.py"
            for _ in range(counts[i]):
                items.append(VectorItem(f"c{cid}", PROJECT, path, "python", vecs[k]))
                k += 1
        rows += store.add(items)
        chunk += n
    t_add = time.perf_counter() - t0
    del pool
    t0 = time.perf_counter()
    store.save()
    t_save = time.perf_counter() - t0
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    store.maintain_index()  # what the embedding worker does once it has caught up
    store.save()
    t_ivf, cpu_ivf = time.perf_counter() - t0, time.process_time() - cpu0
    print(json.dumps({
        "rows": rows, "add_s": t_add, "save_s": t_save, "ivf_s": t_ivf, "ivf_cpu_s": cpu_ivf,
        **rss_mb(),
    }))  # fmt: skip


def reindex(directory: Path) -> None:
    """Child: build the approximate index of an existing store again (after a change to
    embed/ivf.py: the vectors stay), as its writer would; prints JSON."""
    from code_compass_server.embed.vectors import VectorStore

    t0 = time.perf_counter()
    store = VectorStore(directory, MODEL_ID, DIMS)
    t_open = time.perf_counter() - t0
    store._trained_rows = 0  # as if it had never been built
    t0, cpu0 = time.perf_counter(), time.process_time()
    store.maintain_index()
    store.save()
    took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(json.dumps({"open_s": t_open, "ivf_s": took, "ivf_cpu_s": cpu, **rss_mb()}))


def read(directory: Path, mode: str, queries: int, recall_queries: int) -> None:
    """Child: open the store loaded or mapped, search; prints JSON."""
    from code_compass_server.embed.vector_reader import VectorReader
    from code_compass_server.embed.vectors import VectorStore

    before = rss_mb()
    t0 = time.perf_counter()
    store: VectorStore | VectorReader
    if mode == "loaded":
        store = VectorStore(directory, MODEL_ID, DIMS, writable=lambda: False)
    else:
        store = VectorReader(directory, MODEL_ID, DIMS)
    t_open = time.perf_counter() - t0
    opened = rss_mb()
    rng = np.random.default_rng(1)
    pool = clustered_unit_vectors(4096, DIMS, np.random.default_rng(0))  # the build's first rows
    plain: list[float] = []
    prefixed: list[float] = []
    exact: list[float] = []
    recall: list[float] = []
    for i in range(queries):
        noise = rng.standard_normal(DIMS).astype(np.float32)
        q = pool[rng.integers(0, len(pool))] + 0.6 * noise / np.linalg.norm(noise)
        t0 = time.perf_counter()
        hits = store.search(q, 20, project=PROJECT)
        plain.append(time.perf_counter() - t0)
        assert len(hits) == 20
        t0 = time.perf_counter()
        copy = i % COPIES
        store.search(q, 20, project=PROJECT, path_prefix=f"svc{copy:02d}/django{copy}/mod1")
        prefixed.append(time.perf_counter() - t0)
        if i < recall_queries:
            t0 = time.perf_counter()
            truth = store.search(q, 10, project=PROJECT, exact=True)
            exact.append(time.perf_counter() - t0)
            got = {cid for cid, _ in hits[:10]}
            recall.append(len(got & {cid for cid, _ in truth}) / len(truth))
    after = rss_mb()
    print(json.dumps({
        "open_s": t_open,
        "anon_open_mb": opened["RssAnon"] - before["RssAnon"],
        "rss_after_mb": after["VmRSS"], "anon_after_mb": after["RssAnon"],
        "file_after_mb": after["RssFile"], "peak_mb": after["VmHWM"],
        "p50_ms": 1000 * pct(plain, 0.5), "p95_ms": 1000 * pct(plain, 0.95),
        "prefix_p50_ms": 1000 * pct(prefixed, 0.5), "prefix_p95_ms": 1000 * pct(prefixed, 0.95),
        "exact_p50_ms": 1000 * pct(exact, 0.5), "exact_p95_ms": 1000 * pct(exact, 0.95),
        "recall10": float(np.mean(recall)) if recall else float("nan"),
        "approximate": getattr(store, "ann_note", "") == "",
    }))  # fmt: skip


def embed_into(directory: Path, chunks: int) -> None:
    """Child: the embedding worker embeds `chunks` of Django's chunks (the same sample in every
    child) into the store at `directory`, empty or full; prints JSON."""
    import dataclasses
    import threading

    from bench_embed import django_chunks
    from code_compass_server.embed.cache import EmbeddingCache
    from code_compass_server.embed.model import Embedder
    from code_compass_server.embed.vectors import VectorStore
    from code_compass_server.embed.worker import EmbeddingWorker, PendingChunk

    sample = random.Random(0).sample(django_chunks(django_source()), chunks)
    todo = [dataclasses.replace(c, project=PROJECT) for c in sample]
    embedder = Embedder()
    embedder.embed_query("warm up the session")
    t0 = time.perf_counter()
    store = VectorStore(directory, MODEL_ID, DIMS)
    t_open = time.perf_counter() - t0
    rows_before = store.row_count()
    saves: list[float] = []
    started: list[float] = []
    lock = threading.Lock()

    def take() -> list[str]:
        started.append(time.perf_counter())
        return []

    store.set_commit_hooks(take, lambda _: saves.append(time.perf_counter() - started[-1]), list)

    def fetch(n: int) -> list[PendingChunk]:
        with lock:
            out, todo[:n] = todo[:n], []
            return out

    with tempfile.TemporaryDirectory(dir=directory.parent) as tmp:
        cache = EmbeddingCache(Path(tmp) / "cache.sqlite", embedder.model_id)
        worker = EmbeddingWorker(fetch, embedder, store, cache)
        pieces = sum(len(worker.texts_for(c)) for c in sample)
        t0, cpu0 = time.perf_counter(), time.process_time()
        worker.start()
        worker.wake()
        while not worker.wait_idle(5.0):
            pass
        took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        worker.stop()
        cache.close()
    print(json.dumps({
        "open_s": t_open, "rows_before": rows_before, "rows_after": store.row_count(),
        "chunks": chunks, "pieces": pieces, "seconds": took, "cpu_s": cpu,
        "saves": len(saves), "save_s": sum(saves), "max_save_s": max(saves, default=0.0),
        **rss_mb(),
    }))  # fmt: skip


def embed_rates(full: Path, chunks: int, baseline: Path | None) -> float:
    """Parent: embed_into an empty store and a copy of `full`, per code version; prints them;
    returns this code's pieces/s at full size."""
    import os

    versions = [("current", None)] + ([("base", baseline)] if baseline else [])
    at_scale = 0.0
    for tag, checkout in versions:
        env = dict(os.environ)
        if checkout is not None:
            env["PYTHONPATH"] = str(checkout / "server")
        for size in ("empty", "full"):
            work = Path(tempfile.mkdtemp(prefix="cc-vembed-", dir=full.parent))
            try:
                store = work / "store"
                if size == "full":
                    shutil.copytree(full, store)
                r = child("--child", "embed", str(store), str(chunks), env=env)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            rate = r["pieces"] / r["seconds"]
            if tag == "current" and size == "full":
                at_scale = rate
            print(
                f"embed [{tag}, {size} store: {r['rows_before']:,.0f} -> {r['rows_after']:,.0f} "
                f"rows, opened in {r['open_s']:.1f} s]: {r['chunks']:.0f} chunks / "
                f"{r['pieces']:.0f} pieces in {r['seconds']:.1f} s ({r['cpu_s']:.1f} s CPU): "
                f"{rate:.1f} pieces/s; {r['saves']:.0f} saves, {r['save_s']:.1f} s in all "
                f"(longest {r['max_save_s']:.1f} s); peak RSS {r['VmHWM']:.0f} MB",
                flush=True,
            )
    return at_scale


def real_recall(sources: list[Path], questions: Path, count: int, shares: list[float]) -> None:
    """Recall@10 of the approximate index against the exact scan on real MiniLM vectors: every
    vector of the given vector stores (`vectors.<gen>.npy`) and embedding caches
    (`embed-cache.sqlite`), pooled, deduplicated, indexed with the index's own rules (the size
    threshold lowered to fit); queries are real questions (eval/realqa) embedded by the model.
    Synthetic clusters are kinder to an approximate index than real embeddings are."""
    import sqlite3

    from code_compass_server.embed import ivf, vectors
    from code_compass_server.embed.model import Embedder
    from code_compass_server.embed.vector_reader import VectorReader
    from code_compass_server.embed.vectors import VectorItem, VectorStore

    found: list[np.ndarray] = []
    for src in sources:
        if src.name == "embed-cache.sqlite":
            with tempfile.TemporaryDirectory() as tmp:  # a copy: never lock another's cache
                shutil.copy(src, Path(tmp) / "c.sqlite")
                db = sqlite3.connect(Path(tmp) / "c.sqlite")
                blobs = [b for (b,) in db.execute("SELECT vec FROM vectors")]
                db.close()
            found += [np.frombuffer(b, np.float32) for b in blobs if len(b) == DIMS * 4]
        else:
            found += list(np.load(src, allow_pickle=False))
    mat = np.unique(np.round(np.stack(found), 5), axis=0).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    texts = [json.loads(line)["question"] for line in questions.read_text().splitlines() if line]
    texts = random.Random(0).sample(texts, min(count, len(texts)))
    embedder = Embedder(threads=1)
    queries = [embedder.embed_query(t) for t in texts]
    ivf.IVF_MIN_ROWS = vectors.IVF_MIN_ROWS = min(len(mat), ivf.IVF_MIN_ROWS)  # type: ignore[misc]
    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore(Path(tmp) / "v", MODEL_ID, DIMS)
        store.add(VectorItem(f"c{i}", "p", "a.py", "python", v) for i, v in enumerate(mat))
        store.maintain_index()
        store.save()
        reader = VectorReader(Path(tmp) / "v", MODEL_ID, DIMS)
        assert reader._centroids is not None, reader.ann_note
        lists = len(reader._centroids)
        truth = [{c for c, _ in reader.search(q, 10, exact=True)} for q in queries]
        default = ivf.IVF_PROBE_SHARE
        for share in shares:
            ivf.IVF_PROBE_SHARE = share  # type: ignore[misc]
            got = [
                len({c for c, _ in reader.search(q, 10)} & t) / 10
                for q, t in zip(queries, truth, strict=True)
            ]
            mark = " (the default)" if share == default else ""
            print(
                f"real vectors: {len(mat):,}, {lists} lists, {ivf.probe_count(lists)} probed "
                f"({share:.0%}{mark}): recall@10 vs exact {np.mean(got):.3f} over "
                f"{len(queries)} questions (min {min(got):.1f})"
            )


def child(*args: str, env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True, env=env
    )
    found: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=1_256_580, help="24 copies of Django")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--recall-queries", type=int, default=30, help="also scanned exactly")
    ap.add_argument("--sample", type=int, default=3000, help="Django chunks for the shape")
    ap.add_argument("--pieces-per-s", type=float, default=0.0, help="measured embedding rate")
    ap.add_argument(
        "--store", type=Path,
        help="keep the built store here (reused when it exists: compare code versions on it)",
    )  # fmt: skip
    ap.add_argument("--modes", default="loaded,mapped", help="how the store is read")
    ap.add_argument(
        "--reindex", action="store_true", help="rebuild a kept store's approximate index first"
    )
    ap.add_argument(
        "--real", type=Path, nargs="+",
        help="only the recall on real vectors: vectors.<gen>.npy files and embed-cache.sqlite",
    )  # fmt: skip
    ap.add_argument("--questions", type=Path, default=ROOT / "eval" / "realqa" / "questions.jsonl")
    ap.add_argument("--probe-shares", default="0.02,0.04,0.06,0.1")
    ap.add_argument(
        "--embed-chunks", type=int, default=0,
        help="embed this many of Django's chunks into an empty and the full store (real model)",
    )  # fmt: skip
    ap.add_argument("--baseline", type=Path, help="a checkout whose embedding worker to compare")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.real:
        shares = [float(x) for x in args.probe_shares.split(",")]
        real_recall(args.real, args.questions, args.queries, shares)
        return
    if args.child:
        kind, directory, *rest = args.child
        if kind == "build":
            build(Path(directory), int(rest[0]), float(rest[1]))
        elif kind == "reindex":
            reindex(Path(directory))
        elif kind == "embed":
            embed_into(Path(directory), int(rest[0]))
        else:
            read(Path(directory), kind, int(rest[0]), int(rest[1]))
        return

    ratio, same, django_chunks = django_shape(args.sample)
    print(
        f"Django ({django_chunks:,} chunks; sample {args.sample:,}): {ratio:.3f} pieces per chunk; "
        f"{same:.1%} of chunks' model texts never say `django` (identical in every copy)"
    )
    keep = args.store is not None
    work = args.store or Path(tempfile.mkdtemp(prefix="cc-vscale-", dir=ROOT / "bench-data"))
    try:
        if not (work / "store.json").exists():
            t0 = time.perf_counter()
            built = child("--child", "build", str(work), str(args.chunks), str(ratio))
            print(
                f"build: {args.chunks:,} chunks, {built['rows']:,.0f} vectors (synthetic unit "
                f"vectors); add {built['add_s']:.1f} s, save {built['save_s']:.1f} s; "
                f"approximate index {built['ivf_s']:.1f} s ({built['ivf_cpu_s']:.1f} s CPU) "
                f"(child {time.perf_counter() - t0:.1f} s), peak RSS {built['VmHWM']:.0f} MB"
            )
        elif args.reindex:
            r = child("--child", "reindex", str(work))
            print(
                f"approximate index rebuilt: {r['ivf_s']:.1f} s ({r['ivf_cpu_s']:.1f} s CPU) "
                f"after a {r['open_s']:.1f} s open; peak RSS {r['VmHWM']:.0f} MB"
            )
        disk = sum(p.stat().st_size for p in work.iterdir()) / 1e6
        index = sum(p.stat().st_size for p in work.glob("*.npy") if p.name[:3] in ("ivf", "lis"))
        print(f"store {work}: disk {disk:,.0f} MB, the approximate index {index / 1e6:.1f} MB")
        for mode in filter(None, args.modes.split(",")):
            r = child("--child", mode, str(work), str(args.queries), str(args.recall_queries))
            print(
                f"{mode}: open {r['open_s']:.2f} s (+{r['anon_open_mb']:.0f} MB heap); after "
                f"{args.queries} searches RSS {r['rss_after_mb']:.0f} MB (heap "
                f"{r['anon_after_mb']:.0f}, file pages {r['file_after_mb']:.0f}), peak "
                f"{r['peak_mb']:.0f} MB; search p50/p95 {r['p50_ms']:.0f}/{r['p95_ms']:.0f} ms "
                f"({'approximate' if r['approximate'] else 'EXACT'}), with a path prefix "
                f"{r['prefix_p50_ms']:.0f}/{r['prefix_p95_ms']:.0f} ms; exact scan "
                f"{r['exact_p50_ms']:.0f}/{r['exact_p95_ms']:.0f} ms; recall@10 vs exact "
                f"{r['recall10']:.3f} ({args.recall_queries} queries)"
            )
        if args.embed_chunks:
            measured = embed_rates(work, args.embed_chunks, args.baseline)
            if not args.pieces_per_s:
                args.pieces_per_s = round(measured, 1)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    pieces = args.chunks * ratio
    unique = pieces * (same / COPIES + (1 - same))
    print(
        f"embedding (extrapolated): {pieces:,.0f} pieces; with the cache's reuse across copies "
        f"{unique:,.0f} to embed"
        + (
            f": {pieces / args.pieces_per_s / 3600:.1f} h without reuse, "
            f"{unique / args.pieces_per_s / 3600:.1f} h with it at {args.pieces_per_s:g} pieces/s"
            if args.pieces_per_s
            else ""
        )
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process's peak RSS {peak:.0f} MB (the model, for the shape)")


if __name__ == "__main__":
    main()
