#!/usr/bin/env python3
"""Benchmark the team index (PostgreSQL + pgvector) against the local index, on one machine.

Part 1, a real corpus (default: Django's sdist in bench-data/, `scripts/benchdata.py`):
  - first push of the working tree (lexical; `--embed` to embed too) vs a second developer's
    push of the same tree at another path (hashes only);
  - search latency p50/p95, warm, in process: the team backend vs the local index on the same
    queries (definition names and docstring sentences of the corpus), lexical and, with
    `--embed`, hybrid.
Part 2, scale (`--scale N`, repeatable): N synthetic chunks made of real chunks' vectors plus
  noise, spread over three projects (the target holds a third), loaded with binary COPY; the
  HNSW build time and size, the server's memory, and project-filtered k-NN p50/p95.
Prints one JSON object (and a Markdown table with --markdown) — see docs/team-index.md.

    .venv/bin/python scripts/bench_team.py --workspace bench-data/django-5.2.8 --scale 100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from code_compass_server.constants import SEARCH_CANDIDATE_POOL  # noqa: E402
from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.records import SearchParams  # noqa: E402
from code_compass_server.settings import EngineSettings  # noqa: E402
from code_compass_server.team.connection import connect  # noqa: E402
from code_compass_server.team.embedded import EmbeddedServer  # noqa: E402
from code_compass_server.team.engine_glue import TeamOptions  # noqa: E402
from code_compass_server.team.remote import nearest_rows  # noqa: E402

DIMS = 384


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def queries_of(root: Path, n: int, seed: int = 7) -> list[str]:
    """Definition names and first docstring lines of the corpus: what developers type."""
    rng = random.Random(seed)
    names: list[str] = []
    sentences: list[str] = []
    files = sorted(root.rglob("*.py"))
    rng.shuffle(files)
    for f in files[:400]:
        text = f.read_text(errors="replace")
        names += re.findall(r"^\s*(?:def|class) ([A-Za-z_]\w{4,})", text, re.M)
        sentences += [s.strip() for s in re.findall(r'"""\s*([A-Z][^"\n]{25,120}\.)', text)]
    rng.shuffle(names)
    rng.shuffle(sentences)
    return names[: n // 2] + sentences[: n - n // 2]


def params(q: str, mode: str, project: str) -> SearchParams:
    return SearchParams(q, 10, None, None, None, project=project, mode=mode)


def time_search(engine: Engine, project: str, qs: list[str], mode: str) -> dict[str, float]:
    for q in qs[:10]:  # warm caches, connections, the model
        engine.search(params(q, mode, project))
    took = []
    for q in qs:
        t0 = time.perf_counter()
        engine.search(params(q, mode, project))
        took.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(pct(took, 50), 1), "p95_ms": round(pct(took, 95), 1), "n": len(took)}


def push_cli(ws: Path, url: str, home: Path, project: str, embed: bool) -> dict[str, object]:
    env = {**os.environ, "CODE_COMPASS_HOME": str(home)}
    args = [sys.executable, "-m", "code_compass_server", "index", "--workspace", str(ws),
            "--database", url, "--project", project, "--json",
            *([] if embed else ["--no-embed"])]  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    summary = json.loads(out.stdout)["projects"][0]
    summary["wall_s"] = round(wall, 2)
    return dict(summary)


def part_real(url: str, ws: Path, work: Path, n_queries: int, embed: bool) -> dict[str, object]:
    out: dict[str, object] = {"corpus": ws.name}
    first = push_cli(ws, url, work / "home1", "real", embed)
    twin = work / "second-developer" / ws.name
    shutil.copytree(ws, twin, copy_function=os.link)  # the same bytes at another path
    second = push_cli(twin, url, work / "home2", "real", embed)
    out["first_push"] = first
    out["second_push"] = second
    print(json.dumps(out), file=sys.stderr, flush=True)  # kept if a later part fails
    out["second_vs_first"] = round(float(second["wall_s"]) / float(first["wall_s"]), 4)
    qs = queries_of(ws, n_queries)
    modes = ["lexical", "hybrid"] if embed else ["lexical"]
    local = Engine.open(work / "local-home", EngineSettings(embeddings=embed))
    lname = local.add_project(ws)
    t0 = time.perf_counter()
    local.index(embed=embed, background_embed=False)
    out["local_index_s"] = round(time.perf_counter() - t0, 1)
    team = Engine.open(
        work / "home1", EngineSettings(embeddings=embed), team=TeamOptions(url, {ws: "real"})
    )
    tname = team.add_project(ws)
    team.start_watching(tname)  # as the language and MCP servers do: edits reported, not walked
    for mode in modes:
        out[f"search_{mode}"] = {
            "team": time_search(team, tname, qs, mode),
            "local": time_search(local, lname, qs, mode),
        }
    local.close()
    team.close()
    print(json.dumps(out), file=sys.stderr, flush=True)
    return out


def part_scale(url: str, n_chunks: int, seed_vectors: np.ndarray) -> dict[str, object]:
    """n_chunks synthetic chunks (one piece each) over three projects; HNSW built after load."""
    rng = np.random.default_rng(11)
    names = [f"scale{n_chunks}_{k}" for k in range(3)]
    with connect(url, autocommit=True, statement_timeout_ms=0) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        ids = []
        for name in names:
            row = conn.execute(
                "INSERT INTO cc_projects(name) VALUES (%s) ON CONFLICT (name) DO UPDATE SET "
                "name = EXCLUDED.name RETURNING id",
                (name,),
            ).fetchone()
            assert row is not None
            ids.append(int(row[0]))
        conn.execute("DROP INDEX IF EXISTS cc_vectors_hnsw")
        t0 = time.perf_counter()
        per = n_chunks // 3
        rows = 0
        for pid in ids:
            with conn.cursor() as cur:
                with cur.copy(
                    "COPY cc_vectors(project_id, text_hash, embedding) FROM STDIN (FORMAT BINARY)"
                ) as cp:
                    cp.set_types(["int4", "text", "vector"])
                    for lo in range(0, per, 10_000):  # noise made a block at a time
                        n = min(10_000, per - lo)
                        base = seed_vectors[np.arange(lo, lo + n) % len(seed_vectors)]
                        block = base + rng.normal(0, 0.02, (n, DIMS)).astype(np.float32)
                        block /= np.linalg.norm(block, axis=1, keepdims=True)
                        for j in range(n):
                            cp.write_row((pid, f"s{pid}-{lo + j}", block[j]))
                with cur.copy(
                    "COPY cc_pieces(project_id, blob, ordinal, piece, text_hash) FROM STDIN"
                ) as cp:
                    for i in range(per):
                        cp.write_row((pid, f"b{i // 20}", i % 20, 0, f"s{pid}-{i}"))
                with cur.copy(
                    "COPY cc_tree(project_id, path, blob, language, n_chunks, path_len) FROM STDIN"
                ) as cp:
                    for b in range(per // 20 + 1):
                        cp.write_row((pid, f"pkg{b % 97}/mod{b}.py", f"b{b}", "python", 20, 3))
            rows += per
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.execute(
            "CREATE INDEX cc_vectors_hnsw ON cc_vectors USING hnsw (embedding vector_cosine_ops)"
        )
        build_s = time.perf_counter() - t0
        size = conn.execute("SELECT pg_relation_size('cc_vectors_hnsw')").fetchone()
        heap = conn.execute("SELECT pg_total_relation_size('cc_vectors')").fetchone()
        conn.execute("ANALYZE cc_vectors")
        conn.execute("ANALYZE cc_pieces")
        conn.execute("ANALYZE cc_tree")
    took = []
    with connect(url) as conn:
        target = ids[0]
        for i in range(200):
            q = seed_vectors[(i * 37) % len(seed_vectors)]
            t1 = time.perf_counter()
            got = nearest_rows(conn, target, q, SEARCH_CANDIDATE_POOL)  # what search asks
            took.append((time.perf_counter() - t1) * 1000)
            assert got, "a project-filtered query found nothing"
    return {
        "chunks": rows,
        "projects": 3,
        "copy_load_s": round(load_s, 1),
        "ingest_rows_per_s": round(rows / load_s),
        "hnsw_build_s": round(build_s, 1),
        "hnsw_mb": round(int(size[0]) / 1e6, 1) if size else None,
        "vectors_table_mb": round(int(heap[0]) / 1e6, 1) if heap else None,
        "knn_p50_ms": round(pct(took, 50), 1),
        "knn_p95_ms": round(pct(took, 95), 1),
    }


def seed_vectors(url: str, n: int) -> np.ndarray:
    """Real vectors from the real corpus if it was embedded, else random unit vectors."""
    with connect(url) as conn:
        rows = conn.execute("SELECT embedding FROM cc_vectors LIMIT %s", (n,)).fetchall()
    if rows:
        return np.stack([np.asarray(r[0], dtype=np.float32) for r in rows])
    v = np.random.default_rng(3).normal(size=(n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--workspace", type=Path, default=REPO / "bench-data" / "django-5.2.8")
    ap.add_argument("--embed", action="store_true", help="embed the real corpus too (slow)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--scale", type=int, action="append", default=[])
    ap.add_argument("--skip-real", action="store_true")
    ap.add_argument("--dir", type=Path, help="server folder (default: a fresh one in /tmp)")
    ap.add_argument("--keep", action="store_true", help="leave the server's folder (and stop it)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cc-bench-team-"))
    server = EmbeddedServer(args.dir or work / "pg")
    result: dict[str, object] = {}
    try:
        info = server.start()
        with connect(info.url) as conn:
            from code_compass_server.team.schema import migrate

            migrate(conn)
            conn.commit()
        if not args.skip_real:
            result["real"] = part_real(info.url, args.workspace, work, args.queries, args.embed)
        seeds = seed_vectors(info.url, 5000)
        result["scale"] = []
        for n in args.scale:
            result["scale"].append(part_scale(info.url, n, seeds))  # type: ignore[attr-defined]
            print(json.dumps(result["scale"][-1]), file=sys.stderr, flush=True)  # type: ignore[index]
        result["server_rss_mb"] = server_rss_mb(server)
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


def server_rss_mb(server: EmbeddedServer) -> float:
    import psutil

    pid = int((server.pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    root = psutil.Process(pid)
    # Unique memory of the postmaster and its children (RSS would count shared buffers again
    # for every backend).
    total = sum(p.memory_full_info().uss for p in [root, *root.children(recursive=True)])
    return round(total / 1e6, 1)


if __name__ == "__main__":
    sys.exit(main())
