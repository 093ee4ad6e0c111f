"""Every read the front doors and the answer pipeline make of the index: search, symbols,
mentions and their counts, names close to a query's words. Reads only the last commit."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from code_compass_server.index.categories import CODE_CATEGORIES, DOC_CATEGORIES
from code_compass_server.index.registry import ProjectRegistry
from code_compass_server.records import SearchHit, SearchParams, SearchResult, SymbolDef
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.fusion import fuse
from code_compass_server.search.searcher import SemanticFn, search_projects, to_hit

_QUERY_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
NEARBY_PER_WORD = 3
NEARBY_CUTOFF = 0.75


class SearchService:
    def __init__(
        self, projects: ProjectRegistry, semantic: Callable[[], SemanticFn | None]
    ) -> None:
        self._projects = projects
        # The semantic channel as of now: None while embeddings are off or not loaded.
        self.semantic = semantic

    def search(self, params: SearchParams) -> SearchResult:
        return search_projects(
            self._projects.scope(params.project), params, semantic=self.semantic(), fuse=fuse
        )

    # --- symbols (hover, code lens, the answer's existence check) ---
    def symbols_named(self, name: str, project: str | None = None) -> list[SymbolDef]:
        return [s for p in self._projects.scope(project) for s in p.catalog.symbols_named(name)]

    def symbols_in_file(self, project: str, rel_path: str) -> list[SymbolDef]:
        return self._projects.get(project).catalog.symbols_in_file(rel_path)

    def symbol_exists(self, name: str) -> bool:
        """Defined, or at least written somewhere in the index (constants, fields, config keys
        are not symbol-table entries): the answer's blocking rule is "exists nowhere"."""
        scope = self._projects.scope(None)
        return any(p.catalog.symbols_named(name) for p in scope) or any(
            p.lexical.count(name) > 0 for p in scope
        )

    def mentions(self, name: str, project: str | None, limit: int) -> list[SearchHit]:
        """Passages that mention an identifier: documents first, then code."""
        hits: list[SearchHit] = []
        for cats in (DOC_CATEGORIES, CODE_CATEGORIES):
            for p in self._projects.scope(project):
                found = p.lexical.term_hits(name, limit, categories=cats)
                rows = p.catalog.chunks_by_ids(h.chunk_id for h in found)
                for h in found:
                    row = rows.get(h.chunk_id)
                    if row is not None:
                        hits.append(to_hit(Candidate(row=row, project=p.name, bm25=h.bm25)))
        return hits

    def count_mentions(self, name: str, project: str | None) -> tuple[int, int]:
        """(passages in documents, passages in code) that mention the identifier."""
        scope = self._projects.scope(project)
        docs = sum(p.lexical.count(name, categories=DOC_CATEGORIES) for p in scope)
        code = sum(p.lexical.count(name, categories=CODE_CATEGORIES) for p in scope)
        return docs, code

    def languages(self, project: str | None) -> list[str]:
        """The languages indexed in a project (or all), sorted."""
        return sorted(
            {lang for p in self._projects.scope(project) for lang in p.catalog.languages()}
        )

    def nearby_terms(self, query: str, limit: int) -> list[str]:
        """Symbol names close to the query's words (spelling, prefixes), for suggestions."""
        names: set[str] = set()
        for p in self._projects.scope(None):
            names.update(p.catalog.all_symbol_names())
        pool = sorted(names)
        out: list[str] = []
        for word in _QUERY_WORD.findall(query):
            for m in difflib.get_close_matches(word, pool, n=NEARBY_PER_WORD, cutoff=NEARBY_CUTOFF):
                if m not in out and m != word:
                    out.append(m)
        return out[:limit]
