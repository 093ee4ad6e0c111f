"""Engine set-up for the search evaluation and benchmark: index corpora, embed, wire hybrid search.

When the engine wires embeddings itself (Engine._semantic set after `index(embed=True)`), that
path is used. Until then the harness builds one vector store per project from the catalog with
the project's Embedder (embed/model.py) and, when present, the embed package's splitter and
VectorStore; otherwise a minimal equivalent below (<=256-token pieces, best piece per chunk,
vectors cached by content hash in bench-data so later runs embed nothing).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from code_compass.constants import EMBED_MAX_PIECES_PER_CHUNK, EMBED_MAX_TOKENS
from code_compass.engine import Engine
from code_compass.index.catalog import ChunkRow
from code_compass.index.project import Project
from code_compass.records import text_hash
from code_compass.search.fusion import fuse
from code_compass.search.semantic import semantic_candidates


class PieceVectors:
    """Exact cosine over chunk pieces (fallback for embed.vectors.VectorStore)."""

    def __init__(self, embedder: Any, cache_file: Path) -> None:
        self.embedder = embedder
        self.cache_file = cache_file
        self.cache: dict[str, np.ndarray] = {}
        if cache_file.exists():
            data = np.load(cache_file)
            self.cache = dict(zip(data["keys"].tolist(), data["vecs"], strict=True))
        self.ids: list[str] = []
        self.paths: list[str] = []
        self.langs: list[str] = []
        self.matrix = np.zeros((0, embedder.dims), dtype=np.float32)

    def pieces(self, row: ChunkRow) -> list[str]:
        lines = row.text.split("\n")
        counts = self.embedder.line_token_counts(row.text)
        out: list[str] = []
        cur: list[str] = []
        used = 0
        budget = EMBED_MAX_TOKENS - 2
        for line, n in zip(lines, counts, strict=True):
            if cur and used + n > budget:
                out.append("\n".join(cur))
                cur, used = [], 0
            cur.append(line)
            used += n
        if cur:
            out.append("\n".join(cur))
        return [p for p in out if p.strip()][:EMBED_MAX_PIECES_PER_CHUNK] or [row.text]

    def build(self, rows: list[ChunkRow], log: Callable[[str], None]) -> None:
        owners: list[int] = []
        keys: list[str] = []
        texts: dict[str, str] = {}
        for i, row in enumerate(rows):
            for p in self.pieces(row):
                k = text_hash(p)
                owners.append(i)
                keys.append(k)
                if k not in self.cache:
                    texts[k] = p
        todo = list(texts)
        t0 = time.perf_counter()
        for s in range(0, len(todo), 256):
            part = todo[s : s + 256]
            vecs = self.embedder.embed([texts[k] for k in part])
            self.cache.update(zip(part, vecs, strict=True))
            rate = (s + len(part)) / max(1e-9, time.perf_counter() - t0)
            log(f"  embedded {s + len(part)}/{len(todo)} pieces ({rate:.0f}/s)")
            if (s // 256) % 8 == 7:
                self.save()
        if todo:
            self.save()
        self.ids = [rows[o].id for o in owners]
        self.paths = [rows[o].path for o in owners]
        self.langs = [rows[o].language for o in owners]
        self.matrix = np.stack([self.cache[k] for k in keys]) if keys else self.matrix

    def save(self) -> None:
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.cache), dtype=object)
        vecs = np.stack(list(self.cache.values())).astype(np.float32)
        tmp = self.cache_file.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys.astype(str), vecs=vecs)
        tmp.replace(self.cache_file)

    def search(
        self,
        query_vec: np.ndarray,
        k: int,
        project: str | None = None,
        path_prefix: str | None = None,
        language: str | None = None,
    ) -> list[tuple[str, float]]:
        sims = self.matrix @ query_vec.astype(np.float32)
        if path_prefix or language:
            mask = np.array(
                [
                    (not path_prefix or p.startswith(path_prefix))
                    and (not language or g == language)
                    for p, g in zip(self.paths, self.langs, strict=True)
                ]
            )
            sims = np.where(mask, sims, -2.0)
        order = np.argsort(-sims)
        out: list[tuple[str, float]] = []
        seen: set[str] = set()
        for i in order:
            if sims[i] <= -2.0 or len(out) >= k:
                break
            cid = self.ids[i]
            if cid not in seen:  # best piece per chunk
                seen.add(cid)
                out.append((cid, float(sims[i])))
        return out


def all_rows(project: Project) -> list[ChunkRow]:
    ids = [str(r[0]) for r in project.catalog._query("SELECT id FROM chunks ORDER BY id")]
    rows = project.catalog.chunks_by_ids(ids)
    return [rows[i] for i in ids]


def open_engine(
    storage: Path,
    corpora: dict[str, Path],
    cache_dir: Path,
    *,
    embed: bool = True,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> tuple[Engine, dict[str, Any]]:
    """An engine with one project per corpus (name = corpus), indexed and (optionally) embedded.

    Returns the engine and the per-project stores (empty when the engine embeds by itself).
    """
    engine = Engine.open(storage)
    for name, tree in corpora.items():
        engine.add_project(tree, name=name)
        t0 = time.perf_counter()
        engine.index(name, embed=False)
        log(f"{name}: lexical index ready in {time.perf_counter() - t0:.1f}s")
    stores: dict[str, Any] = {}
    if not embed:
        return engine, stores
    if getattr(engine, "_semantic", None) is not None:  # the engine's own embedding path
        for name in corpora:
            engine.index(name, embed=True)
        return engine, stores
    from code_compass.embed.model import Embedder

    embedder = Embedder()
    for name in corpora:
        store = PieceVectors(embedder, cache_dir / f"vectors-{name}.npz")
        t0 = time.perf_counter()
        store.build(all_rows(engine.project(name)), log)
        log(f"{name}: vectors ready in {time.perf_counter() - t0:.1f}s")
        stores[name] = store

    def semantic(project: Project, params: Any, limit: int) -> list[Any]:
        return semantic_candidates(
            project, params, limit, embedder=embedder, store=stores[project.name]
        )

    engine._semantic = semantic
    engine._fuse = functools.partial(fuse)
    stores["_embedder"] = embedder
    return engine, stores
