"""The semantic side of the 1M-chunk table: the vector store at the scale corpus's size.

    .venv/bin/python scripts/bench_vector_scale.py [--chunks 1256580] [--queries 100]
        [--pieces-per-s 25]

Embedding ~1.3M chunks is out of reach on 2 cores (hours), so what is measured and what is
extrapolated are kept apart:
- measured on Django (its chunks by the project's chunker, model texts by the project's rule):
  pieces per chunk, and the share of chunks whose embedding texts contain no `django` — those
  texts are identical in every copy of scripts/scale_corpus.py (it renames only `django`), so
  the embedding cache legitimately embeds them once for all copies;
- measured at full size, with synthetic unit vectors in place of embeddings (an exact cosine
  scan costs the same whatever the values): the store's build (add + save), its disk size, and
  in separate child processes (each process's own peak RSS) the two ways it is read — loaded
  (`VectorStore`, what the language server holds) and memory-mapped (`VectorReader`, what a
  query process reads) — open time, resident memory after open, and search p50/p95 (top 20,
  one project of the corpus's copies, and with a path prefix too);
- extrapolated: the time to embed, from --pieces-per-s (a rate measured by bench_embed.py on
  this machine) and the pieces left after the cache's reuse.
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

COPIES = 24  # scripts/scale_corpus.py's default: ~1.26M chunks
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
    rows = 0
    extra = pieces_per_chunk - 1.0
    chunk = 0
    while chunk < chunks:
        n = min(BATCH, chunks - chunk)
        items: list[VectorItem] = []
        counts = 1 + (rng.random(n) < extra).astype(int)  # pieces of each chunk
        vecs = rng.standard_normal((int(counts.sum()), DIMS), dtype=np.float32)
        k = 0
        for i in range(n):
            cid = chunk + i
            copy = cid * COPIES // chunks
            path = f"svc{copy:02d}/django{copy}/mod{cid // 12}.py"
            for _ in range(counts[i]):
                items.append(VectorItem(f"c{cid}", f"svc{copy:02d}", path, "python", vecs[k]))
                k += 1
        rows += store.add(items)
        chunk += n
    t_add = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.save()
    t_save = time.perf_counter() - t0
    print(json.dumps({"rows": rows, "add_s": t_add, "save_s": t_save, **rss_mb()}))


def read(directory: Path, mode: str, queries: int) -> None:
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
    plain: list[float] = []
    prefixed: list[float] = []
    for i in range(queries):
        q = rng.standard_normal(DIMS).astype(np.float32)
        project = f"svc{i % COPIES:02d}"
        t0 = time.perf_counter()
        hits = store.search(q, 20, project=project)
        plain.append(time.perf_counter() - t0)
        assert len(hits) == 20
        t0 = time.perf_counter()
        store.search(q, 20, project=project, path_prefix=f"{project}/django{i % COPIES}/mod1")
        prefixed.append(time.perf_counter() - t0)
    after = rss_mb()
    print(json.dumps({
        "open_s": t_open,
        "anon_open_mb": opened["RssAnon"] - before["RssAnon"],
        "rss_after_mb": after["VmRSS"], "anon_after_mb": after["RssAnon"],
        "file_after_mb": after["RssFile"], "peak_mb": after["VmHWM"],
        "p50_ms": 1000 * pct(plain, 0.5), "p95_ms": 1000 * pct(plain, 0.95),
        "prefix_p50_ms": 1000 * pct(prefixed, 0.5), "prefix_p95_ms": 1000 * pct(prefixed, 0.95),
    }))  # fmt: skip


def child(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True
    )
    found: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=1_256_580, help="24 copies of Django")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--sample", type=int, default=3000, help="Django chunks for the shape")
    ap.add_argument("--pieces-per-s", type=float, default=0.0, help="measured embedding rate")
    ap.add_argument(
        "--store", type=Path,
        help="keep the built store here (reused when it exists: compare code versions on it)",
    )  # fmt: skip
    ap.add_argument("--modes", default="loaded,mapped", help="how the store is read")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, directory, *rest = args.child
        if kind == "build":
            build(Path(directory), int(rest[0]), float(rest[1]))
        else:
            read(Path(directory), kind, int(rest[0]))
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
                f"vectors); add {built['add_s']:.1f} s, save {built['save_s']:.1f} s "
                f"(child {time.perf_counter() - t0:.1f} s), peak RSS {built['VmHWM']:.0f} MB"
            )
        disk = sum(p.stat().st_size for p in work.iterdir()) / 1e6
        print(f"store {work}: disk {disk:,.0f} MB")
        for mode in args.modes.split(","):
            r = child("--child", mode, str(work), str(args.queries))
            print(
                f"{mode}: open {r['open_s']:.2f} s (+{r['anon_open_mb']:.0f} MB heap); after "
                f"{args.queries} searches RSS {r['rss_after_mb']:.0f} MB (heap "
                f"{r['anon_after_mb']:.0f}, file pages {r['file_after_mb']:.0f}), peak "
                f"{r['peak_mb']:.0f} MB; search p50/p95 {r['p50_ms']:.0f}/{r['p95_ms']:.0f} ms, "
                f"with a path prefix {r['prefix_p50_ms']:.0f}/{r['prefix_p95_ms']:.0f} ms"
            )
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
