"""The engine's embeddings: one model and cache, and a link (vector store + worker) per project.

The model loads with the first project when embeddings are on; if it can't (not built), search
stays lexical and `error` says why. Nothing here ever blocks an index write: the scheduler only
wakes the workers and asks how far they are.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from code_compass_server.index.project import Project
from code_compass_server.index.summary import IndexProgress
from code_compass_server.records import SearchParams
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.searcher import SemanticFn
from code_compass_server.search.semantic import VectorSearch, semantic_candidates

if TYPE_CHECKING:  # the model's imports (ONNX Runtime) load only when embeddings are on
    import numpy as np

    from code_compass_server.embed.cache import EmbeddingCache
    from code_compass_server.embed.forked_model import ForkedModel
    from code_compass_server.embed.model import Embedder
    from code_compass_server.embed.project_link import ProjectEmbeddings
    from code_compass_server.embed.vector_reader import VectorReader

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


PRELOAD_JOIN_S = 60.0  # closing waits this long for a model load started in the background


class EmbeddingLinks:
    def __init__(self, storage: Path, enabled: bool, *, queries_only: bool = False) -> None:
        """`queries_only`: a one-shot query process (a CLI search or ask) reads the committed
        vectors memory-mapped and never embeds: no vector store, no worker, no cache."""
        self._storage = storage
        self.enabled = enabled
        self._queries_only = queries_only
        self._query_projects: dict[str, Project] = {}  # queries only: read when first searched
        self._readers: dict[str, VectorReader] = {}
        self._peeked_id: str | None = None
        self._preload: threading.Thread | None = None
        self._forked: ForkedModel | None = None  # the query model, loaded in a forked child
        self.error = ""  # why embeddings are off although enabled, if they are
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()  # loading the model (apart: a load takes a while)
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._links: dict[str, ProjectEmbeddings] = {}
        self._restarts: dict[str, tuple[int, float]] = {}  # project -> (restarts, next allowed)

    @property
    def model_id(self) -> str | None:
        if self._embedder is not None:
            return self._embedder.model_id
        if self._queries_only and self.enabled and not self.error:
            return self._peek_model_id()
        return None

    def _peek_model_id(self) -> str | None:
        """The model's id without loading it (a `status` needs no ONNX session)."""
        if self._peeked_id is None:
            from code_compass_server.embed.model_id import model_id_at

            try:
                self._peeked_id = model_id_at(sha_stamp=self._sha_stamp)
            except Exception as exc:  # not built: say why, as a load would
                self.error = str(exc)
        return self._peeked_id

    @property
    def _sha_stamp(self) -> Path:
        return self._storage / "model.sha256"

    def preload(self) -> None:
        """Load the model in the background now (a queries-only engine: while its caller
        brings the index up to date, most of the load runs outside the GIL)."""
        if not self.enabled or self._embedder is not None or self.error:
            return

        def load() -> None:
            self._load_model()

        thread = threading.Thread(target=load, name="model-preload", daemon=True)
        self._preload = thread
        thread.start()

    def adopt(self, forked: ForkedModel) -> None:
        """Embed queries with the model a forked child loads (a one-shot search): unless it
        is of another model or fails, then the model loads here, as without it."""
        if self._queries_only and self.enabled and self._peek_model_id() == forked.model_id:
            self._forked = forked
        else:
            forked.close()

    def has_vectors(self, project: str) -> bool:
        """The project's chunks get vectors (a writer's link, or read by a query process)."""
        with self._lock:
            return project in self._links or project in self._query_projects

    @property
    def cache_recreated(self) -> str:
        """Why the shared embedding cache was found damaged and replaced ("" if it was not)."""
        return self._cache.recreated if self._cache is not None else ""

    def link(self, project: Project) -> ProjectEmbeddings | None:
        """Open the project's vector store and worker (not started); None when off, and in a
        queries-only engine, whose vectors are read when first searched."""
        if not self.enabled:
            return None
        if self._queries_only:
            with self._lock:
                self._query_projects[project.name] = project
            return None
        from code_compass_server.embed.project_link import ProjectEmbeddings

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
        with self._model_lock:
            return self._load_model_locked()

    def _load_model_locked(self) -> bool:
        if self._embedder is not None:
            return True
        if self.error:
            return False
        from code_compass_server.embed.model import Embedder

        try:
            # One query at a time: an intra-op pool thread costs more to start than it saves.
            threads = 1 if self._queries_only else None
            optimized = self._storage / "model-optimized" if self._queries_only else None
            self._embedder = Embedder(
                threads=threads, sha_stamp=self._sha_stamp, optimized_dir=optimized
            )
        except Exception as exc:  # model not built: lexical search still works
            self.error = str(exc)
            log.warning("embeddings off: %s", exc)
            return False
        if self._queries_only:
            return True
        from code_compass_server.embed.cache import EmbeddingCache

        self._cache = EmbeddingCache(
            self._storage / "embed-cache.sqlite", self._embedder.model_id, unit_vectors=True
        )
        return True

    def query_embedder(self) -> Embedder | None:
        """The loaded model (loaded now if needed), None when embeddings are off or it is
        missing: the team index embeds queries and pushed pieces with it."""
        if not self.enabled:
            return None
        with self._lock:
            return self._embedder if self._load_model() else None

    def shared_cache(self) -> EmbeddingCache | None:
        """The vectors this user already computed (text hash -> vector), for the team index's
        push: a developer who indexed locally pushes without embedding the same texts again."""
        if not self.enabled or not self._load_model():
            return None
        return self._cache

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
            reader = self._readers.pop(project, None)
            self._query_projects.pop(project, None)
        if link is not None:
            link.close()
        if reader is not None:
            reader.close()

    # --- search's semantic channel ---
    def semantic_channel(self) -> SemanticFn | None:
        """Cosine candidates from a project's vector store; None until the model is loaded.
        A queries-only engine loads the model at its first semantic search (a lexical search
        never does); it offers the channel once the model's files are there."""
        if not self.enabled:  # off: the next search is lexical only
            return None
        if self._embedder is None and not (self._queries_only and self._peek_model_id()):
            return None

        def semantic(project: Project, params: SearchParams, limit: int) -> list[Candidate]:
            forked = self._forked
            if forked is not None:
                store = self._store(project.name, forked)  # numpy loads while the child does
                if store is None:
                    return []
                from code_compass_server.embed.forked_model import ForkedModelFailed

                try:  # waits for the child's load, then asks it for the query's vector
                    return semantic_candidates(project, params, limit, embedder=forked, store=store)
                except ForkedModelFailed as exc:
                    log.info("the forked query model failed (%s): loading the model", exc)
                    self._forked = None
            loaded = self._load_model()
            embedder = self._embedder
            store = self._store(project.name, embedder) if loaded and embedder else None
            if embedder is None or store is None:
                return []
            return semantic_candidates(project, params, limit, embedder=embedder, store=store)

        return semantic

    def _store(self, name: str, embedder: Embedder | ForkedModel) -> VectorSearch | None:
        """The writer's vector store, or (queries only) the committed vectors, mapped."""
        from code_compass_server.embed.model_id import store_id
        from code_compass_server.embed.vector_reader import VectorReader

        with self._lock:
            link = self._links.get(name)
            if link is not None:
                return link.store
            reader = self._readers.get(name)
            project = self._query_projects.get(name)
            if reader is None and project is not None:
                directory = project.directory / "vectors"
                reader = VectorReader(directory, store_id(embedder), embedder.dims)
                self._readers[name] = reader
            return reader

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
        """How far the embedding is, as the index command shows it: vectors computed, saved or
        not yet (status counts only saved ones: a vector lost to a full disk is not counted)."""
        counts = link.project.catalog.counts()
        computed = min(counts["chunks"], counts["embedded"] + link.unsaved_count())
        return IndexProgress(
            link.project.name,
            "embedding",
            chunks=counts["chunks"],
            embedded=computed,
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
        if self._forked is not None:
            self._forked.close()
        preload = self._preload
        if preload is not None:  # an exit mid-load (ONNX Runtime's threads) would abort
            preload.join(PRELOAD_JOIN_S)
        with self._lock:
            names = list(self._links)
        for name in names:
            self.unlink(name)
        if self._cache is not None:
            self._cache.close()
