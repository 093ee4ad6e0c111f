"""Search over one or several projects: lexical, semantic or hybrid, with calibrated scores.

Isolation: a query names its projects; each project has its own stores, so another project's
chunks can't appear. Searching all projects caps hits per project (docs/rules.md: per-project-cap).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from code_compass_server.constants import (
    BM25_REFERENCE_DOCS,
    MAX_PER_PROJECT_ALL_SCOPE,
    SEARCH_CANDIDATE_POOL,
    SEARCH_NOTHING_BELOW,
    SEARCH_NOTHING_COVERAGE,
)
from code_compass_server.index.project import Project
from code_compass_server.query import build_query, fit_to_index, looks_portuguese
from code_compass_server.query.lexicon import fold
from code_compass_server.records import RetrievalQuery, SearchHit, SearchParams, SearchResult
from code_compass_server.search.calibration import PARTIAL, calibrate_first
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.fusion import diversify
from code_compass_server.search.fusion import fuse as fuse_hybrid
from code_compass_server.search.gate import (
    QuestionTerms,
    TermCounter,
    present_coverage,
    question_terms,
    with_names_from,
)
from code_compass_server.search.lexical_score import score_lexical
from code_compass_server.search.names import definitions, place, query_names
from code_compass_server.search.semantic import score_semantic
from code_compass_server.search.snippets import make_snippet

SemanticFn = Callable[[Project, SearchParams, int], list[Candidate]]
FuseFn = Callable[[str, list[Candidate], list[Candidate]], list[Candidate]]


def lexical_candidates(project: Project, params: SearchParams, limit: int) -> list[Candidate]:
    """Up to `limit` chunks by BM25, best first, not scored yet (see `search_projects`)."""
    hits = project.lexical.search(
        params.query, limit, path_prefix=params.path_prefix, language=params.language
    )
    rows = project.catalog.chunks_by_ids(h.chunk_id for h in hits)
    scale = bm25_scale(project.lexical.num_docs()) if hits else 1.0
    out: list[Candidate] = []
    for rank, h in enumerate(hits):
        row = rows.get(h.chunk_id)
        if row is None:  # committed in Tantivy, not yet in the catalog (mid-batch): skip
            continue
        bm25 = h.bm25 * scale
        out.append(Candidate(row=row, project=project.name, bm25=bm25, lexical_rank=rank))
    return out


def _max_idf(n_docs: int) -> float:
    """BM25's IDF of a term found in one chunk of an index of n_docs chunks."""
    return math.log(1.0 + (max(n_docs, 1) - 0.5) / 1.5)


def bm25_scale(n_docs: int) -> float:
    """Rescale BM25 to the corpus size the calibration was fitted on.

    IDF grows with the log of the index size, so the same perfect match scores ~5x lower BM25
    in a 10-chunk workspace than in a 3,000-chunk one, and would fall below minScore. Dividing
    by the largest possible IDF here and multiplying by the fitted corpora's makes BM25
    strength mean the same in any workspace (the dev corpora's own factors stay ~0.9-1.1)."""
    return _max_idf(BM25_REFERENCE_DOCS) / _max_idf(n_docs)


def to_hit(c: Candidate) -> SearchHit:
    r = c.row
    return SearchHit(
        path=r.path,
        start_line=r.start_line,
        end_line=r.end_line,
        score=c.score,
        symbol=r.symbol,
        kind=r.kind,
        language=r.language,
        project=c.project,
        snippet=make_snippet(r.text),
        chunk_id=r.id,
        text=r.text,
        signals={k: round(v, 4) for k, v in c.features.items()},
        relevance=c.relevance,
    )


def retrieval_query(params: SearchParams) -> RetrievalQuery:
    """The query the channels search with: the caller's rewrite when it is of this very
    query (the ask pipeline's LLM rewrite), else the offline query builder's."""
    given = params.rewrite
    if given is not None and given.original == params.query:
        return given
    return build_query(params.query)


_PLAIN_WORD = re.compile(r"[a-z]+")


def scored_text(query: RetrievalQuery, index: TermCounter) -> str:
    """The text the score's word signals and the gate read: the rendering, less the words of a
    translated question that stayed as asked (no lexicon entry), look Portuguese and that no
    chunk of this index holds. Such a word ("tramela", "ferrolho") is Portuguese the lexicon
    lacks, not a feature the workspace lacks: counted, it made the gate refuse answerable
    Portuguese questions. An English word kept as asked ("websocket", "backoff", "pool") is
    read as in an English question: absent from the index, it is the feature the workspace
    lacks. Identifiers and words the index has (names, loanwords: "flask", "cookie") stay."""
    if query.rewritten == query.original:  # English, or not rewritten
        return query.rewritten
    asked = {fold(w) for w in re.findall(r"\w+", query.original)}
    kept = [
        w
        for w in query.rewritten.split()
        if not (
            _PLAIN_WORD.fullmatch(w)
            and fold(w) in asked
            and looks_portuguese(w)
            and index.word_count(w) == 0
        )
    ]
    return " ".join(kept) or query.rewritten


def project_query(project: Project, params: SearchParams) -> tuple[RetrievalQuery, str]:
    """The query one project is searched with (the rendering fitted to its index: a
    non-English question's cognates) and the text the score's word signals read. The fitting
    scripts build their pools through this very function: a Portuguese question's pool built
    from the unfitted rendering was not the list `search` scores."""
    query = fit_to_index(retrieval_query(params), project.lexical)
    return query, scored_text(query, project.lexical)


def partly_embedded(project: Project) -> bool:
    """Some chunk of the project has no vector yet (the first minutes of a new workspace)."""
    counts = project.catalog.counts()
    return counts.get("embedded", 0) < counts.get("chunks", 0)


def project_candidates(
    project: Project,
    params: SearchParams,
    semantic: SemanticFn | None,
    hybrid: bool,
    elsewhere: Sequence[Project] = (),
) -> tuple[list[Candidate], bool, QuestionTerms]:
    """One project's scored candidates, best first, de-duplicated; whether its vectors were
    incomplete; the question's terms in its index. A non-English question is searched as the
    query builder renders it for this project's index (its cognates): BM25 over `lexical`, the
    embedding and the score's word signals over `rewritten`."""
    query, text = project_query(project, params)
    lex_params = replace(params, query=query.lexical, rewrite=None)
    sem_params = replace(params, query=query.rewritten, rewrite=None)
    mode = params.mode
    # A named identifier "exists nowhere" only if no project searched has it.
    terms = with_names_from(question_terms(text, project.lexical), [p.lexical for p in elsewhere])
    lex = (
        lexical_candidates(project, lex_params, SEARCH_CANDIDATE_POOL) if mode != "semantic" else []
    )
    sem = (
        semantic(project, sem_params, SEARCH_CANDIDATE_POOL)
        if semantic and mode != "lexical"
        else []
    )
    partial = semantic is not None and mode != "lexical" and partly_embedded(project)
    # Each candidate is scored once, by the model of the mode that answers. With vectors
    # missing, the hybrid model (fitted on complete vectors) would read a missing cosine as
    # "no semantic match": the lexical calibration (its partial-index cut) scores the lexical
    # and embedded-part candidates, with or without any vector yet.
    if mode == "hybrid" and partial:
        model, cands = PARTIAL, fuse_hybrid(text, lex, sem, terms, PARTIAL)
    elif mode == "lexical" or (mode == "hybrid" and (not sem or not hybrid)):
        model, cands = "lexical", score_lexical(lex, text, terms)
    elif mode == "semantic":
        model, cands = "semantic", score_semantic(sem, text, terms)
    else:
        model, cands = "hybrid", fuse_hybrid(text, lex, sem, terms, "hybrid")
    names = query_names(params.query, query.rewritten)
    if names.refs or names.words:  # named definitions: flagged, first for a navigation question
        cands = place(cands, definitions(project, names, params), names.navigation)
    shown = diversify(cands)
    calibrate_first(shown, model)  # the first hit's relevance, on its own population
    return shown, partial, terms


def nothing_relevant(ranked: list[Candidate], terms: QuestionTerms) -> bool:
    """The best hit is ~0 and the top hits do not even hold the question's words that exist
    in this index (a listing query of words spread over the workspace is still shown)."""
    if ranked[0].score >= SEARCH_NOTHING_BELOW:
        return False
    return present_coverage(terms, ranked) < SEARCH_NOTHING_COVERAGE


def nothing_reason(params: SearchParams) -> str:
    what = params.query if len(params.query) <= 80 else params.query[:77] + "..."
    if params.min_score is not None:
        floor = f"{params.min_score:g}"
        return f"nothing in this workspace matches \u201c{what}\u201d with a score >= {floor}"
    return f"nothing in this workspace matches \u201c{what}\u201d"


def search_projects(
    projects: Sequence[Project],
    params: SearchParams,
    *,
    semantic: SemanticFn | None = None,
    fuse: FuseFn | None = None,
) -> SearchResult:
    """Best hits of `projects` for `params`, calibrated, at most top_k; empty with a reason
    when nothing relevant is found (no rows at 0.00). `fuse` given means hybrid scoring is
    available (the engine passes fusion.fuse; the project's question terms are added here)."""
    per_project: list[list[Candidate]] = []
    partial = False
    answerable: float | None = None
    for project in projects:
        if project.read_only:  # another process writes: see its latest commit
            project.lexical.reload()
            project.catalog.invalidate_counts()
        others = [p for p in projects if p is not project]
        cands, part, terms = project_candidates(project, params, semantic, fuse is not None, others)
        partial = partial or part
        if cands:
            best = cands[0].features.get("answerable")
            if best is not None and (answerable is None or best > answerable):
                answerable = best
        if not cands or nothing_relevant(cands, terms):
            cands = []
        if params.min_score is not None:
            cands = [c for c in cands if c.score >= params.min_score]
        if len(projects) > 1:
            cands = cands[:MAX_PER_PROJECT_ALL_SCOPE]
        per_project.append(cands)
    merged = sorted((c for cs in per_project for c in cs), key=lambda c: c.score, reverse=True)
    hits = [to_hit(c) for c in merged[: params.top_k]]
    return SearchResult(
        hits,
        reason="" if hits else nothing_reason(params),
        partial_index=partial,
        answerable=answerable,
    )
