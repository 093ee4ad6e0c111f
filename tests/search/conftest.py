"""Real parts for search tests: the built ONNX embedder and embedding into a vector store."""

from __future__ import annotations

import pytest

from code_compass_server.embed.model import Embedder
from code_compass_server.embed.paths import default_model_dir
from code_compass_server.embed.project_link import to_pending
from code_compass_server.embed.vectors import VectorStore
from code_compass_server.embed.worker import EmbeddingWorker
from code_compass_server.index.project import Project


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    try:
        return Embedder(default_model_dir(), threads=1)
    except (FileNotFoundError, RuntimeError) as exc:  # pragma: no cover - set-up problem
        pytest.skip(f"embedding model not built (run scripts/build_model.py): {exc}")


def embed_project(project: Project, store: VectorStore, embedder: Embedder) -> int:
    """Every chunk of the project's catalog into `store`, through the embedding worker."""
    rows = project.catalog.chunks_by_ids(
        str(r[0]) for r in project.catalog._query("SELECT id FROM chunks")
    )
    worker = EmbeddingWorker(lambda _n: [], embedder, store)
    return worker.process([to_pending(project.name, r) for r in rows.values()])
