"""The engine: one facade over typed services. Knows nothing of LSP.

Front doors (CLI, language server, tests) hold one Engine. Its services each have one job:
`registry` (projects, paths, evidence reading), `scheduler` (every index write), `search_service`
(every index read), `embeddings` (model, vector stores, workers), and the answer service. Requests
read the last committed Tantivy snapshot and the catalog (SQLite WAL), so they never wait on
indexing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from code_compass_server.constants import LLM_TEMPERATURE, SYMBOL_REFERENCES_LIMIT
from code_compass_server.embed.links import EmbeddingLinks
from code_compass_server.engine_status import (
    EngineStatus,
    LivePublisher,
    collect_status,
    live_progress,
)
from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.index.job_records import FullRun, WatcherBatch
from code_compass_server.index.live_progress import LiveProgress
from code_compass_server.index.project import Project
from code_compass_server.index.registry import ProjectRegistry
from code_compass_server.index.scan import ScanSettings
from code_compass_server.index.scheduler import IndexScheduler
from code_compass_server.index.secret_files import is_secret
from code_compass_server.index.shared_buffers import BufferPublisher
from code_compass_server.index.summary import IndexProgress, IndexSummary
from code_compass_server.index.watcher import ChangeBatch, ProjectWatcher
from code_compass_server.records import (
    FileText,
    JsonObject,
    SearchHit,
    SearchParams,
    SearchResult,
    SymbolDef,
)
from code_compass_server.search.search_service import SearchService
from code_compass_server.settings import EngineSettings, SettingsChange, SettingsStore
from code_compass_server.storage import storage_base
from code_compass_server.team.options import TeamOptions, team_from_env

if TYPE_CHECKING:  # the answer stack loads with the first question
    import numpy as np

    from code_compass_server.answer.llm import LlmConfig
    from code_compass_server.answer.request import AskRequest
    from code_compass_server.answer.service import AskService
    from code_compass_server.search.searcher import SemanticFn
    from code_compass_server.symbols.navigation import Lookup, SymbolNavigator
    from code_compass_server.team.push import PushProgress, PushSummary

log = logging.getLogger(__name__)


class Engine:
    def __init__(
        self,
        storage: Path,
        settings: EngineSettings,
        *,
        serves_editor: bool = False,
        queries_only: bool = False,
        team: TeamOptions | None = None,
    ) -> None:
        """`team`: serve from a team index (PostgreSQL) instead of the local stores.
        `serves_editor`: this engine holds an editor's buffers (the language server) and
        publishes them for other processes on the same storage; the others read them.
        `queries_only`: a one-shot query process (CLI search, ask): vectors are read
        memory-mapped and nothing is embedded (embed/vector_reader.py)."""
        self.storage = storage
        # The one owner of the settings; every consumer (this engine first) subscribes to it,
        # and per-folder values are read through `scan_for(root)` at use.
        self.settings_store = SettingsStore(settings)
        self.buffers = EditorBuffers()
        self.team = team
        if team is None:
            self.registry = ProjectRegistry(
                storage, self.buffers, self._max_file_bytes, read_shared=not serves_editor
            )
        else:  # the team backend (numpy, psycopg) loads only when one is configured
            from code_compass_server.team.engine_glue import team_registry

            self.registry = team_registry(
                storage, self.buffers, self._max_file_bytes, team, self._scan_for
            )
        self._publisher = BufferPublisher() if serves_editor else None
        self.embeddings = EmbeddingLinks(storage, settings.embeddings, queries_only=queries_only)
        self.scheduler = IndexScheduler(self.buffers, self._scan_for, self.embeddings)
        self.search_service = SearchService(
            self.registry,
            self.embeddings.semantic_channel if team is None else self._team_semantic,
        )
        self._watchers: dict[str, ProjectWatcher] = {}
        self._answers: AskService | None = None
        self._navigator: SymbolNavigator | None = None  # opened on the first definition
        self._lock = threading.Lock()
        # What this process does to the indexes it writes, for the processes reading them.
        self._live = LivePublisher(self._live_entries, announce_idle=not queries_only)
        self.settings_store.subscribe(self._apply_settings)

    @property
    def settings(self) -> EngineSettings:
        """The current settings, read at use: a change applies to the next request."""
        return self.settings_store.current

    def _scan_for(self, root: Path) -> ScanSettings:
        return self.settings.scan_for(root)

    def _max_file_bytes(self, root: Path) -> int:
        return self.settings.scan_for(root).max_file_bytes

    @classmethod
    def open(
        cls,
        storage: Path | None = None,
        settings: EngineSettings | None = None,
        *,
        serves_editor: bool = False,
        queries_only: bool = False,
        team: TeamOptions | None = None,
    ) -> Engine:
        return cls(
            storage_base(storage),
            settings or EngineSettings(),
            serves_editor=serves_editor,
            queries_only=queries_only,
            team=team if team is not None else team_from_env(),
        )

    # --- projects ---
    def add_project(self, root: Path, name: str | None = None) -> str:
        project, created = self.registry.open(root, name)
        if created and self.team is None:
            link = self.embeddings.link(project)
            self.scheduler.attach(project, link.paths_replaced if link else None)
        return project.name

    def remove_project(self, name: str) -> None:
        """Stop its watcher and its index jobs first: no half-dropped project."""
        self.stop_watching(name)
        self.scheduler.detach(name)
        self.embeddings.unlink(name)
        project = self.registry.remove(name)
        if project is not None:
            if self._publisher is not None:
                self._publisher.withdraw_folder(project.directory)
            project.close()

    def projects(self) -> list[str]:
        return self.registry.names()

    def project(self, name: str) -> Project:
        return self.registry.get(name)

    def project_for_path(self, abs_path: Path) -> tuple[str, str] | None:
        return self.registry.project_for_path(abs_path)

    def _apply_settings(self, change: SettingsChange) -> None:
        """Settings store subscriber: embeddings on/off and what to index (re-scan). Search
        defaults and the LLM's are read from `self.settings` at each request: nothing to do."""
        projects = [self.registry.get(name) for name in self.projects()]
        if "embeddings" in change.fields:
            self._switch_embeddings(projects, change.new.embeddings)
        rescan = [p.name for p in projects if change.scan_changed(p.root)]
        if rescan:
            self.scheduler.scan_settings_changed(rescan)

    def _switch_embeddings(self, projects: list[Project], on: bool) -> None:
        self.embeddings.enabled = on  # off: search stops using vectors at its next call
        for project in projects:
            if on:  # link the vector store; its worker embeds every chunk still without a vector
                link = self.embeddings.get(project.name) or self.embeddings.link(project)
                if link is not None:
                    self.scheduler.set_paths_replaced(project.name, link.paths_replaced)
                    self.embeddings.wake(project.name)
            else:
                self.scheduler.set_paths_replaced(project.name, None)
                self.embeddings.unlink(project.name)

    # --- indexing: every write goes through the scheduler ---
    def _team_semantic(self) -> SemanticFn | None:
        """The team index's semantic channel: None while embeddings are off or no model."""
        from code_compass_server.team.engine_glue import team_semantic_channel

        if not self.settings.embeddings:
            return None
        embedder = self.embeddings.query_embedder()
        if embedder is None:
            return None
        return team_semantic_channel(embedder)

    def push(
        self,
        project: str | None = None,
        *,
        embed: bool = True,
        progress: Callable[[PushProgress], None] | None = None,
    ) -> list[PushSummary]:
        """Team index: push the working tree of each project (only what the server lacks)."""
        from code_compass_server.team.engine_glue import push_tree

        assert self.team is not None, "push needs a team index"
        out = []
        for name in [project] if project else self.projects():
            p = self.registry.get(name)
            embedder = self.embeddings.query_embedder() if embed else None
            cache = self.embeddings.shared_cache() if embed else None
            out.append(
                push_tree(
                    self.team.url, name, p.root, self._scan_for(p.root), embedder, progress, cache
                )
            )
            p.catalog.invalidate_counts()
        return out

    def index(
        self,
        project: str | None = None,
        *,
        embed: bool = True,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
        background_embed: bool = True,
    ) -> list[IndexSummary]:
        """Index (incrementally) now and wait. Then `embed` waits until every chunk has its
        vector; otherwise the embedding worker catches up in the background, unless
        `background_embed` is off too (one-shot CLI commands that exit right after).
        Served from a team index there is no local index: `push` writes to the server."""
        if self.team is not None:
            return []
        self._live.start()
        out: list[IndexSummary] = []
        for name in [project] if project else self.projects():
            job = FullRun(
                project=self.registry.get(name).name,  # unknown project: WorkspaceError
                cancel=cancel or threading.Event(),
                listeners=[progress] if progress else [],
                wake_embeddings=embed or background_embed,
            )
            summary = self.scheduler.run(job).summary
            if job.exception is not None:
                raise job.exception
            if summary is not None:  # None: cancelled before it started
                if embed:
                    self._wait_embedded(summary, progress, cancel)
                out.append(summary)
        return out

    def refresh(self) -> list[IndexSummary]:
        """For a one-shot query (CLI search, ask): index only the projects whose files changed
        since their last completed run, checked by stat (index/freshness.py), so an unchanged
        index is read without this process ever becoming its writer. A team index has no
        local index to refresh: the workspace's changes are its overlay (team/overlay.py)."""
        out: list[IndexSummary] = []
        if self.team is not None:
            return out
        for name in self.projects():
            project = self.registry.get(name)
            stale = project.stale_reason(repr(self._scan_for(project.root)))
            if stale:
                log.info("%s: indexing before the query (%s)", name, stale)
                out += self.index(name, embed=False, background_embed=False)
        return out

    def _wait_embedded(
        self,
        summary: IndexSummary,
        progress: Callable[[IndexProgress], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        name = summary.project
        if self.embeddings.get(name) is None:
            return
        started = time.perf_counter()
        self.embeddings.wait_embedded(name, progress, cancel)
        summary.phase_seconds["embed"] = time.perf_counter() - started
        summary.embedded = self.registry.get(name).catalog.counts()["embedded"]
        if progress:
            n, chunks, embedded = summary.scanned, summary.chunks, summary.embedded
            progress(IndexProgress(name, "ready", n, n, chunks, embedded))

    def update_paths(self, project: str, rels: list[str]) -> dict[str, int]:
        """Re-index these paths now and wait (CLI, tests, benchmarks)."""
        self.registry.get(project)
        job = self.scheduler.run(WatcherBatch(project=project, paths=set(rels)))
        if job.exception is not None:
            raise job.exception
        return job.stats

    def schedule_index(self, project: str | None = None) -> None:
        """Queue a full (incremental) run of one project or all; returns at once."""
        self._live.start()
        for name in [project] if project else self.projects():
            self.scheduler.submit_full(name)

    def schedule_paths(self, project: str, rels: set[str]) -> None:
        self.scheduler.submit_paths(project, rels)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once every scheduled write has been applied (tests, benchmarks)."""
        return self.scheduler.wait_idle(timeout)

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """True once every project's embedding worker is idle (tests, benchmarks)."""
        return self.embeddings.wait_all(timeout)

    def start_watching(self, project: str) -> None:
        proj = self.registry.get(project)
        on_changes: Callable[[ChangeBatch], None] = self._on_changes
        if self.team is not None:  # the team index: the watcher feeds the workspace's overlay
            from code_compass_server.team.engine_glue import team_watch

            on_changes = team_watch(proj)
        with self._lock:
            if project in self._watchers:
                return
            watcher = ProjectWatcher(project, proj.root, on_changes)
            self._watchers[project] = watcher
        watcher.start()

    def stop_watching(self, project: str) -> None:
        with self._lock:
            watcher = self._watchers.pop(project, None)
        if watcher is not None:
            watcher.stop()

    def _on_changes(self, batch: ChangeBatch) -> None:
        self.scheduler.submit_changes(batch)

    # --- buffers (unsaved editor text is the truth for an open document) ---
    def set_buffer(self, abs_path: Path, text: str) -> None:
        """Record an editor buffer; the scheduler re-indexes it first of all its work."""
        kept = self.buffers.set(abs_path, text)  # False over a memory cap: the disk is the truth
        self._buffer_changed(abs_path, text if kept else None)

    def clear_buffer(self, abs_path: Path) -> None:
        self.buffers.clear(abs_path)
        self._buffer_changed(abs_path, None)

    def _buffer_changed(self, abs_path: Path, text: str | None) -> None:
        found = self.registry.project_for_path(abs_path)
        if not found:
            return  # outside every workspace root: neither indexed nor published
        if self.team is not None:  # the team index: this workspace's overlay re-checks it
            from code_compass_server.team.engine_glue import team_notice

            team_notice(self.registry.get(found[0]), {found[1]})
        else:
            self.scheduler.submit_paths(found[0], {found[1]}, buffer=True)
        if self._publisher is not None:
            self._publish(abs_path, found[0], found[1], text)

    def _publish(self, abs_path: Path, name: str, rel: str, text: str | None) -> None:
        """Share the buffer with processes on the same storage (index/shared_buffers.py);
        never a secret file (by its own name or its link target's), never over the index's
        size limit."""
        assert self._publisher is not None
        project = self.registry.get(name)
        try:
            own_rel = Path(abs_path).absolute().relative_to(project.root).as_posix()
        except ValueError:
            own_rel = rel
        if text is None or is_secret(rel) or is_secret(own_rel):
            self._publisher.withdraw(project.directory, rel)
        else:
            limit = self._max_file_bytes(project.root)
            self._publisher.publish(project.directory, rel, text, limit)

    # --- reading: evidence, search, symbols ---
    def read_text(self, project: str, rel_path: str) -> str | None:
        """Current text of a workspace file: the editor buffer if open, else disk. Never outside."""
        return self.registry.read_text(project, rel_path)

    def read_current(self, project: str, rel_path: str) -> FileText | None:
        """`read_text` with where the text came from ("buffer" or "disk")."""
        return self.registry.read_current(project, rel_path)

    def search(self, params: SearchParams) -> SearchResult:
        """Hits, best first; empty with a `reason` when nothing relevant is found."""
        return self.search_service.search(params)

    def symbols_named(self, name: str, project: str | None = None) -> list[SymbolDef]:
        return self.search_service.symbols_named(name, project)

    def symbols_in_file(self, project: str, rel_path: str) -> list[SymbolDef]:
        return self.search_service.symbols_in_file(project, rel_path)

    def symbol_exists(self, name: str) -> bool:
        return self.search_service.symbol_exists(name)

    def mentions(self, name: str, project: str | None, limit: int) -> list[SearchHit]:
        return self.search_service.mentions(name, project, limit)

    def count_mentions(self, name: str, project: str | None) -> tuple[int, int]:
        return self.search_service.count_mentions(name, project)

    # --- semantics: the symbol at a position, as its language resolves it ---
    def navigator(self) -> SymbolNavigator:
        """Definitions and references at a position (symbols/navigation.py), opened on first
        use: its resolver may start jedi's process."""
        with self._lock:
            if self._navigator is None:
                from code_compass_server.symbols.navigation import SymbolNavigator

                self._navigator = SymbolNavigator(self)
            return self._navigator

    def definitions(self, project: str, rel_path: str, line: int, column: int) -> Lookup:
        """Where the identifier at 1-based (`line`, `column`) of a workspace file is defined."""
        root = self.project(project).root
        return self.navigator().definitions(project, root, rel_path, line, column)

    def references(
        self,
        project: str,
        rel_path: str,
        line: int,
        column: int,
        limit: int | None = SYMBOL_REFERENCES_LIMIT,
    ) -> Lookup:
        """Code that uses the definition of the identifier at 1-based (`line`, `column`):
        at most `limit` listed (None: all), `total` counts them all."""
        root = self.project(project).root
        return self.navigator().references(project, root, rel_path, line, column, limit)

    def real_declarations(self, project: str, defs: list[SymbolDef]) -> list[bool]:
        """Per symbol-table row: is it the declaration its name resolves to (not an alias,
        a re-export or a wrapper bound to another definition)?"""
        return self.navigator().rank_definitions(project, self.project(project).root, defs)

    def languages(self, project: str | None = None) -> list[str]:
        return self.search_service.languages(project)

    def nearby_terms(self, query: str, limit: int) -> list[str]:
        return self.search_service.nearby_terms(query, limit)

    # --- status and answers ---
    def index_unfinished(self) -> bool:
        """Some project is being indexed, here or by another process (its status says so)."""
        return any(p.state == "indexing" for p in self.status().projects)

    def embedding_eta_s(self) -> float | None:
        """Seconds until every project's chunks are embedded, when known (answers' meta)."""
        etas = [p.embed_eta_s for p in self.status().projects if p.embed_eta_s is not None]
        return max(etas) if etas else None

    def _live_entries(self) -> list[tuple[Path, LiveProgress]]:
        found = (
            live_progress(name, self.registry, self.scheduler, self.embeddings)
            for name in self.projects()
        )
        return [entry for entry in found if entry is not None]

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Vectors of `texts` with the embedding model, None when it is off (the answers'
        sentence check compares sentences with the passages they cite)."""
        return self.embeddings.embed(texts)

    def status(self) -> EngineStatus:
        """Typed; `status.status_to_json` gives the front doors' wire form."""
        if self.team is not None:
            from code_compass_server.team.engine_glue import team_status

            return team_status(self.registry, self.embeddings, self.storage)
        return collect_status(self.registry, self.scheduler, self.embeddings, self.storage)

    def ask(
        self,
        request: AskRequest | JsonObject,
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> JsonObject:
        """Answer JSON (docs/protocol.md). Raises InputError on bad params. Front doors pass
        an AskRequest; contract-shaped JSON params are read into one here."""
        from code_compass_server.answer.request import AskRequest
        from code_compass_server.answer.service import AskService

        if not isinstance(request, AskRequest):
            request = AskRequest.from_json(dict(request))
        with self._lock:
            if self._answers is None:
                self._answers = AskService(self.storage / "logs")
            service = self._answers
        names = self.projects()
        workspace = names[0] if len(names) == 1 else ", ".join(names)
        llm = _llm_config(self.settings)
        return service.ask(self, request, llm, on_text=on_text, workspace=workspace)

    def close(self) -> None:
        self._live.close()
        names = self.projects()
        for name in names:
            self.stop_watching(name)
        self.scheduler.stop()
        for name in names:
            self.remove_project(name)
        if self._publisher is not None:
            self._publisher.close()
        self.embeddings.close()
        if self._navigator is not None:
            self._navigator.close()


def _llm_config(s: EngineSettings) -> LlmConfig:
    from code_compass_server.answer.llm import LlmConfig

    # The Messages API version SDK 2.x speaks rejects sampling parameters: temperature is
    # sent only when the user changed it from the default (docs/answers.md).
    temperature = s.temperature if s.temperature != LLM_TEMPERATURE else None
    return LlmConfig(model=s.model, max_tokens=s.max_tokens, temperature=temperature)
