"""The engine's embeddings: one model and cache, and a link (vector store + worker) per project.

The model loads with the first project when embeddings are on; if it can't (not built), search
stays lexical and `error` says why. Nothing here ever blocks an index write: the scheduler only
wakes the workers and asks how far they are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from code_compass.index.project import Project
from code_compass.index.summary import IndexProgress
from code_compass.records import SearchParams
from code_compass.search.candidates import Candidate
from code_compass.search.searcher import SemanticFn
from code_compass.search.semantic import semantic_candidates

if TYPE_CHECKING:  # the model's imports (ONNX Runtime) load only when embeddings are on
    import numpy as np

    from code_compass.embed.cache import EmbeddingCache
    from code_compass.embed.model import Embedder
    from code_compass.embed.project_link import ProjectEmbeddings

log = logging.getLogger(__name__)

WAIT_POLL_S = 0.5  # a synchronous wait for vectors reports progress this often


class EmbeddingLinks:
    def __init__(self, storage: Path, enabled: bool) -> None:
        self._storage = storage
        self.enabled = enabled
        self.error = ""  # why embeddings are off although enabled, if they are
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._links: dict[str, ProjectEmbeddings] = {}

    @property
    def model_id(self) -> str | None:
        return self._embedder.model_id if self._embedder is not None else None

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
        self._cache = EmbeddingCache(self._storage / "embed-cache.sqlite", self._embedder.model_id)
        return True

    def embed(self, texts: Sequence[str]) -> np.ndarray | None:
        """L2-normalised vectors of `texts` with the loaded model; None when embeddings are
        off or the model is missing (the answers' sentence check then stays lexical)."""
        if not self.enabled:
            return None
        with self._lock:
            if not self._load_model():
                return None
            embedder = self._embedder
        assert embedder is not None
        return embedder.embed(texts)

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
            link.worker.start()
            link.worker.wake()

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
        """Block until the project's chunks are embedded, reporting progress."""
        link = self.get(project)
        if link is None:
            return
        self.wake(project)
        while not link.worker.wait_idle(WAIT_POLL_S):
            if cancel is not None and cancel.is_set():
                return
            if report is not None:
                report(self._progress(link))

    def wait_all(self, timeout: float | None = None) -> bool:
        """True once every project's embedding worker is idle."""
        with self._lock:
            links = list(self._links.values())
        for link in links:
            link.worker.start()
            link.worker.wake()
        return all(link.worker.wait_idle(timeout) for link in links)

    def close(self) -> None:
        with self._lock:
            names = list(self._links)
        for name in names:
            self.unlink(name)
        if self._cache is not None:
            self._cache.close()
