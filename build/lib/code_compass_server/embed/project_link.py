"""Embeddings for one project: its vector store beside the catalog and its background worker.

The catalog's `embedded` flag and the vector store are reconciled when this process becomes
the project's writer (at open if it already is), so a crash between the two (vectors saved, flag
not set, or the reverse) costs at most a re-embedding from the cache, never a wrong state. A
process that only reads never saves the store nor changes a flag.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from code_compass_server.embed.cache import EmbeddingCache
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.model_id import store_id
from code_compass_server.embed.vectors import VectorStore
from code_compass_server.embed.worker import EmbeddingWorker, EmbedProgress, PendingChunk
from code_compass_server.index.catalog import ChunkRow
from code_compass_server.index.project import Project

log = logging.getLogger(__name__)


def to_pending(project: str, row: ChunkRow) -> PendingChunk:
    """A catalog chunk as the embedding worker takes it."""
    return PendingChunk(
        row.id, project, row.path, row.language, row.text, row.start_line, row.symbol, row.context
    )


class ProjectEmbeddings:
    def __init__(self, project: Project, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.project = project
        self.store = VectorStore(
            project.directory / "vectors",
            store_id(embedder),
            writable=lambda: not project.read_only,
        )
        self._reconciled = False
        # Embedded but not yet in a committed save: flagged in the catalog only once the
        # store's save is durable, so `embedded` never counts a vector a full disk lost (#32).
        self._unsaved: set[str] = set()
        self._unsaved_lock = threading.Lock()
        self.store.set_commit_hooks(self._take_unsaved, self._flag_saved, self._keep_unsaved)
        if not project.read_only:
            self._reconcile()
        project.on_writer.append(self._became_writer)
        self.worker = EmbeddingWorker(
            self._fetch,
            embedder,
            self.store,
            cache,
            pending=self._pending,
            on_done=self._done,
        )

    def _became_writer(self) -> None:
        """Another process may have written the store since it was read: read it again, then
        reconcile it with the catalog (which may have been rebuilt meanwhile)."""
        self.store.reload()
        self._reconcile()

    def _reconcile(self) -> None:
        """Writer only. Vectors the flags claim but the store lacks are redone; vectors of
        chunks the catalog no longer has are dropped; vectors present for unflagged chunks are
        flagged (a kill between the store's save and the flags' commit)."""
        catalog = self.project.catalog
        if self.store.load_error:
            self.project.rebuilt = _joined(
                self.project.rebuilt, f"{self.store.load_error}; re-embedding"
            )
        rows = catalog._query("SELECT id, embedded FROM chunks")
        flagged = {str(r[0]) for r in rows if r[1]}
        known = {str(r[0]) for r in rows}
        stored = self.store.chunk_ids()
        lost = flagged - stored
        orphans = stored - known
        unflagged = (stored & known) - flagged
        if lost or unflagged:
            with catalog.transaction() as c:
                c.executemany("UPDATE chunks SET embedded = 0 WHERE id = ?", [(i,) for i in lost])
                c.executemany(
                    "UPDATE chunks SET embedded = 1 WHERE id = ?", [(i,) for i in unflagged]
                )
        if orphans:
            self.store.delete_chunk_ids(orphans)
        self.store.flush()  # a store found unreadable is replaced now, not at the next save
        if lost or orphans or unflagged:
            self.project.rebuilt = _joined(
                self.project.rebuilt,
                f"vectors reconciled with the catalog: {len(lost)} to embed again,"
                f" {len(orphans)} orphans dropped, {len(unflagged)} flagged",
            )
            log.info(
                "%s: %d vectors to redo, %d orphans dropped, %d flags set",
                self.project.name,
                len(lost),
                len(orphans),
                len(unflagged),
            )
        self._reconciled = True

    def _fetch(self, n: int) -> Sequence[PendingChunk]:
        if self.project.read_only or not self._reconciled:
            return []
        with self._unsaved_lock:
            unsaved = set(self._unsaved)
        rows = self.project.catalog.pending_embeddings(n + len(unsaved))
        return [to_pending(self.project.name, r) for r in rows if r.id not in unsaved][:n]

    def _pending(self) -> int:
        rows = self.project.catalog._query("SELECT COUNT(*) FROM chunks WHERE embedded = 0")
        with self._unsaved_lock:
            return max(0, int(rows[0][0]) - len(self._unsaved))  # type: ignore[call-overload]

    def _done(self, chunk_ids: list[str]) -> None:
        with self._unsaved_lock:
            self._unsaved.update(chunk_ids)

    def unsaved_count(self) -> int:
        """Chunks embedded whose vectors wait for the store's next save."""
        with self._unsaved_lock:
            return len(self._unsaved)

    def _take_unsaved(self) -> list[str]:
        with self._unsaved_lock:
            return list(self._unsaved)

    def _flag_saved(self, chunk_ids: list[str]) -> None:
        if chunk_ids:
            self.project.catalog.mark_embedded(chunk_ids)
            with self._unsaved_lock:
                self._unsaved.difference_update(chunk_ids)

    def _keep_unsaved(self, _chunk_ids: list[str]) -> None:
        """The save failed: they stay unflagged, and stay out of the fetch until one commits."""

    def paths_replaced(self, paths: list[str]) -> None:
        """Old chunks of these paths are gone from the catalog: drop their vectors."""
        self.store.delete_paths(self.project.name, paths)
        self.worker.wake()

    def progress(self) -> EmbedProgress:
        return self.worker.progress()

    def close(self) -> None:
        self.worker.stop()
        self.store.close()


def _joined(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second
