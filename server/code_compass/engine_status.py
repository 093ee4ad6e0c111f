"""What the engine reports about itself: typed records, and their wire form for the front doors.

`status_to_json` gives the shape of `code-compass status --json` and of `codeCompass/status`
(docs/protocol.md); the language server adds its own keys to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from code_compass.embed.links import EmbeddingLinks
from code_compass.errors import WorkspaceError
from code_compass.index.registry import ProjectRegistry
from code_compass.index.scheduler import IndexScheduler
from code_compass.index.summary import IndexSummary
from code_compass.records import JsonObject

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
    phase = "error" if embed_error else state.phase.phase
    return ProjectStatus(
        name=name,
        root=p.root,
        state=client_state(phase, counts, has_embeddings=link is not None),
        phase=state.phase.phase,
        files=counts["files"],
        chunks=counts["chunks"],
        symbols=counts["symbols"],
        embedded=counts["embedded"],
        embed_total=counts["chunks"] if link is not None else 0,
        embed_rate=round(embed.rate, ROUND_RATE) if embed else 0.0,
        embed_eta_s=(round(embed.eta_s, ROUND_RATE) if embed and embed.eta_s is not None else None),
        errors=skipped.get("parse_error", 0),
        skipped=dict(skipped),
        read_only=p.read_only,
        rebuilt=p.rebuilt,
        storage=p.directory,
        indexing=state.indexing,
        queued=state.queued,
        last_error=last_error,
    )


def client_state(phase: str, counts: dict[str, int], *, has_embeddings: bool) -> str:
    """The four states clients show: indexing, embedding, ready, error."""
    if phase == "error":
        return "error"
    if phase in ("scanning", "indexing", "indexed") or (phase == "idle" and not counts["files"]):
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
    }


def status_to_json(status: EngineStatus) -> JsonObject:
    return {
        "projects": [project_to_json(p) for p in status.projects],
        "model": status.model,
        "embeddings": status.embeddings,
        "llmConfigured": status.llm_configured,
        "storage": str(status.storage),
        "embedCacheRebuilt": status.embed_cache_rebuilt,
    }
