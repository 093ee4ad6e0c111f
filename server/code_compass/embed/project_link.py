"""Embeddings for one project: its vector store beside the catalog and its background worker.

The catalog's `embedded` flag and the vector store are reconciled on open, so a crash between
the two (vectors saved, flag not set, or the reverse) costs at most a re-embedding from the
cache, never a wrong state.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from code_compass.constants import EMBED_TEXT_FORMAT
from code_compass.embed.cache import EmbeddingCache
from code_compass.embed.model import Embedder
from code_compass.embed.vectors import VectorStore
from code_compass.embed.worker import EmbeddingWorker, EmbedProgress, PendingChunk
from code_compass.index.catalog import ChunkRow
from code_compass.index.project import Project

log = logging.getLogger(__name__)


def store_id(embedder: Embedder) -> str:
    """Vectors of another model or text format are not comparable: a store whose id differs
    starts empty (and is re-filled from the cache or the model)."""
    return f"{embedder.model_id}/text{EMBED_TEXT_FORMAT}"


def to_pending(project: str, row: ChunkRow) -> PendingChunk:
    """A catalog chunk as the embedding worker takes it."""
    return PendingChunk(
        row.id, project, row.path, row.language, row.text, row.start_line, row.symbol
    )


class ProjectEmbeddings:
    def __init__(self, project: Project, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.project = project
        self.store = VectorStore(project.directory / "vectors", store_id(embedder))
        self._reconcile()
        self.worker = EmbeddingWorker(
            self._fetch,
            embedder,
            self.store,
            cache,
            pending=self._pending,
            on_done=self._done,
        )

    def _reconcile(self) -> None:
        catalog = self.project.catalog
        flagged = {str(r[0]) for r in catalog._query("SELECT id FROM chunks WHERE embedded = 1")}
        known = {str(r[0]) for r in catalog._query("SELECT id FROM chunks")}
        stored = self.store.chunk_ids()
        lost = flagged - stored
        orphans = stored - known
        if lost and not self.project.read_only:
            with catalog.transaction() as c:
                c.executemany("UPDATE chunks SET embedded = 0 WHERE id = ?", [(i,) for i in lost])
        if orphans:
            self.store.delete_chunk_ids(orphans)
            self.store.flush()
        if lost or orphans:
            log.info(
                "%s: %d vectors to redo, %d orphans dropped",
                self.project.name,
                len(lost),
                len(orphans),
            )

    def _fetch(self, n: int) -> Sequence[PendingChunk]:
        if self.project.read_only:
            return []
        return [
            to_pending(self.project.name, r) for r in self.project.catalog.pending_embeddings(n)
        ]

    def _pending(self) -> int:
        rows = self.project.catalog._query("SELECT COUNT(*) FROM chunks WHERE embedded = 0")
        return int(rows[0][0])  # type: ignore[call-overload]

    def _done(self, chunk_ids: list[str]) -> None:
        self.project.catalog.mark_embedded(chunk_ids)

    def paths_replaced(self, paths: list[str]) -> None:
        """Old chunks of these paths are gone from the catalog: drop their vectors."""
        self.store.delete_paths(self.project.name, paths)
        self.worker.wake()

    def progress(self) -> EmbedProgress:
        return self.worker.progress()

    def close(self) -> None:
        self.worker.stop()
        self.store.close()
