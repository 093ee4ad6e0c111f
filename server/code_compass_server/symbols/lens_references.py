"""A code lens's references: the name's mentions in documents, and its code tokens sorted by
the resolver into usages (they resolve to the lens's definitions) and tokens matched by name
only. The LSP code lens (lsp/features/codelens.py) shows and lists them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.constants import (
    LENS_MAX_LOCATIONS,
    LENS_RESOLVE_BUDGET_S,
    LENS_SCAN_CHUNKS,
)
from code_compass_server.index.languages import CODE_LANGUAGES, DOC_LANGUAGES, language_for
from code_compass_server.records import SearchHit, SymbolDef
from code_compass_server.symbols.code_names import code_columns_in
from code_compass_server.symbols.lens_usages import Buffers, UsageResolver, same_family
from code_compass_server.symbols.mentions import (
    Mention,
    MentionSource,
    Subject,
    TextCache,
    chunk_mentions,
    locate_all,
    name_pattern,
)


@dataclass(frozen=True, slots=True)
class LensReferences:
    docs: list[Mention]
    usages: list[Mention]  # resolve to the lens's definition
    by_name: list[Mention]  # code tokens of the name whose resolution failed
    capped: bool  # the passage scan hit LENS_SCAN_CHUNKS: the numbers are lower bounds


def lens_references(
    engine: MentionSource,
    project: str,
    root: Path | None,
    resolver: UsageResolver,
    subject: Subject,
    group: list[SymbolDef],
    buffers: Buffers = lambda rel: None,
    then: Callable[[], None] = lambda: None,
) -> LensReferences:
    """Doc references, usages (tokens that resolve to one of `group`, the definitions that
    share the lens) and tokens only matched by name: every one counted is listed. What the
    budget left is resolved in the background, then `then` is called.

    Code tokens are found in the passages' indexed text (kept in step with disk by the
    watcher), or in the editor's buffer for an open file: no file is read for them."""
    started = time.perf_counter()
    defs = engine.symbols_named(subject.name, project)
    def_lines = {(d.path, d.name_line) for d in defs}
    cache = TextCache(engine, project)
    docs: list[Mention] = []
    hits = engine.mentions(subject.name, project, LENS_SCAN_CHUNKS)
    n_doc_hits = sum(1 for h in hits if h.language in DOC_LANGUAGES)
    capped = n_doc_hits >= LENS_SCAN_CHUNKS or len(hits) - n_doc_hits >= LENS_SCAN_CHUNKS
    def_language = group[0].language if group else ""
    seen: set[tuple[str, int]] = set()
    candidates: dict[str, set[tuple[int, int]]] = {}
    open_columns: dict[str, dict[int, list[int]]] = {}
    quiet: set[tuple[str, int, int]] = set()
    for hit in hits:
        if hit.language in CODE_LANGUAGES:
            if not same_family(def_language, hit.language):
                continue  # a Python function is not used from a Go file
            tokens = candidates.setdefault(hit.path, set())
            code, unsure = _code_tokens(hit, subject.name, buffers, cache, open_columns)
            for line, col in code + unsure:
                if (hit.path, line) not in def_lines:
                    tokens.add((line, col))
            quiet.update((hit.path, line, col) for line, col in unsure)
            continue
        if hit.language not in DOC_LANGUAGES:
            continue  # `run:` in a CI config or `flask run` in a script uses no symbol
        # The locations the peek lists are re-read now (evidence at the line that mentions
        # the symbol today); past them, the indexed passage text is enough to count.
        found = chunk_mentions(hit, subject) if len(docs) >= LENS_MAX_LOCATIONS else None
        for m in found if found is not None else locate_all(hit, subject, cache):
            if (m.path, m.line) not in seen:
                seen.add((m.path, m.line))
                docs.append(m)
    ordered = {p: sorted(ps) for p, ps in sorted(candidates.items()) if ps}
    if root is None or not ordered:
        listed = [(p, *t) for p, ps in ordered.items() for t in ps if (p, *t) not in quiet]
        return LensReferences(docs, [], _mentions(listed), capped)
    wanted = frozenset((d.path, d.name_line) for d in group)
    # The budget is the request's, not the resolver's alone: a common name's passages can take
    # most of it to find, and what resolution cannot reach now is counted by name meanwhile.
    budget = max(0.0, LENS_RESOLVE_BUDGET_S - (time.perf_counter() - started))
    usages, left = resolver.classify(root, wanted, ordered, buffers, budget, frozenset(quiet))
    if left:
        resolver.finish_later((project, subject.name, wanted), root, left, then)
    return LensReferences(
        docs,
        _mentions([(t.path, t.line, t.column) for t in usages.resolved]),
        _mentions([(t.path, t.line, t.column) for t in usages.by_name]),
        capped,
    )


def _code_tokens(
    hit: SearchHit,
    name: str,
    buffers: Buffers,
    cache: TextCache,
    open_columns: dict[str, dict[int, list[int]]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(code, unsure): (1-based line, column) of the name's identifier tokens in a code
    passage. From an open buffer (or a re-read file) every token is sure. From the passage's
    own text, a token that looks like a string or comment is unsure: a passage may begin
    inside a docstring, which turns its quotes inside out; the resolver decides those."""
    if hit.path not in open_columns:
        buffer = buffers(hit.path)
        if buffer is not None:
            open_columns[hit.path] = code_columns_in(buffer, hit.language, name)
        elif not hit.text:
            open_columns[hit.path] = cache.code_columns(hit.path, hit.language, name)
    columns = open_columns.get(hit.path)
    if columns is not None:
        lines = range(max(1, hit.start_line), hit.end_line + 1)
        return [(n, col) for n in lines for col in columns.get(n, ())], []
    code = {
        (hit.start_line + n - 1, col)
        for n, cols in code_columns_in(hit.text, hit.language, name).items()
        for col in cols
    }
    pattern = name_pattern(name)
    every = [
        (hit.start_line + i, m.start())
        for i, line in enumerate(hit.text.split("\n"))
        if name in line
        for m in pattern.finditer(line)
    ]
    return sorted(code), [t for t in every if t not in code]


def _mentions(tokens: list[tuple[str, int, int]]) -> list[Mention]:
    """Code tokens as the peek lists them (no snippet: the peek shows the line itself)."""
    return [Mention(p, ln, c, "", False, language_for(p) or "text") for p, ln, c in tokens]
