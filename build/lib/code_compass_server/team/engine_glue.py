"""What the engine needs to serve from the team index: the registry, the semantic channel, the
push and the status, behind a few functions so engine.py stays one facade over both backends."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from code_compass_server.embed.links import EmbeddingLinks
from code_compass_server.engine_status import EngineStatus, ProjectStatus
from code_compass_server.errors import WorkspaceError
from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.index.project import Project
from code_compass_server.index.registry import ProjectRegistry
from code_compass_server.index.scan import ScanSettings
from code_compass_server.index.watcher import ChangeBatch
from code_compass_server.records import SearchParams
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.searcher import SemanticFn
from code_compass_server.team.connection import (
    PUSH_STATEMENT_TIMEOUT_MS,
    TeamIndexUnavailable,
    connect,
)
from code_compass_server.team.options import TeamOptions, team_from_env
from code_compass_server.team.push import (
    Pusher,
    PushProgress,
    PushSummary,
    TextEmbedder,
    VectorCache,
)
from code_compass_server.team.registry import TeamRegistry
from code_compass_server.team.remote import TeamProject
from code_compass_server.team.semantic import model_matches, team_candidates

if TYPE_CHECKING:
    from code_compass_server.embed.model import Embedder

__all__ = [
    "PushProgress",
    "PushSummary",
    "SemanticFn",
    "TeamOptions",
    "push_tree",
    "team_from_env",
    "team_notice",
    "team_registry",
    "team_semantic_channel",
    "team_status",
    "team_watch",
]


def team_registry(
    storage: Path,
    buffers: EditorBuffers,
    max_file_bytes: Callable[[Path], int],
    team: TeamOptions,
    scan_for: Callable[[Path], ScanSettings],
) -> ProjectRegistry:
    names = {Path(k).expanduser().resolve(): v for k, v in team.project_names.items()}
    return TeamRegistry(
        storage, buffers, max_file_bytes, team.url, scan_for, names, team.single_project
    )


def team_semantic_channel(embedder: Embedder) -> SemanticFn:
    checked: dict[str, bool] = {}

    def semantic(project: Project, params: SearchParams, limit: int) -> list[Candidate]:
        tp = cast(TeamProject, project)
        if tp.name not in checked:
            checked[tp.name] = bool(model_matches(tp, embedder.model_id))
        if not checked[tp.name]:
            return []  # vectors of another model: the lexical channel answers alone
        return team_candidates(tp, params, limit, embedder)

    return semantic


def push_tree(
    url: str,
    project: str,
    root: Path,
    scan: ScanSettings,
    embedder: TextEmbedder | None,
    progress: Callable[[PushProgress], None] | None,
    cache: VectorCache | None = None,
) -> PushSummary:
    conn = connect(url, statement_timeout_ms=PUSH_STATEMENT_TIMEOUT_MS)
    try:
        summary = Pusher(conn, project, root, scan, embedder, progress, cache=cache).run()
    finally:
        conn.close()
    if summary.chunks_parsed >= VACUUM_AFTER_CHUNKS:
        refresh_visibility(url)
    return summary


# A push that wrote this many chunks' postings vacuums them: index-only scans need the
# visibility map, which autovacuum would set only later.
VACUUM_AFTER_CHUNKS = 2_000


def refresh_visibility(url: str) -> None:
    """VACUUM (ANALYZE) the search tables (a role that does not own them is skipped by the
    server with a warning: autovacuum then does it)."""
    with connect(url, autocommit=True, statement_timeout_ms=PUSH_STATEMENT_TIMEOUT_MS) as c:
        c.execute("VACUUM (ANALYZE) cc_postings, cc_chunks, cc_tree, cc_pieces, cc_term_df")


def team_watch(project: Project) -> Callable[[ChangeBatch], None]:
    """A watcher's callback for a team project: its overlay re-checks what changed, and stops
    walking the tree on a timer."""
    tp = cast(TeamProject, project)
    tp.overlay.watched()

    def changed(batch: ChangeBatch) -> None:
        tp.overlay.notice(None if batch.rescan else set(batch.paths))

    return changed


def team_notice(project: Project, paths: set[str]) -> None:
    """An editor buffer changed (or closed): the overlay re-checks its path."""
    cast(TeamProject, project).overlay.notice(paths)


def team_status(
    registry: ProjectRegistry, embeddings: EmbeddingLinks, storage: Path
) -> EngineStatus:
    projects: list[ProjectStatus] = []
    for name in registry.names():
        try:
            tp = cast(TeamProject, registry.get(name))
        except WorkspaceError:
            continue
        try:
            counts = tp.catalog.counts()
            behind = len(tp.dirty())
            with tp.connections.conn() as c:
                row = c.execute("SHOW server_version").fetchone()
            server, state, error = (str(row[0]) if row else ""), "ready", ""
        except TeamIndexUnavailable as exc:
            counts, behind, server, state, error = {}, 0, "", "error", str(exc)
        projects.append(
            ProjectStatus(
                name=name,
                root=tp.root,
                state=state,
                phase="idle",
                files=counts.get("files", 0),
                chunks=counts.get("chunks", 0),
                symbols=counts.get("symbols", 0),
                embedded=counts.get("embedded", 0),
                embed_total=counts.get("chunks", 0),
                embed_rate=0.0,
                embed_eta_s=None,
                errors=0,
                storage=tp.directory,
                last_error=error,
                backend="team",
                server=server,
                behind=behind,
            )
        )
    return EngineStatus(
        projects=projects,
        model=embeddings.model_id,
        embeddings=embeddings.error or ("on" if embeddings.enabled else "off"),
        llm_configured=bool(os.environ.get("ANTHROPIC_API_KEY")),
        storage=storage,
    )
