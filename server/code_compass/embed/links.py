"""The engine's embeddings: one model and cache, and a link (vector store + worker) per project.

The model loads with the first project when embeddings are on; if it can't (not built), search
stays lexical and `error` says why. Nothing here ever blocks an index write: the scheduler only
wakes the workers and asks how far they are.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from code_compass.index.project import Project
from code_compass.index.summary import IndexProgress
from code_compass.records import SearchParams
from code_compass.search.candidates import Candidate
from code_compass.search.searcher import SemanticFn
from code_compass.search.semantic import semantic_candidates

if TYPE_CHECKING:  # the model's imports (ONNX Runtime) load only when embeddings are on
    from code_compass.embed.cache import EmbeddingCache
    from code_compass.embed.model import Embedder
    from code_compass.embed.project_link import ProjectEmbeddings

log = logging.getLogger(__name__)

WAIT_POLL_S = 0.5  # a synchronous wait for vectors reports progress this often
# A synchronous wait gives up (EmbeddingFailed) after this many consecutive failed rounds or
# restarts of a dead worker, or when the worker shows no sign of life for WAIT_STALL_S.
WAIT_MAX_FAILURES = 3
WAIT_STALL_S = 600.0
RESTART_S = 1.0  # a dead worker is restarted at most this often (doubling per restart)
RESTART_MAX_S = 120.0


class EmbeddingFailed(RuntimeError):
    """Waiting for vectors cannot end well: the embedding worker keeps failing or died."""


class EmbeddingLinks:
    def __init__(self, storage: Path, enabled: bool) -> None:
        self._storage = storage
        self.enabled = enabled
        self.error = ""  # why embeddings are off although enabled, if they are
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._links: dict[str, ProjectEmbeddings] = {}
        self._restarts: dict[str, tuple[int, float]] = {}  # project -> (restarts, next allowed)

    @property
    def model_id(self) -> str | None:
        return self._embedder.model_id if self._embedder is not None else None

    @property
    def cache_recreated(self) -> str:
        """Why the shared embedding cache was found damaged and replaced ("" if it was not)."""
        return self._cache.recreated if self._cache is not None else ""

    def link(self, project: Project) -> ProjectEmbeddings | None:
        """Open the project's vector store and worker (not started); None when off."""
        if not self.enabled:
            return None
        from code_compass.embed.project_link import ProjectEmbeddings

        with self._lock:
            if not self._load_model():
                return None
            embedder, cache = self._embedder, self._cache
        assert embedder is not None and cache is not None
        if cache.recreated and cache.recreated not in project.rebuilt:  # say it where it shows
            project.rebuilt = (
                f"{project.rebuilt}; {cache.recreated}" if project.rebuilt else cache.recreated
            )
        link = ProjectEmbeddings(project, embedder, cache)  # opens and reconciles its store
        with self._lock:
            self._links[project.name] = link
        return link

    def _load_model(self) -> bool:
        if self._embedder is not None:
            return True
        if self.error:
            return False
        from code_compass.embed.cache import EmbeddingCache
        from code_compass.embed.model import Embedder

        try:
            self._embedder = Embedder()
        except Exception as exc:  # model not built: lexical search still works
            self.error = str(exc)
            log.warning("embeddings off: %s", exc)
            return False
        self._cache = EmbeddingCache(
            self._storage / "embed-cache.sqlite", self._embedder.model_id, unit_vectors=True
        )
        return True

    def get(self, project: str) -> ProjectEmbeddings | None:
        with self._lock:
            return self._links.get(project)

    def unlink(self, project: str) -> None:
        with self._lock:
            link = self._links.pop(project, None)
        if link is not None:
            link.close()

    # --- search's semantic channel ---
    def semantic_channel(self) -> SemanticFn | None:
        """Cosine candidates from a project's vector store; None until the model is loaded."""
        embedder = self._embedder
        if embedder is None or not self.enabled:  # off: the next search is lexical only
            return None

        def semantic(project: Project, params: SearchParams, limit: int) -> list[Candidate]:
            link = self.get(project.name)
            if link is None:
                return []
            return semantic_candidates(project, params, limit, embedder=embedder, store=link.store)

        return semantic

    # --- the scheduler's hooks (never blocking) ---
    def wake(self, project: str) -> None:
        link = self.get(project)
        if link is not None:
            self._ensure_running(project, link)
            link.worker.wake()

    def _ensure_running(self, project: str, link: ProjectEmbeddings) -> bool:
        """Start the worker, or restart one that died, with back-off; True if it runs."""
        progress = link.worker.progress()
        if progress.running:
            return True
        count, allowed = self._restarts.get(project, (0, 0.0))
        if progress.error is not None:  # it died: restart, but not in a tight loop
            now = time.monotonic()
            if now < allowed:
                return False
            count += 1
            self._restarts[project] = (count, now + min(RESTART_MAX_S, RESTART_S * 2**count))
            log.warning(
                "%s: embedding worker died (%s); restart %d", project, progress.error, count
            )
        link.worker.start()
        return True

    def restarts(self, project: str) -> int:
        return self._restarts.get(project, (0, 0.0))[0]

    def embedding_progress(self, project: str) -> IndexProgress | None:
        link = self.get(project)
        if link is None or link.worker.wait_idle(0) or not link.worker.progress().running:
            return None
        return self._progress(link)

    @staticmethod
    def _progress(link: ProjectEmbeddings) -> IndexProgress:
        counts = link.project.catalog.counts()
        return IndexProgress(
            link.project.name,
            "embedding",
            chunks=counts["chunks"],
            embedded=counts["embedded"],
            embed_total=counts["chunks"],
        )

    # --- waiting (CLI `index`, tests, benchmarks) ---
    def wait_embedded(
        self,
        project: str,
        report: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """Block until the project's chunks are embedded, reporting progress. Raises
        EmbeddingFailed when the worker keeps failing, keeps dying or stops showing life."""
        link = self.get(project)
        if link is None:
            return
        self.wake(project)
        restarts_before = self.restarts(project)
        while not link.worker.wait_idle(WAIT_POLL_S):
            if cancel is not None and cancel.is_set():
                return
            state = link.worker.progress()
            died = not state.running
            if died:
                self._ensure_running(project, link)
            if (
                state.failures >= WAIT_MAX_FAILURES
                or self.restarts(project) - restarts_before >= WAIT_MAX_FAILURES
                or (died and state.error is None and not link.worker.progress().running)
            ):
                raise EmbeddingFailed(f"embedding of {project} failed: {state.error or 'stopped'}")
            if not died and time.monotonic() - state.last_beat > WAIT_STALL_S:
                raise EmbeddingFailed(
                    f"embedding of {project} shows no progress for {WAIT_STALL_S:.0f}s"
                )
            if report is not None:
                report(self._progress(link))

    def wait_all(self, timeout: float | None = None) -> bool:
        """True once every project's embedding worker is idle."""
        with self._lock:
            links = list(self._links.values())
        for link in links:
            self._ensure_running(link.project.name, link)
            link.worker.wake()
        return all(link.worker.wait_idle(timeout) for link in links)

    def close(self) -> None:
        with self._lock:
            names = list(self._links)
        for name in names:
            self.unlink(name)
        if self._cache is not None:
            self._cache.close()
