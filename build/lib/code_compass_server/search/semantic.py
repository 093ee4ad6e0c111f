"""The semantic channel: embed the query, exact cosine top-k in the project's vector store.

Filters (path prefix, language) are applied by the store before the top-k cut, so a filtered
query still gets `limit` candidates. Chunks not embedded yet are simply absent: hybrid search
uses whatever is embedded so far and the lexical channel covers the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from code_compass_server.index.project import Project
from code_compass_server.records import SearchParams
from code_compass_server.search.calibration import score_candidates
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.gate import QuestionTerms
from code_compass_server.search.signals import query_info

if TYPE_CHECKING:  # annotations only: a lexical search or `status` never loads numpy
    import numpy as np


class QueryEmbedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


class VectorSearch(Protocol):
    def search(
        self,
        query_vec: np.ndarray,
        k: int,
        project: str | None = None,
        path_prefix: str | None = None,
        language: str | None = None,
    ) -> list[tuple[str, float]]: ...


def semantic_candidates(
    project: Project,
    params: SearchParams,
    limit: int,
    *,
    embedder: QueryEmbedder,
    store: VectorSearch,
) -> list[Candidate]:
    """Up to `limit` chunks of `project` by cosine, best first, not scored yet (the mode's
    model scores them once: `score_semantic`, or fusion with the lexical channel)."""
    vec = embedder.embed_query(params.query)
    found = store.search(
        vec, limit, project=project.name, path_prefix=params.path_prefix, language=params.language
    )
    rows = project.catalog.chunks_by_ids(cid for cid, _ in found)
    out: list[Candidate] = []
    for cid, cos in found:
        row = rows.get(cid)
        if row is None:  # deleted from the catalog since it was embedded
            continue
        # Ranks count only chunks that still exist, so rank 0 is the best live one.
        out.append(
            Candidate(row=row, project=project.name, cosine=float(cos), semantic_rank=len(out))
        )
    return out


def score_semantic(
    cands: list[Candidate], query: str, terms: QuestionTerms | None = None
) -> list[Candidate]:
    """Signals and calibrated semantic-mode score for each candidate, best first."""
    return score_candidates(cands, query_info(query), "semantic", terms)
