"""Real parts for search tests: the built ONNX embedder and per-project vector stores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass.embed.model import Embedder
from code_compass.embed.paths import default_model_dir
from code_compass.embed.split import split_for_embedding
from code_compass.embed.vectors import VectorItem, VectorStore
from code_compass.engine import Engine
from code_compass.index.project import Project
from code_compass.records import SearchParams
from code_compass.search.candidates import Candidate
from code_compass.search.fusion import fuse
from code_compass.search.semantic import semantic_candidates


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    try:
        return Embedder(default_model_dir(), threads=1)
    except (FileNotFoundError, RuntimeError) as exc:  # pragma: no cover - set-up problem
        pytest.skip(f"embedding model not built (run scripts/build_model.py): {exc}")


def embed_project(project: Project, store: VectorStore, embedder: Embedder) -> int:
    """Every chunk of the project's catalog into `store` (what the embedding worker does)."""
    ids = [str(r[0]) for r in project.catalog._query("SELECT id FROM chunks")]
    rows = project.catalog.chunks_by_ids(ids)
    items: list[VectorItem] = []
    for r in rows.values():
        pieces = split_for_embedding(r.text, r.start_line, embedder)
        if not pieces:
            continue
        vecs = embedder.embed([p.text for p in pieces])
        items += [VectorItem(r.id, project.name, r.path, r.language, v) for v in vecs]
    return store.add(items)


@pytest.fixture
def hybrid(tmp_path: Path, embedder: Embedder) -> Callable[[Engine], dict[str, VectorStore]]:
    """Embed every project of an indexed engine and wire its semantic and fusion hooks."""

    def wire(engine: Engine) -> dict[str, VectorStore]:
        stores: dict[str, VectorStore] = {}
        for name in engine.projects():
            store = VectorStore(tmp_path / f"vectors-{name}", embedder.model_id)
            embed_project(engine.project(name), store, embedder)
            stores[name] = store

        def semantic(project: Project, params: SearchParams, limit: int) -> list[Candidate]:
            return semantic_candidates(
                project, params, limit, embedder=embedder, store=stores[project.name]
            )

        engine._semantic = semantic
        engine._fuse = fuse
        return stores

    return wire
