#!/usr/bin/env python3
"""Benchmark the embedding pipeline on Django's sources.

Prints, as a table:
- throughput of the whole pipeline (split + tokenize + embed + cache + store) against the bare
  ONNX Runtime session fed the same token ids, in the same run, at each --threads count
  (default 1 and 2; target ratio >= 0.95), on the device the embedder picked (CUDA when
  onnxruntime-gpu is installed and sees a GPU, else the CPU). Rounds
  alternate bare/pipeline on the same chunks so machine load hits both alike; CPU-time ratios
  are printed too, being robust to other processes;
- time to embed all of Django (extrapolated from the sample unless --full);
- vector search latency p50/p95 at Django scale (query embedding included, and alone);
- peak RSS (target <= 600 MB).

Usage: .venv/bin/python scripts/bench_embed.py [--limit 300] [--full] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

from code_compass_server.embed.cache import EmbeddingCache
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.split import split_for_embedding
from code_compass_server.embed.vectors import VectorItem, VectorStore
from code_compass_server.embed.worker import EmbeddingWorker, PendingChunk

REPO = Path(__file__).resolve().parents[1]
DJANGO = "5.2.8"
QUERIES = [
    "how are database migrations applied",
    "validate an email address",
    "render a template with a context",
    "cache a view's response",
    "parse the HTTP accept header",
    "hash a password with a salt",
    "send an email with attachments",
    "translate a string to the active language",
]


def django_dir(cache: Path) -> Path:
    """Django's sdist, downloaded from PyPI once and extracted under bench-data/."""
    root = cache / f"django-{DJANGO}"
    if (root / "django").is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"django-{DJANGO}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"),
                *(f"django=={DJANGO}", "-d", str(cache / "dl")),
            ],
            check=True,
        )
        archive = next((cache / "dl").glob("[Dd]jango-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return root


def django_chunks(root: Path) -> list[PendingChunk]:
    """Chunks of Django's .py files, by the project's chunker."""
    from code_compass_server.index.chunk import SkipFile, parse_file

    out: list[PendingChunk] = []
    for path in sorted((root / "django").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            parsed = parse_file(rel, path.read_bytes(), "python")
        except SkipFile:
            continue
        for c in parsed.chunks:
            chunk_id = f"{rel}:{c.start_line}-{c.end_line}"
            out.append(
                PendingChunk(chunk_id, "django", rel, "python", c.text, c.start_line, c.symbol)
            )
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bare_run(embedder: Embedder, ids: list[list[int]]) -> None:
    """The raw session on pre-tokenised inputs, batch 1 (the model's fastest shape here)."""
    for x in ids:
        arr = np.asarray([x], dtype=np.int64)
        embedder.session.run(
            ["sentence_embedding"],
            {
                "input_ids": arr,
                "attention_mask": np.ones_like(arr),
                "token_type_ids": np.zeros_like(arr),
            },
        )


def throughput(
    embedder: Embedder, sample: list[PendingChunk], n_rounds: int, tmp: Path
) -> tuple[float, list[tuple[str, str]]]:
    """Bare session against the whole pipeline on the same chunks, rounds alternating so load
    hits both alike; (pipeline wall seconds, table rows)."""
    rounds = [sample[i::n_rounds] for i in range(n_rounds)]
    bare_wall = pipe_wall = bare_cpu = pipe_cpu = 0.0
    pieces_done = 0
    bare_run(embedder, embedder.encode(["warm up the session"]))
    store = VectorStore(tmp / "vectors", embedder.model_id)
    cache = EmbeddingCache(tmp / "cache.sqlite", embedder.model_id)
    worker = EmbeddingWorker(lambda n: [], embedder, store, cache, low_priority=False)
    for part in rounds:
        texts = [t for c in part for t in worker.texts_for(c)]  # header line + piece
        ids = embedder.encode(texts)  # bare gets its tokens for free
        pieces_done += len(ids)
        w, c = time.perf_counter(), time.process_time()
        bare_run(embedder, ids)
        bare_wall += time.perf_counter() - w
        bare_cpu += time.process_time() - c
        w, c = time.perf_counter(), time.process_time()
        for i in range(0, len(part), 32):
            worker.process(part[i : i + 32])
        store.flush()
        pipe_wall += time.perf_counter() - w
        pipe_cpu += time.process_time() - c
    cache.close()
    t = f"{embedder.threads} thread{'s' if embedder.threads > 1 else ''}, {embedder.device}"
    return pipe_wall, [
        (f"[{t}] sample chunks / pieces", f"{len(sample)} / {pieces_done}"),
        (f"[{t}] bare session (pieces/s, wall)", f"{pieces_done / bare_wall:.1f}"),
        (f"[{t}] pipeline (pieces/s, wall)", f"{pieces_done / pipe_wall:.1f}"),
        (f"[{t}] pipeline (chunks/s, wall)", f"{len(sample) / pipe_wall:.1f}"),
        (f"[{t}] pipeline / bare, wall (target >= 0.95)", f"{bare_wall / pipe_wall:.3f}"),
        (f"[{t}] pipeline / bare, CPU time", f"{bare_cpu / pipe_cpu:.3f}"),
        (f"[{t}] bare CPU ms per piece", f"{1000 * bare_cpu / pieces_done:.1f}"),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--limit", type=int, default=300, help="chunks in the timed sample")
    ap.add_argument("--rounds", type=int, default=3, help="alternating bare/pipeline rounds")
    ap.add_argument("--full", action="store_true", help="embed all of Django (long)")
    ap.add_argument("--threads", default="1,2", help="intra-op thread counts, one run each")
    ap.add_argument("--data", type=Path, default=REPO / "bench-data")
    args = ap.parse_args()

    t0 = time.perf_counter()
    chunks = django_chunks(django_dir(args.data))
    thread_counts = [int(t) for t in args.threads.split(",")]
    embedder = Embedder(threads=thread_counts[0])
    t_chunk = time.perf_counter() - t0
    t0 = time.perf_counter()
    all_pieces = [split_for_embedding(c.text, c.start_line, embedder) for c in chunks]
    t_split_all = time.perf_counter() - t0
    n_pieces_all = sum(len(p) for p in all_pieces)
    rows: list[tuple[str, str]] = [
        ("Django chunks / pieces (<=256 tok)", f"{len(chunks)} / {n_pieces_all}"),
        ("chunking / splitting all (s)", f"{t_chunk:.1f} / {t_split_all:.1f}"),
        ("device (CUDA when onnxruntime-gpu sees a GPU)", embedder.device),
    ]

    rng = random.Random(0)
    sample = rng.sample(chunks, min(args.limit, len(chunks)))
    with tempfile.TemporaryDirectory(prefix="cc-bench-") as tmp:
        pipe_wall = 0.0
        for threads in thread_counts:
            if threads != embedder.threads:
                embedder = Embedder(threads=threads)
            pipe_wall, part_rows = throughput(
                embedder, sample, args.rounds, Path(tmp) / f"t{threads}"
            )
            rows += part_rows
        cache = EmbeddingCache(Path(tmp) / "cache.sqlite", embedder.model_id)
        n = len(sample)
        est = len(chunks) * pipe_wall / n
        rows.append(
            (
                f"time to embed all Django at {embedder.threads} threads, extrapolated (min)",
                f"{est / 60:.1f}",
            )
        )

        if args.full:
            w = time.perf_counter()
            full_store = VectorStore(Path(tmp) / "full", embedder.model_id)
            full = EmbeddingWorker(lambda n: [], embedder, full_store, cache, low_priority=False)
            for i in range(0, len(chunks), 32):
                full.process(chunks[i : i + 32])
            full_store.flush()
            rows.append(
                (
                    "time to embed all Django, measured (min)",
                    f"{(time.perf_counter() - w) / 60:.1f}",
                )
            )

        # Search at Django scale: real vectors of the sample, the rest random unit vectors
        # (cosine top-k cost depends on the row count, not on the values).
        scale = VectorStore(Path(tmp) / "scale", embedder.model_id)
        gen = np.random.default_rng(0)
        filler = gen.normal(size=(n_pieces_all, embedder.dims)).astype(np.float32)
        scale.add(
            VectorItem(c.chunk_id, "django", c.path, "python", filler[i])
            for i, c in enumerate(chunks)
        )
        extra = n_pieces_all - len(chunks)
        scale.add(
            VectorItem(f"extra{i}", "other", f"x/{i}.py", "python", filler[len(chunks) + i])
            for i in range(extra)
        )
        w = time.perf_counter()
        scale.save()
        t_save = time.perf_counter() - w
        w = time.perf_counter()
        reopened = VectorStore(Path(tmp) / "scale", embedder.model_id)
        t_open = time.perf_counter() - w
        lat_search, lat_total, lat_filtered = [], [], []
        for i in range(200):
            q = QUERIES[i % len(QUERIES)]
            w = time.perf_counter()
            vec = embedder.embed_query(q)
            s = time.perf_counter()
            reopened.search(vec, 20, project="django")
            e = time.perf_counter()
            reopened.search(vec, 20, project="django", path_prefix="django/db/")
            f = time.perf_counter()
            lat_total.append(e - w)
            lat_search.append(e - s)
            lat_filtered.append(f - e)

        def pct(xs: list[float]) -> str:
            return f"{1000 * np.percentile(xs, 50):.2f} / {1000 * np.percentile(xs, 95):.2f}"

        rows += [
            ("store rows at Django scale", str(reopened.row_count())),
            ("store save / reopen (ms)", f"{1000 * t_save:.0f} / {1000 * t_open:.0f}"),
            ("search p50/p95 ms (cosine top-20)", pct(lat_search)),
            ("search p50/p95 ms, path-prefix filter", pct(lat_filtered)),
            ("query embed + search p50/p95 ms", pct(lat_total)),
            ("peak RSS (MB, target <= 600)", f"{peak_rss_mb():.0f}"),
        ]
        cache.close()

    width = max(len(k) for k, _ in rows)
    print(f"{'measure'.ljust(width)} | value")
    print(f"{'-' * width}-|-{'-' * 16}")
    for k, v in rows:
        print(f"{k.ljust(width)} | {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
