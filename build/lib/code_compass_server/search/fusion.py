"""Hybrid fusion: merge the lexical and semantic candidates, score them, keep the list diverse.

Unweighted rank fusion lost to dense retrieval alone on this project's data
(../shared/notes/offline-dependencies.md), so fusion is a weighted model: both channels' signals
(cosine, BM25 strength, ranks) and the code-specific ones (symbol/path words, file category,
chunk granularity) go into one logistic score fitted on a dev set (calibration.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from code_compass_server.constants import SEARCH_DEDUP_OVERLAP, SEARCH_MAX_HITS_PER_FILE
from code_compass_server.search.calibration import score_candidates
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.gate import QuestionTerms
from code_compass_server.search.signals import query_info


def merge(lex: Iterable[Candidate], sem: Iterable[Candidate]) -> list[Candidate]:
    """One candidate per chunk, carrying both channels' raw signals."""
    by_id: dict[tuple[str, str], Candidate] = {}
    for c in lex:
        by_id[(c.project, c.row.id)] = Candidate(
            row=c.row, project=c.project, bm25=c.bm25, lexical_rank=c.lexical_rank
        )
    for c in sem:
        key = (c.project, c.row.id)
        have = by_id.get(key)
        if have is None:
            by_id[key] = Candidate(
                row=c.row, project=c.project, cosine=c.cosine, semantic_rank=c.semantic_rank
            )
        else:
            have.cosine, have.semantic_rank = c.cosine, c.semantic_rank
    return list(by_id.values())


def fuse(
    query: str,
    lex: list[Candidate],
    sem: list[Candidate],
    terms: QuestionTerms | None = None,
    mode: str = "hybrid",
) -> list[Candidate]:
    """Merged candidates of one project, calibrated score, best first, de-duplicated.

    `mode` is the model that scores them: "partial" while the project is only partly embedded
    (the hybrid model was fitted on complete vectors; the embedded part still adds candidates)."""
    scored = score_candidates(merge(lex, sem), query_info(query), mode, terms)
    return diversify(scored)


def _overlap(a: Candidate, b: Candidate) -> float:
    lo = max(a.row.start_line, b.row.start_line)
    hi = min(a.row.end_line, b.row.end_line)
    if hi < lo:
        return 0.0
    shorter = min(a.row.end_line - a.row.start_line, b.row.end_line - b.row.start_line) + 1
    return (hi - lo + 1) / shorter


def diversify(
    ranked: Iterable[Candidate],
    per_file: int = SEARCH_MAX_HITS_PER_FILE,
    overlap: float = SEARCH_DEDUP_OVERLAP,
) -> list[Candidate]:
    """Drop a candidate that mostly repeats a better one's lines, and cap hits per file.

    `ranked` must be best first: the better of two overlapping chunks is the one kept.
    """
    kept: list[Candidate] = []
    by_file: dict[tuple[str, str], list[Candidate]] = {}
    for c in ranked:
        same = by_file.setdefault((c.project, c.row.path), [])
        if len(same) >= per_file or any(_overlap(c, k) >= overlap for k in same):
            continue
        same.append(c)
        kept.append(c)
    return kept
