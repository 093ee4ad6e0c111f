"""What the engine reports about itself: typed records, and their wire form for the front doors.

`status_to_json` gives the shape of `code-compass status --json` and of `codeCompass/status`
(docs/protocol.md); the language server adds its own keys to it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from code_compass_server.constants import STORAGE_MIN_FREE_BYTES
from code_compass_server.embed.links import EmbeddingLinks
from code_compass_server.errors import WorkspaceError
from code_compass_server.index.live_progress import (
    HEARTBEAT_S,
    LiveProgress,
    clear_live,
    process_start,
    read_live,
    write_live,
)
from code_compass_server.index.registry import ProjectRegistry
from code_compass_server.index.scheduler import IndexScheduler
from code_compass_server.index.summary import IndexSummary
from code_compass_server.index.verify import closed_cleanly
from code_compass_server.records import JsonObject

ROUND_RATE = 1  # digits of embedRate and embedEtaS


@dataclass(frozen=True, slots=True)
class ProjectStatus:
    name: str
    root: Path
    state: str  # what clients show: indexing | embedding | ready | error
    phase: str  # the scheduler's finer phase (idle, scanning, indexing, indexed, ...)
    files: int
    chunks: int
    symbols: int
    embedded: int
    embed_total: int  # 0 when the project has no embeddings
    embed_rate: float  # chunks/s
    embed_eta_s: float | None
    errors: int  # files that failed to parse in the last full run
    skipped: dict[str, int] = field(default_factory=dict)
    read_only: bool = False
    rebuilt: str = ""
    storage: Path = Path()
    indexing: bool = False  # a full run of it is running now
    queued: bool = False  # a full run of it is waiting
    last_error: str = ""
    writer_pid: int | None = None  # read-only: the process that writes this index, if known
    # The team index (team/): which backend serves it, the server's version, and how many of
    # the workspace's paths differ from what was last pushed (served from the local overlay).
    backend: str = "local"
    server: str = ""
    behind: int = 0


@dataclass(frozen=True, slots=True)
class EngineStatus:
    projects: list[ProjectStatus]
    model: str | None
    embeddings: str  # on | off | why it is off although enabled
    llm_configured: bool
    storage: Path
    embed_cache_rebuilt: str = ""  # why the shared embedding cache was replaced ("" if not)


def collect_status(
    registry: ProjectRegistry,
    scheduler: IndexScheduler,
    embeddings: EmbeddingLinks,
    storage: Path,
) -> EngineStatus:
    projects = [_project_status(name, registry, scheduler, embeddings) for name in registry.names()]
    return EngineStatus(
        projects=[p for p in projects if p is not None],
        model=embeddings.model_id,
        embeddings=embeddings.error or ("on" if embeddings.enabled else "off"),
        llm_configured=bool(os.environ.get("ANTHROPIC_API_KEY")),
        storage=storage,
        embed_cache_rebuilt=embeddings.cache_recreated,
    )


def _storage_short(directory: Path) -> str:
    """ "disk full in <folder>" when the index's file system has (almost) no room left: a run
    that failed for it is over, but status must still say why the counts stop (#32)."""
    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        return ""
    if free >= STORAGE_MIN_FREE_BYTES:
        return ""
    return f"disk full in {directory}: {free} bytes free"


def _project_status(
    name: str, registry: ProjectRegistry, scheduler: IndexScheduler, embeddings: EmbeddingLinks
) -> ProjectStatus | None:
    try:
        p = registry.get(name)
    except WorkspaceError:  # removed meanwhile
        return None
    counts = p.catalog.counts()
    state = scheduler.state(name)
    link = embeddings.get(name)
    embed = link.progress() if link is not None else None
    last = p.extra.get("last_summary")
    skipped = last.skipped if isinstance(last, IndexSummary) else {}
    # An embedding worker failing right now (or dead) is an error the user must see.
    embed_error = embed.error if embed is not None and embed.error else ""
    last_error = state.last_error or (f"embedding: {embed_error}" if embed_error else "")
    if not last_error:
        last_error = _storage_short(p.directory)
    has_vectors = embeddings.has_vectors(name)
    phase = state.phase.phase
    client = client_state("error" if embed_error else phase, counts, has_embeddings=has_vectors)
    rate = round(embed.rate, ROUND_RATE) if embed else 0.0
    eta = round(embed.eta_s, ROUND_RATE) if embed and embed.eta_s is not None else None
    # Read-only: this process writes nothing; what happens is the writer's, from its live file.
    live = read_live(p.directory) if p.read_only else None
    if live is not None:
        client, phase = live.state, live.phase
        rate = round(live.embed_rate, ROUND_RATE)
        eta = round(live.embed_eta_s, ROUND_RATE) if live.embed_eta_s is not None else None
    elif p.read_only and client == "embedding":
        # No process computes the missing vectors: "embedding" would promise progress that
        # never comes. The saved ones stay; the next writer computes the rest.
        client, phase = "ready", "stopped"
        if not last_error and not closed_cleanly(p.directory):
            last_error = (
                f"embedding stopped at {counts['embedded']} of {counts['chunks']} chunks: the"
                " indexing process ended without closing (killed or crashed); `code-compass"
                " index` computes the rest, the saved vectors are kept"
            )
    return ProjectStatus(
        name=name,
        root=p.root,
        state=client,
        phase=phase,
        files=counts["files"],
        chunks=counts["chunks"],
        symbols=counts["symbols"],
        embedded=counts["embedded"],
        embed_total=counts["chunks"] if has_vectors or live is not None else 0,
        embed_rate=rate,
        embed_eta_s=eta,
        errors=skipped.get("parse_error", 0),
        skipped=dict(skipped),
        read_only=p.read_only,
        rebuilt=p.rebuilt,
        storage=p.directory,
        indexing=state.indexing,
        queued=state.queued,
        last_error=last_error,
        writer_pid=live.pid if live is not None else None,
    )


def client_state(phase: str, counts: dict[str, int], *, has_embeddings: bool) -> str:
    """The four states clients show: indexing, embedding, ready, error."""
    if phase == "error":
        return "error"
    if phase in ("scanning", "indexing", "committing", "indexed") or (
        phase == "idle" and not counts["files"]
    ):
        return "indexing"
    if has_embeddings and counts["embedded"] < counts["chunks"]:
        return "embedding"
    return "ready"


def project_to_json(p: ProjectStatus) -> JsonObject:
    return {
        "name": p.name,
        "root": str(p.root),
        "state": p.state,
        "phase": p.phase,
        "files": p.files,
        "chunks": p.chunks,
        "symbols": p.symbols,
        "embedded": p.embedded,
        "embedTotal": p.embed_total,
        "embedRate": p.embed_rate,
        "embedEtaS": p.embed_eta_s,
        "errors": p.errors,
        "skipped": p.skipped,
        "readOnly": p.read_only,
        "rebuilt": p.rebuilt,
        "storage": str(p.storage),
        "lastError": p.last_error,
        "writerPid": p.writer_pid,
    } | (
        {"backend": p.backend, "server": p.server, "behind": p.behind}
        if p.backend != "local"
        else {}
    )


def status_to_json(status: EngineStatus) -> JsonObject:
    return {
        "projects": [project_to_json(p) for p in status.projects],
        "model": status.model,
        "embeddings": status.embeddings,
        "llmConfigured": status.llm_configured,
        "storage": str(status.storage),
        "embedCacheRebuilt": status.embed_cache_rebuilt,
    }


# --- this process's live progress, for the processes that open its index read-only ---


def live_progress(
    name: str, registry: ProjectRegistry, scheduler: IndexScheduler, embeddings: EmbeddingLinks
) -> tuple[Path, LiveProgress] | None:
    """What this process is doing to a project it writes; None when it only reads it."""
    try:
        p = registry.get(name)
    except WorkspaceError:
        return None
    if p.read_only:
        return None
    state = scheduler.state(name)
    counts = p.catalog.counts()
    link = embeddings.get(name)
    embed = link.progress() if link is not None else None
    files_done = files_total = 0
    if state.indexing:
        ph = state.phase
        kind = ph.phase if ph.phase in ("scanning", "indexing", "committing") else "indexing"
        client, phase = "indexing", kind
        files_done, files_total = ph.files_done, ph.files_total
    elif embeddings.embedding_progress(name) is not None:  # its worker is embedding now
        client = phase = "embedding"
    else:
        client = phase = "ready"
    now = time.time()
    live = LiveProgress(
        pid=os.getpid(),
        heartbeat=now,
        started=now,
        state=client,
        phase=phase,
        files_done=files_done,
        files_total=files_total,
        chunks=counts["chunks"],
        embedded=counts["embedded"],
        embed_total=counts["chunks"] if link is not None else 0,
        embed_rate=embed.rate if embed else 0.0,
        embed_eta_s=embed.eta_s if embed else None,
        pid_start=process_start(os.getpid()),
    )
    return p.directory, live


class LivePublisher:
    """Keeps this process's live-progress file for every project it writes: rewritten each
    heartbeat while it works, written once when it goes idle (a long-lived server stays the
    writer), removed when the engine closes. A process done within the first heartbeat (a
    one-shot search) never writes one."""

    def __init__(
        self, entries: Callable[[], list[tuple[Path, LiveProgress]]], *, announce_idle: bool = True
    ) -> None:
        """`announce_idle` off: a one-shot query process says only that it works, never
        that it keeps the index (it exits in a moment)."""
        self._entries = entries
        self._announce_idle = announce_idle
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._written: dict[Path, LiveProgress] = {}  # last write per project folder
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="live-progress", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self.publish()
            except Exception:  # a status read racing a closing project: try again next beat
                continue

    def publish(self) -> None:
        seen: set[Path] = set()
        for directory, live in self._entries():
            if not live.working and not self._announce_idle:
                continue
            seen.add(directory)
            last = self._written.get(directory)
            if live.working or last is None or last.state != live.state:
                if last is not None and last.working == live.working:
                    live = replace(live, started=last.started)
                write_live(directory, live)
                self._written[directory] = live
        for directory in set(self._written) - seen:  # no longer written by this process
            clear_live(directory)
            del self._written[directory]

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(HEARTBEAT_S * 5)
        for directory in list(self._written):
            clear_live(directory)
        self._written.clear()
