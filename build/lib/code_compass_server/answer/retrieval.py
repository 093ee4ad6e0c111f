"""Retrieve stage of `ask`: one search (in the request's mode, hybrid by default), then the
min-score gate and the scope caps.

(docs/rules.md: min-score gate, per-project cap): hits below minScore never reach the
model; when every project is searched, no project may fill the context alone.
"""

from __future__ import annotations

from dataclasses import replace

from code_compass_server.answer.source import EvidenceSource
from code_compass_server.constants import MAX_CONTEXTS_PER_PROJECT_WIDE, MAX_TOP_K
from code_compass_server.records import SearchHit, SearchParams, SearchResult
from code_compass_server.validation import ALL_PROJECTS


def retrieve(
    source: EvidenceSource,
    params: SearchParams,
    top_k: int,
    extra_hits: list[SearchHit] | None = None,
) -> list[SearchHit]:
    """Best first: score >= minScore, per-project cap when all projects are searched, top_k
    overall; then `extra_hits` (context the depth controller adds) not already present."""
    floor = min_score(params)
    found = source.search(replace(params, top_k=top_k))
    hits = sorted((h for h in found if h.score >= floor), key=lambda h: h.score, reverse=True)
    if params.project == ALL_PROJECTS:
        hits = cap_per_project(hits, MAX_CONTEXTS_PER_PROJECT_WIDE)
    # Keep what the search said about itself (a partly embedded index) for the answer's meta.
    partial = isinstance(found, SearchResult) and found.partial_index
    return SearchResult(add_hits(hits[:top_k], extra_hits or [], floor), partial_index=partial)


def embedding_eta(source: EvidenceSource) -> float | None:
    """Seconds until every project is embedded, when the source reports it (the engine does)."""
    eta = getattr(source, "embedding_eta_s", None)
    return eta() if callable(eta) else None


def min_score(params: SearchParams) -> float:
    return params.min_score if params.min_score is not None else 0.0


def cap_per_project(hits: list[SearchHit], cap: int) -> list[SearchHit]:
    """At most `cap` hits per project, keeping the order."""
    per: dict[str, int] = {}
    kept = []
    for h in hits:
        if per.get(h.project, 0) < cap:
            per[h.project] = per.get(h.project, 0) + 1
            kept.append(h)
    return kept


def add_hits(hits: list[SearchHit], extra: list[SearchHit], floor: float) -> list[SearchHit]:
    """`hits` plus the extra ones above `floor` whose range is new, up to MAX_TOP_K in all."""
    out = list(hits)
    seen = {(h.project, h.path, h.start_line, h.end_line) for h in out}
    for h in extra:
        key = (h.project, h.path, h.start_line, h.end_line)
        if key not in seen and h.score >= floor and len(out) < MAX_TOP_K:
            seen.add(key)
            out.append(h)
    return out
