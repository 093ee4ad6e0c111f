"""Selection-aware asks: the selected code as evidence and as words to search with.

"What does this code do?" says nothing a search can use; the selection does. Its terms are
the symbol it belongs to (the nearest definition at or above its first line), the functions
it calls and the other names it uses, most telling first. The selected lines themselves are
evidence in their own right, exactly the lines selected (the user is pointing at them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from code_compass_server.answer.request import Selection
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.index.textio import split_lines
from code_compass_server.records import SearchHit
from code_compass_server.validation import ALL_PROJECTS

SELECTION_TERMS = 8  # names of the selection added to the query
_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub\s+)?(?:async\s+)?"
    r"(?:def|class|function|func|fn|interface|struct|impl)\s+([A-Za-z_$][\w$]*)"
)
_CALL = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)\s*\(")
_IDENT = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]{2,})")
_KEYWORD_TEXT = """if elif else for while return def class import from as with try except
    finally raise
    and or not in is None True False self cls lambda yield await async pass break continue
    function const let var new this typeof instanceof export default switch case null
    undefined true false print len str int dict list set tuple isinstance super fn pub impl
    struct func package type interface"""
_KEYWORDS = frozenset(_KEYWORD_TEXT.split())


@dataclass(frozen=True, slots=True)
class SelectionContext:
    """The selection as the ask uses it: where it is, its terms, and the evidence hit."""

    text: str
    path: str | None
    start_line: int | None
    end_line: int | None
    symbol: str  # the definition it belongs to, "" when none was found
    terms: tuple[str, ...]
    hit: SearchHit | None

    @property
    def where(self) -> str | None:
        if self.path and self.start_line is not None:
            return f"{self.path}:{self.start_line}-{self.end_line}"
        return None

    def to_json(self) -> dict[str, Any]:
        """The answer's `selection`: what was asked about (docs/protocol.md)."""
        out: dict[str, Any] = {"path": self.path, "startLine": self.start_line}
        out.update(endLine=self.end_line, symbol=self.symbol or None, terms=list(self.terms))
        return out


def selection_terms(text: str, symbol: str = "") -> tuple[str, ...]:
    """The enclosing symbol, then what the selection calls, then the names it uses (by count)."""
    calls = [m.group(1) for m in _CALL.finditer(text)]
    names = [m.group(1) for m in _IDENT.finditer(text)]
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    by_count = sorted(dict.fromkeys(names), key=lambda n: -counts[n])
    ordered = [symbol, *calls, *by_count]
    out = [t for t in dict.fromkeys(ordered) if t and t not in _KEYWORDS]
    return tuple(out[:SELECTION_TERMS])


def enclosing_symbol(lines: list[str], first: int) -> str:
    """Name of the nearest definition at or above line `first` (1-based) whose indentation is
    not deeper than that line's: the function or class the selection belongs to."""
    if not 1 <= first <= len(lines):
        return ""
    at = lines[first - 1]
    depth = len(at) - len(at.lstrip())
    for n in range(first - 1, -1, -1):
        line = lines[n]
        m = _DEF.match(line)
        if m and (len(line) - len(line.lstrip()) <= depth or n == first - 1):
            return m.group(1)
    return ""


def selection_context(
    selection: Selection | None,
    active_file: str | None,
    source: EvidenceSource,
    project: str | None,
) -> SelectionContext | None:
    if selection is None:
        return None
    if not (selection.is_range and active_file):
        terms = selection_terms(selection.text)
        return SelectionContext(selection.text, active_file, None, None, "", terms, None)
    first, last = int(selection.start_line or 1), int(selection.end_line or 1)
    names = [project] if project not in (None, ALL_PROJECTS) else source.projects()
    for name in names:
        current = source.read_text(str(name), active_file)
        if current is None:
            continue
        lines = split_lines(current)
        chosen = lines[first - 1 : last]
        if not chosen:
            break
        symbol = enclosing_symbol(lines, first)
        whole = "\n".join(chosen)
        hit = SearchHit(
            path=active_file, start_line=first, end_line=first + len(chosen) - 1, score=1.0,
            symbol=symbol or "selection", kind="selection", language="", project=str(name),
            snippet=whole, text=whole,
        )  # fmt: skip
        terms = selection_terms(whole, symbol)
        return SelectionContext(whole, active_file, first, hit.end_line, symbol, terms, hit)
    terms = selection_terms(selection.text)
    return SelectionContext(selection.text, active_file, first, last, "", terms, None)
