"""Evidence counts for code-lens titles.

`Engine.count_mentions` is the source of truth. Tantivy 0.27's Python binding panics on a
search with limit 0 (`Limit must be greater than 0`), which `LexicalIndex.count` used at
the time of writing; until that is fixed there, the same count is taken with limit 1
(the count does not depend on the limit). Remove the fallback once the engine's count works.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from code_compass.engine import Engine

log = logging.getLogger(__name__)


def count_mentions(engine: Engine, name: str, project: str | None) -> tuple[int, int]:
    """(doc passages, code passages) that mention `name`."""
    try:
        return engine.count_mentions(name, project)
    except BaseException as exc:  # pyo3 PanicException is a BaseException
        if "Limit must be greater than 0" not in str(exc):
            raise
    return _count_with_limit_one(engine, name, project)


def _count_with_limit_one(engine: Engine, name: str, project: str | None) -> tuple[int, int]:
    import tantivy

    from code_compass import engine as engine_module

    def count(lexical: Any, categories: tuple[str, ...]) -> int:
        q = tantivy.Query.term_query(lexical.schema, "body", name.lower())
        query = lexical._filtered(q, None, None, categories)
        return int(lexical.index.searcher().search(query, 1, count=True).count or 0)

    scope = engine._scope(project)
    docs = sum(count(p.lexical, engine_module.DOC_CATEGORIES) for p in scope)
    code = sum(count(p.lexical, engine_module.CODE_CATEGORIES) for p in scope)
    return docs, code
