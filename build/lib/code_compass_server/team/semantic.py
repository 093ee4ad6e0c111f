"""The team index's semantic channel: the query embedded here, nearest pieces in pgvector."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from code_compass_server.records import SearchParams
from code_compass_server.search.candidates import Candidate

if TYPE_CHECKING:
    from code_compass_server.embed.model import Embedder
    from code_compass_server.team.remote import TeamProject


def team_candidates(
    project: TeamProject, params: SearchParams, limit: int, embedder: Embedder
) -> list[Candidate]:
    """Up to `limit` chunks by cosine, best first, not scored yet (as search/semantic.py)."""
    vec = embedder.embed_query(params.query)
    found = project.nearest_chunks(vec, limit, params.path_prefix, params.language, embed=embedder)
    rows = project.catalog.chunks_by_ids(cid for cid, _ in found)
    out: list[Candidate] = []
    for cid, cos in found:
        row = rows.get(cid)
        if row is None:
            continue
        out.append(
            Candidate(row=row, project=project.name, cosine=float(cos), semantic_rank=len(out))
        )
    return out


def model_matches(project: TeamProject, model_id: str) -> Any:
    """The server's vectors were made by the model we embed queries with."""
    with project.connections.conn() as c:
        row = c.execute("SELECT model_id FROM cc_projects WHERE id = %s", (project.project_id,))
        got = row.fetchone()
    return got is not None and got[0] in ("", model_id)
