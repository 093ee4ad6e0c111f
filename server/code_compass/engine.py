"""The engine: projects, indexing, search, evidence reading, answers. Knows nothing of LSP.

Front doors (CLI, language server, tests) hold one Engine. Every method is thread-safe enough
for one indexing thread plus any number of request threads: searches read the last committed
Tantivy snapshot and the catalog (SQLite WAL), so they never wait on indexing.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from code_compass.constants import LLM_TEMPERATURE
from code_compass.errors import WorkspaceError
from code_compass.index.categories import CODE_CATEGORIES, DOC_CATEGORIES
from code_compass.index.indexer import Indexer
from code_compass.index.jobs import WriterQueue
from code_compass.index.project import Project
from code_compass.index.summary import IndexProgress, IndexSummary
from code_compass.index.textio import decode_text
from code_compass.index.watcher import ChangeBatch, ProjectWatcher
from code_compass.records import SearchHit, SearchParams, SymbolDef
from code_compass.search.candidates import Candidate
from code_compass.search.searcher import search_projects, to_hit
from code_compass.settings import EngineSettings, SettingsChange, SettingsStore
from code_compass.storage import project_storage, storage_base

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, storage: Path, settings: EngineSettings) -> None:
        self.storage = storage
        # The one owner of the settings; every consumer (this engine first) subscribes to it.
        self.settings_store = SettingsStore(settings)
        self._projects: dict[str, Project] = {}
        self._indexers: dict[str, Indexer] = {}
        self._states: dict[str, IndexProgress] = {}
        self._buffers: dict[Path, str] = {}
        self._watchers: dict[str, ProjectWatcher] = {}
        self._lock = threading.RLock()
        self._writer = WriterQueue(self._job_full, self._job_paths)
        self._embeddings: dict[str, Any] = {}  # project -> ProjectEmbeddings
        self._embedder: Any = None
        self._embed_cache: Any = None
        self.embed_error = ""  # why embeddings are off, if they are
        self.settings_store.subscribe(self._apply_settings)

    @property
    def settings(self) -> EngineSettings:
        """The current settings, read at use: a change applies to the next request."""
        return self.settings_store.current

    @classmethod
    def open(cls, storage: Path | None = None, settings: EngineSettings | None = None) -> Engine:
        return cls(storage_base(storage), settings or EngineSettings())

    # --- projects ---
    def add_project(self, root: Path, name: str | None = None) -> str:
        root = Path(root).expanduser()
        if not root.is_dir():
            raise WorkspaceError(
                f"{root} is not a folder; pass --workspace DIR of an existing folder"
            )
        root = root.resolve()
        with self._lock:
            for existing in self._projects.values():
                if existing.root == root:
                    return existing.name
            base = name or root.name or "root"
            unique, n = base, 2
            while unique in self._projects:
                unique, n = f"{base}-{n}", n + 1
            project = Project.open(unique, root, project_storage(self.storage, root))
            self._projects[unique] = project
            link = self._link_embeddings(project)
            self._indexers[unique] = Indexer(
                project, self.settings.scan_for(root), link.paths_replaced if link else None
            )
            self._states[unique] = IndexProgress(unique, "idle")
            return unique

    def _link_embeddings(self, project: Project) -> Any:
        """Vector store + background worker for a project, when embeddings are on."""
        if not self.settings.embeddings:
            return None
        from code_compass.embed.cache import EmbeddingCache
        from code_compass.embed.model import Embedder
        from code_compass.embed.project_link import ProjectEmbeddings
        from code_compass.search.fusion import fuse
        from code_compass.search.semantic import semantic_candidates

        if self._embedder is None:
            try:
                self._embedder = Embedder()
            except Exception as exc:  # model not built: lexical search still works
                self.embed_error = str(exc)
                log.warning("embeddings off: %s", exc)
                return None
            self.embed_error = ""
            self._embed_cache = EmbeddingCache(
                self.storage / "embed-cache.sqlite", self._embedder.model_id
            )
            embedder = self._embedder

            def semantic(p: Project, params: SearchParams, limit: int) -> list[Candidate]:
                link = self._embeddings.get(p.name)
                if link is None:
                    return []
                return semantic_candidates(p, params, limit, embedder=embedder, store=link.store)

            self._semantic = semantic
            self._fuse = fuse
        link = ProjectEmbeddings(project, self._embedder, self._embed_cache)
        self._embeddings[project.name] = link
        return link

    def remove_project(self, name: str) -> None:
        self.stop_watching(name)
        with self._lock:
            project = self._projects.pop(name, None)
            self._indexers.pop(name, None)
            self._states.pop(name, None)
            link = self._embeddings.pop(name, None)
        if link is not None:
            link.close()
        if project is not None:
            project.close()

    def projects(self) -> list[str]:
        with self._lock:
            return list(self._projects)

    def project(self, name: str) -> Project:
        with self._lock:
            try:
                return self._projects[name]
            except KeyError:
                raise WorkspaceError(
                    f"unknown project {name!r}; known: {', '.join(self._projects) or 'none'}"
                ) from None

    def project_for_path(self, abs_path: Path) -> tuple[str, str] | None:
        p = Path(abs_path).resolve() if Path(abs_path).exists() else Path(abs_path).absolute()
        with self._lock:
            best: tuple[str, str] | None = None
            best_len = -1
            for name, proj in self._projects.items():
                try:
                    rel = p.relative_to(proj.root)
                except ValueError:
                    continue
                if len(proj.root.parts) > best_len:
                    best, best_len = (name, rel.as_posix()), len(proj.root.parts)
            return best

    def _apply_settings(self, change: SettingsChange) -> None:
        """Settings store subscriber: embeddings on/off and what to index (re-scan). Search
        defaults and the LLM's are read from `self.settings` at each request: nothing to do."""
        with self._lock:
            projects = list(self._projects.values())
        if "embeddings" in change.fields:
            for p in projects:
                self._switch_embeddings(p, change.new.embeddings)
        for p in projects:
            if change.scan_changed(p.root):
                self._indexers[p.name].settings = change.new.scan_for(p.root)
                self.schedule_index(p.name)

    def _switch_embeddings(self, project: Project, on: bool) -> None:
        indexer = self._indexers[project.name]
        if on:  # link the vector store; its worker embeds every chunk still without a vector
            link = self._embeddings.get(project.name) or self._link_embeddings(project)
            if link is not None:
                indexer.on_paths_replaced = link.paths_replaced
                link.worker.start()
                link.worker.wake()
            return
        # Search already ignores vectors (it reads the settings); stop the worker too.
        indexer.on_paths_replaced = None
        with self._lock:
            link = self._embeddings.pop(project.name, None)
        if link is not None:
            link.close()

    # --- indexing ---
    def index(
        self,
        project: str | None = None,
        *,
        embed: bool = True,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
        background_embed: bool = True,
    ) -> list[IndexSummary]:
        """Index (incrementally) and then: `embed` waits until every chunk has its vector;
        otherwise the embedding worker catches up in the background, unless
        `background_embed` is off too (one-shot CLI commands that exit right after)."""
        names = [project] if project else self.projects()
        out: list[IndexSummary] = []
        for name in names:
            proj = self.project(name)
            indexer = self._indexers[name]

            def report(ev: IndexProgress) -> None:
                self._states[ev.project] = ev
                if progress:
                    progress(ev)

            try:
                summary = indexer.run(
                    progress=report, cancel=cancel, overlay=self._overlay_for(proj)
                )
            except Exception as exc:
                self._states[name] = IndexProgress(name, "error", message=str(exc))
                raise
            link = self._embeddings.get(name)
            if link is not None and (embed or background_embed):
                link.worker.start()  # after the lexical index: search never waits for vectors
                link.worker.wake()
                if embed:
                    self._wait_embedded(name, link, report, cancel)
                    summary.embedded = proj.catalog.counts()["embedded"]
            self._states[name] = IndexProgress(
                name,
                "ready",
                summary.scanned,
                summary.scanned,
                summary.chunks,
                summary.embedded,
                summary.chunks if link else 0,
            )
            if progress:
                progress(self._states[name])
            out.append(summary)
        return out

    def _wait_embedded(
        self,
        name: str,
        link: Any,
        report: Callable[[IndexProgress], None],
        cancel: threading.Event | None,
    ) -> None:
        """Block until the project's chunks are embedded (CLI `index`), reporting progress."""
        proj = self.project(name)
        while not link.worker.wait_idle(0.5):
            if cancel is not None and cancel.is_set():
                return
            if self._embeddings.get(name) is not link:  # embeddings turned off meanwhile
                return
            counts = proj.catalog.counts()
            report(
                IndexProgress(
                    name,
                    "embedding",
                    chunks=counts["chunks"],
                    embedded=counts["embedded"],
                    embed_total=counts["chunks"],
                )
            )

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """True once every project's embedding worker is idle (tests, benchmarks)."""
        with self._lock:
            links = list(self._embeddings.values())
        for link in links:
            link.worker.start()
            link.worker.wake()
        return all(link.worker.wait_idle(timeout) for link in links)

    def update_paths(self, project: str, rels: list[str]) -> dict[str, int]:
        """Re-index these paths now, in the caller's thread (CLI, tests, benchmarks)."""
        proj = self.project(project)
        stats = self._indexers[project].update_paths(
            self._expand_deleted_dirs(proj, rels), overlay=self._overlay_for(proj)
        )
        link = self._embeddings.get(project)
        if link is not None:
            link.worker.start()
            link.worker.wake()
        return stats

    # --- background writes: the writer thread, file watchers ---
    def schedule_index(self, project: str | None = None) -> None:
        for name in [project] if project else self.projects():
            self._writer.submit_full(name)

    def schedule_paths(self, project: str, rels: set[str]) -> None:
        self._writer.submit_paths(project, rels)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once every scheduled write has been applied (tests, benchmarks)."""
        return self._writer.wait_idle(timeout)

    def start_watching(self, project: str) -> None:
        proj = self.project(project)
        with self._lock:
            if project in self._watchers:
                return
            watcher = ProjectWatcher(project, proj.root, self._on_changes)
            self._watchers[project] = watcher
        watcher.start()

    def stop_watching(self, project: str) -> None:
        with self._lock:
            watcher = self._watchers.pop(project, None)
        if watcher is not None:
            watcher.stop()

    def _on_changes(self, batch: ChangeBatch) -> None:
        if batch.rescan:
            self._writer.submit_full(batch.project)
        else:
            self._writer.submit_paths(batch.project, set(batch.paths))

    def _job_full(self, project: str) -> None:
        if project in self.projects():
            # Never wait for embeddings here: the writer thread must stay free for watcher
            # batches and buffers; the embedding worker catches up in the background.
            self.index(project, embed=False)

    def _job_paths(self, project: str, rels: set[str]) -> None:
        if project in self.projects():
            self.update_paths(project, sorted(rels))

    @staticmethod
    def _expand_deleted_dirs(proj: Project, rels: list[str]) -> list[str]:
        """A deleted folder arrives as one path: expand it to the indexed files below it."""
        out: list[str] = []
        for rel in rels:
            if not (proj.root / rel).exists() and proj.catalog.file(rel) is None:
                out.extend(proj.catalog.paths_under(rel))
            out.append(rel)
        return out

    # --- buffers (unsaved editor text is the truth for an open document) ---
    def set_buffer(self, abs_path: Path, text: str) -> None:
        """Record an editor buffer; it is re-indexed by the writer thread, not the caller."""
        found = self.project_for_path(abs_path)
        with self._lock:
            self._buffers[Path(abs_path).absolute()] = text
        if found:
            self._writer.submit_paths(found[0], {found[1]})

    def clear_buffer(self, abs_path: Path) -> None:
        found = self.project_for_path(abs_path)
        with self._lock:
            self._buffers.pop(Path(abs_path).absolute(), None)
        if found:
            self._writer.submit_paths(found[0], {found[1]})

    def _overlay_for(self, project: Project) -> Callable[[str], str | None]:
        def overlay(rel: str) -> str | None:
            with self._lock:
                return self._buffers.get((project.root / rel).absolute())

        return overlay

    # --- reading evidence ---
    def read_text(self, project: str, rel_path: str) -> str | None:
        """Current text of a workspace file: the editor buffer if open, else disk. Never outside."""
        proj = self.project(project)
        safe = _inside(proj.root, rel_path)
        if safe is None:
            return None
        with self._lock:
            buffered = self._buffers.get(safe) or self._buffers.get(
                (proj.root / rel_path).absolute()
            )
        if buffered is not None:
            return buffered
        try:
            data = safe.read_bytes()
        except OSError:
            return None
        if len(data) > self.settings.scan_for(proj.root).max_file_bytes:
            return None
        return decode_text(data)

    # --- search ---
    def search(self, params: SearchParams) -> list[SearchHit]:
        semantic = self._semantic if self.settings.embeddings else None
        return search_projects(
            self._scope(params.project), params, semantic=semantic, fuse=self._fuse
        )

    # Set by the embeddings layer when it is available (hybrid search).
    _semantic: Callable[[Project, SearchParams, int], list[Candidate]] | None = None
    _fuse: Callable[[str, list[Candidate], list[Candidate]], list[Candidate]] | None = None

    # --- symbols (hover, code lens) ---
    def symbols_named(self, name: str, project: str | None = None) -> list[SymbolDef]:
        return [s for p in self._scope(project) for s in p.catalog.symbols_named(name)]

    def symbols_in_file(self, project: str, rel_path: str) -> list[SymbolDef]:
        return self.project(project).catalog.symbols_in_file(rel_path)

    def symbol_exists(self, name: str) -> bool:
        """Defined, or at least written somewhere in the index (constants, fields, config keys
        are not symbol-table entries): the answer's blocking rule is "exists nowhere"."""
        scope = self._scope(None)
        return any(p.catalog.symbols_named(name) for p in scope) or any(
            p.lexical.count(name) > 0 for p in scope
        )

    def mentions(self, name: str, project: str | None, limit: int) -> list[SearchHit]:
        """Passages that mention an identifier: documents first, then code."""
        hits: list[SearchHit] = []
        for cats in (DOC_CATEGORIES, CODE_CATEGORIES):
            for p in self._scope(project):
                found = p.lexical.term_hits(name, limit, categories=cats)
                rows = p.catalog.chunks_by_ids(h.chunk_id for h in found)
                for h in found:
                    row = rows.get(h.chunk_id)
                    if row is not None:
                        hits.append(to_hit(Candidate(row=row, project=p.name, bm25=h.bm25)))
        return hits

    def count_mentions(self, name: str, project: str | None) -> tuple[int, int]:
        docs = sum(p.lexical.count(name, categories=DOC_CATEGORIES) for p in self._scope(project))
        code = sum(p.lexical.count(name, categories=CODE_CATEGORIES) for p in self._scope(project))
        return docs, code

    def _scope(self, project: str | None) -> list[Project]:
        if project and project != "*":
            return [self.project(project)]
        with self._lock:
            return list(self._projects.values())

    # --- status ---
    def status(self) -> dict[str, Any]:
        entries = []
        with self._lock:
            items = list(self._projects.items())
        for name, p in items:
            counts = p.catalog.counts()
            state = self._states.get(name)
            last = p.extra.get("last_summary")
            link = self._embeddings.get(name)
            embed = link.progress() if link is not None else None
            entries.append(
                {
                    "name": name,
                    "root": str(p.root),
                    "state": _client_state(state.phase if state else "idle", counts, link),
                    "phase": state.phase if state else "idle",
                    "files": counts["files"],
                    "chunks": counts["chunks"],
                    "symbols": counts["symbols"],
                    "embedded": counts["embedded"],
                    "embedTotal": counts["chunks"] if link is not None else 0,
                    "embedRate": round(embed.rate, 1) if embed else 0.0,
                    "embedEtaS": (
                        round(embed.eta_s, 1) if embed and embed.eta_s is not None else None
                    ),
                    "errors": (last.skipped.get("parse_error", 0) if last else 0),  # type: ignore[attr-defined]
                    "skipped": (last.skipped if last else {}),  # type: ignore[attr-defined]
                    "readOnly": p.read_only,
                    "rebuilt": p.rebuilt,
                    "storage": str(p.directory),
                }
            )
        return {
            "projects": entries,
            "model": self._embedder.model_id if self._embedder is not None else None,
            "embeddings": (self.embed_error or "on") if self.settings.embeddings else "off",
            "llmConfigured": bool(os.environ.get("ANTHROPIC_API_KEY")),
            "storage": str(self.storage),
        }

    # --- answers ---
    def ask(
        self, params: dict[str, Any], *, on_text: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """Answer JSON (DESIGN.md contract). Raises InputError on bad params."""
        from code_compass.answer.llm import LlmConfig
        from code_compass.answer.service import AskService

        with self._lock:
            if self._ask_service is None:
                self._ask_service = AskService(self.storage / "logs")
            service = self._ask_service
        s = self.settings
        # The Messages API version SDK 2.x speaks rejects sampling parameters: temperature is
        # sent only when the user changed it from the seed's default (docs/answers.md).
        temperature = s.temperature if s.temperature != LLM_TEMPERATURE else None
        llm = LlmConfig(model=s.model, max_tokens=s.max_tokens, temperature=temperature)
        names = self.projects()
        workspace = names[0] if len(names) == 1 else ", ".join(names)
        return service.ask(self, params, llm, on_text=on_text, workspace=workspace)

    _ask_service: Any = None

    def nearby_terms(self, query: str, limit: int) -> list[str]:
        """Symbol names close to the query's words (spelling, prefixes), for suggestions."""
        import difflib
        import re

        words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)]
        names: list[str] = []
        for p in self._scope(None):
            names.extend(p.catalog.all_symbol_names())
        pool = sorted(set(names))
        out: list[str] = []
        for w in words:
            for m in difflib.get_close_matches(w, pool, n=3, cutoff=0.75):
                if m not in out and m != w:
                    out.append(m)
        return out[:limit]

    def close(self) -> None:
        with self._lock:
            names = list(self._projects)
        for name in names:
            self.stop_watching(name)
        self._writer.stop()
        for name in names:
            self.remove_project(name)


def _client_state(phase: str, counts: dict[str, int], link: Any) -> str:
    """The four states clients show: indexing, embedding, ready, error."""
    if phase == "error":
        return "error"
    if phase in ("scanning", "indexing", "indexed") or (phase == "idle" and not counts["files"]):
        return "indexing"
    if link is not None and counts["embedded"] < counts["chunks"]:
        return "embedding"
    return "ready"


def _inside(root: Path, rel_path: str) -> Path | None:
    """Resolve a workspace-relative path; None if it escapes the root ('..', symlinks, absolute)."""
    if not rel_path or "\0" in rel_path or Path(rel_path).is_absolute():
        return None
    candidate = (root / rel_path).resolve()
    try:
        candidate.relative_to(root)
    except ValueError:
        return None
    return candidate
