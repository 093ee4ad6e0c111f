"""What the pipeline needs from the index (implemented by `code_compass_server.engine.Engine`)."""

from __future__ import annotations

from typing import Protocol

from code_compass_server.records import SearchHit, SearchParams


class EvidenceSource(Protocol):
    def search(self, params: SearchParams) -> list[SearchHit]:
        """Hybrid search; calibrated scores in [0, 1], best first, limited to the scope."""
        ...

    def read_text(self, project: str, path: str) -> str | None:
        """Current text: the unsaved editor buffer if open, else disk; None if gone."""
        ...

    def symbol_exists(self, name: str) -> bool:
        """Whether `name` is in the symbol table of any searched project."""
        ...

    def nearby_terms(self, query: str, limit: int) -> list[str]:
        """Symbol names / paths similar to the query's words (for suggestions)."""
        ...

    def projects(self) -> list[str]: ...

    def index_unfinished(self) -> bool:
        """Some project is being indexed now (suggestions say "wait for indexing" only then)."""
        ...
