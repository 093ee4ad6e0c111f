"""Gitignore globs matched without backtracking: the cost is bounded by pattern × path.

Python's `re` backtracks, so `*a*a*a*a*a*a*a*ab` against a long name of `a`s takes
exponential time inside one C call that neither SIGINT nor other threads can interrupt.
Here a glob segment is split at its `*`s into fixed-length pieces; each piece is found
leftmost with `str.find` (literals) or a quantifier-free regex (`?`, classes), which is
correct for star patterns and costs O(len(piece) × len(name)) at worst. Path segments and
`**` are matched the same way one level up (a run of plain segments has a fixed length in
components), so one pattern against one path is O(pattern × path) in the worst case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One piece of a segment between stars: a plain string, or a quantifier-free regex of
# fixed width when it holds `?` or a class.
_Piece = str | re.Pattern[str]


@dataclass(frozen=True, slots=True)
class SegmentGlob:
    """One path component's glob: pieces that must appear in order, split by `*`."""

    pieces: tuple[_Piece, ...]
    widths: tuple[int, ...]
    lead_star: bool
    trail_star: bool

    def matches(self, name: str) -> bool:
        pieces, widths = self.pieces, self.widths
        n = len(name)
        if not self.lead_star and not self.trail_star and len(pieces) == 1:
            return widths[0] == n and _at(pieces[0], name, 0)
        lo, hi = 0, n
        first = 0
        last = len(pieces)
        if not self.lead_star:
            if not _at(pieces[0], name, 0):
                return False
            lo = widths[0]
            first = 1
        if not self.trail_star:
            if last <= first:  # the single piece was anchored at the start already
                return lo == n
            start = n - widths[-1]
            if start < lo or not _at(pieces[-1], name, start):
                return False
            hi = start
            last -= 1
        for i in range(first, last):
            found = _find(pieces[i], name, lo, hi)
            if found < 0:
                return False
            lo = found + widths[i]
        return lo <= hi


def _at(piece: _Piece, name: str, pos: int) -> bool:
    if isinstance(piece, str):
        return name.startswith(piece, pos)
    return piece.match(name, pos) is not None


def _find(piece: _Piece, name: str, lo: int, hi: int) -> int:
    """Leftmost start of `piece` inside name[lo:hi], or -1."""
    if isinstance(piece, str):
        return name.find(piece, lo, hi)
    found = piece.search(name, lo, hi)
    return -1 if found is None else found.start()


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A pattern's runs of plain segments, separated by `**` (any number of components)."""

    runs: tuple[tuple[SegmentGlob, ...], ...]
    # Trailing "/**": matches inside the directory, not the directory itself.
    needs_more: bool

    def matches(self, parts: list[str], start: int, end: int) -> bool:
        """Do parts[start:end] match the whole pattern?"""
        runs = self.runs
        if len(runs) == 1:
            return end - start == len(runs[0]) and _run_at(runs[0], parts, start)
        # Each run has a fixed width in components, so its leftmost placement is safe,
        # exactly as for the pieces inside a segment.
        lo, hi = start, end
        head, tail = runs[0], runs[-1]
        if lo + len(head) > hi or not _run_at(head, parts, lo):
            return False
        lo += len(head)
        tail_start = hi - len(tail)
        if tail_start < lo or not _run_at(tail, parts, tail_start):
            return False
        hi = tail_start
        for run in runs[1:-1]:
            pos = lo
            while pos + len(run) <= hi and not _run_at(run, parts, pos):
                pos += 1
            if pos + len(run) > hi:
                return False
            lo = pos + len(run)
        return lo < hi if self.needs_more else True


def _run_at(run: tuple[SegmentGlob, ...], parts: list[str], pos: int) -> bool:
    if pos + len(run) > len(parts):
        return False
    return all(seg.matches(parts[pos + i]) for i, seg in enumerate(run))


ANY_DEPTH = "**"  # a segment matching zero or more whole components


def compile_segment(text: str) -> SegmentGlob:
    """A glob without "/" (backslash escapes, `*`, `?`, `[...]`) as a SegmentGlob."""
    pieces: list[_Piece] = []
    widths: list[int] = []
    atoms: list[str] = []  # regex atoms of the current piece
    plain: list[str] = []  # the same piece as a literal, while it has no wildcard
    literal = True
    i, n = 0, len(text)
    lead_star = text.startswith("*")
    trail_star = False

    def close() -> None:
        nonlocal atoms, plain, literal
        if atoms:
            pieces.append("".join(plain) if literal else re.compile("".join(atoms)))
            widths.append(len(atoms))
        atoms, plain, literal = [], [], True

    while i < n:
        ch = text[i]
        if ch == "*":
            close()
            while i < n and text[i] == "*":
                i += 1
            trail_star = i == n
            continue
        if ch == "?":
            atoms.append("[^/]")
            literal = False
        elif ch == "[":
            cls, i_next = _class(text, i)
            if cls is None:
                atoms.append(re.escape("["))
                plain.append("[")
            else:
                atoms.append(cls)
                literal = False
                i = i_next
                continue
        else:
            if ch == "\\" and i + 1 < n:
                i += 1
                ch = text[i]
            atoms.append(re.escape(ch))
            plain.append(ch)
        i += 1
    close()
    if not pieces:
        # "*" alone (any non-empty name) or an empty segment.
        return SegmentGlob((), (), lead_star=True, trail_star=True)
    return SegmentGlob(tuple(pieces), tuple(widths), lead_star, trail_star)


def _class(text: str, i: int) -> tuple[str | None, int]:
    """The `[...]` at text[i] as a regex class (never matching "/"), and the index after it."""
    j = i + 1
    negate = j < len(text) and text[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    if j < len(text) and text[j] == "]":
        body.append(re.escape("]"))
        j += 1
    while j < len(text) and text[j] != "]":
        ch = text[j]
        if ch == "\\" and j + 1 < len(text):
            j += 1
            body.append(re.escape(text[j]))
        elif ch == "-" and body and j + 1 < len(text) and text[j + 1] != "]":
            body.append("-")
        else:
            body.append(re.escape(ch))
        j += 1
    if j >= len(text):
        return None, i  # unterminated: a literal "["
    inner = "".join(body)
    cls = f"[^/{inner}]" if negate else f"(?!/)[{inner}]"
    return cls, j + 1


def compile_path(segment_texts: list[str]) -> PathGlob:
    """Segments of an anchored pattern (split at "/") as a PathGlob."""
    needs_more = len(segment_texts) > 1 and segment_texts[-1] == ANY_DEPTH
    runs: list[tuple[SegmentGlob, ...]] = [()]
    for text in segment_texts:
        if text == ANY_DEPTH:
            if runs[-1] or len(runs) == 1:
                runs.append(())
        else:
            runs[-1] = (*runs[-1], compile_segment(text))
    return PathGlob(tuple(runs), needs_more)
