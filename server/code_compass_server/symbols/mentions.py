"""Mentions of a name for hover evidence and lens counts, re-read from the buffer or disk.

A mention is shown at the line that really contains the name *now*: the chunk's lines are
re-read through `Engine.read_text` (unsaved buffer first, then disk), and a passage that
no longer contains the name is dropped rather than shown stale (DESIGN ground rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from code_compass_server.constants import HOVER_SNIPPET_CHARS
from code_compass_server.index.languages import DOC_LANGUAGES, PAGED_LANGUAGES
from code_compass_server.records import FileText, SearchHit, SymbolDef
from code_compass_server.symbols.code_names import code_columns_in, doc_column


class NameIndex(Protocol):
    """The engine's look-ups by name: the symbol table and the lexical index's passages that
    mention a name (what mentions and navigation both read)."""

    def symbols_named(self, name: str, project: str | None = None) -> list[SymbolDef]: ...

    def mentions(self, name: str, project: str | None, limit: int) -> list[SearchHit]: ...


class MentionSource(NameIndex, Protocol):
    """What mentions are read from, the engine: its look-ups by name and current file texts
    (buffer first)."""

    def read_current(self, project: str, rel_path: str) -> FileText | None: ...


@dataclass(frozen=True, slots=True)
class Mention:
    path: str  # workspace-relative
    line: int  # 1-based line of the name (page for PDFs)
    column: int  # 0-based, Python str units, on that line (0 for PDFs)
    snippet: str  # one short line around the name
    is_doc: bool
    language: str


def name_pattern(name: str) -> re.Pattern[str]:
    # Identifier boundaries, not \b: `$` and `_` are part of names.
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def short(line: str, col: int, width: int = HOVER_SNIPPET_CHARS) -> str:
    text = line.rstrip("\r\n")
    if len(text) <= width:
        return text.strip()
    start = max(0, min(col - width // 3, len(text) - width))
    piece = text[start : start + width].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(text) else "")


@dataclass(frozen=True, slots=True)
class Subject:
    """The symbol evidence is about: its name and the names that qualify it in prose."""

    name: str
    qualifiers: tuple[str, ...] = ()  # "Flask" for Flask.run, "flask" for flask.request


class TextCache:
    """Files re-read (and tokenized) at most once per request."""

    def __init__(self, engine: MentionSource, project: str) -> None:
        self._engine = engine
        self._project = project
        self._texts: dict[str, str | None] = {}
        self._buffered: set[str] = set()
        self._lines: dict[str, list[str] | None] = {}
        self._code: dict[tuple[str, str], dict[int, list[int]]] = {}

    def code_columns(self, rel: str, language: str, name: str) -> dict[int, list[int]]:
        key = (rel, name)
        if key not in self._code:
            text = self.text(rel)
            self._code[key] = code_columns_in(text, language, name) if text is not None else {}
        return self._code[key]

    def text(self, rel: str) -> str | None:
        if rel not in self._texts:
            found = self._engine.read_current(self._project, rel)
            self._texts[rel] = found.text if found is not None else None
            if found is not None and found.source == "buffer":
                self._buffered.add(rel)
        return self._texts[rel]

    def buffer(self, rel: str) -> str | None:
        """The file's text when it comes from an open editor buffer; None when from disk."""
        text = self.text(rel)
        return text if rel in self._buffered else None

    def lines(self, rel: str) -> list[str] | None:
        if rel not in self._lines:
            text = self.text(rel)
            self._lines[rel] = text.split("\n") if text is not None else None
        return self._lines[rel]


def is_definition_chunk(hit: SearchHit, defs: list[SymbolDef]) -> bool:
    """The passage that *is* a definition of the name is not evidence about it."""
    return any(d.path == hit.path and hit.start_line <= d.name_line <= hit.end_line for d in defs)


def locate(hit: SearchHit, name: str, cache: TextCache) -> Mention | None:
    """Where in the current text this passage mentions `name`; None if it no longer does."""
    pattern = name_pattern(name)
    is_doc = hit.language in DOC_LANGUAGES
    if hit.language in PAGED_LANGUAGES:
        for text_line in hit.snippet.split("\n"):
            m = pattern.search(text_line)
            if m:
                snippet = short(text_line, m.start())
                return Mention(hit.path, hit.start_line, 0, snippet, True, hit.language)
        return None
    lines = cache.lines(hit.path)
    if lines is None:
        return None
    last = min(hit.end_line, len(lines))
    for n in range(max(1, hit.start_line), last + 1):
        m = pattern.search(lines[n - 1])
        if m:
            snippet = short(lines[n - 1], m.start())
            return Mention(hit.path, n, m.start(), snippet, is_doc, hit.language)
    return None


def locate_all(hit: SearchHit, subject: Subject, cache: TextCache) -> list[Mention]:
    """Every line of this passage that mentions the symbol now: an identifier token in code,
    a backticked, qualified or code-looking mention in prose."""
    name = subject.name
    if hit.language in PAGED_LANGUAGES:
        for text_line in hit.snippet.split("\n"):
            col = doc_column(text_line, name, subject.qualifiers)
            if col is not None:
                return [
                    Mention(hit.path, hit.start_line, 0, short(text_line, col), True, hit.language)
                ]
        return []
    lines = cache.lines(hit.path)
    if lines is None:
        return []
    is_doc = hit.language in DOC_LANGUAGES
    out: list[Mention] = []
    last = min(hit.end_line, len(lines))
    if is_doc:
        for n in range(max(1, hit.start_line), last + 1):
            col = doc_column(lines[n - 1], name, subject.qualifiers)
            if col is not None:
                out.append(Mention(hit.path, n, col, short(lines[n - 1], col), True, hit.language))
        return out
    columns = cache.code_columns(hit.path, hit.language, name)
    for n in range(max(1, hit.start_line), last + 1):
        cols = columns.get(n)
        if cols:
            out.append(
                Mention(hit.path, n, cols[0], short(lines[n - 1], cols[0]), False, hit.language)
            )
    return out


def chunk_mentions(hit: SearchHit, subject: Subject) -> list[Mention] | None:
    """The lines of a passage that mention the symbol, read from its indexed text (which the
    index keeps in step with buffers and disk): for counting past what a list shows. None
    when the hit carries no text (or is a PDF page): re-read it instead."""
    if not hit.text or hit.language in PAGED_LANGUAGES:
        return None
    name = subject.name
    if hit.language in DOC_LANGUAGES:
        out = []
        for i, line in enumerate(hit.text.split("\n")):
            col = doc_column(line, name, subject.qualifiers)
            if col is not None:
                out.append(Mention(hit.path, hit.start_line + i, col, "", True, hit.language))
        return out
    return [
        Mention(hit.path, hit.start_line + n - 1, cols[0], "", False, hit.language)
        for n, cols in sorted(code_columns_in(hit.text, hit.language, name).items())
    ]
