"""`ast.parse` of a large module in pieces, so other threads run between them.

`ast.parse` is one C call: it holds the GIL from the first byte to the last node. A 100 kB
Django module takes 30-45 ms of CPU, and on a loaded 2-core machine (load 10+) the parsing
thread is descheduled meanwhile with the GIL in hand: a background warm-up parse stalled
every request for 200-470 ms (measured with bench_lsp.py --replay). Here the module is parsed
a few kB at a time: top-level statements, and the members of a large class, each group parsed
alone with its own line numbers and columns (blank lines before it, and an `if 1:` line
above an indented group), then put together. The result is the tree `ast.parse` gives
(tests compare both, positions included, on real modules).

A piece cut in the wrong place (a line at the statements' indentation inside a string or
brackets) does not parse alone: it is merged with the next one and parsed again; past a few
such failures, or when a piece cannot be made to parse, the module is parsed whole.
"""

from __future__ import annotations

import ast
import itertools

from code_compass_server.constants import PARSE_PIECE_BYTES

_SPLIT_MIN = 4 * PARSE_PIECE_BYTES  # smaller modules (and classes) are parsed whole
_MAX_MISCUTS = 8  # merges after a failed piece before parsing the rest whole
# A line starting with one of these continues the statement above (never a new one).
_CONTINUES = ("else", "elif", "except", "finally", ")", "]", "}", "#")


def parse_python(text: str) -> ast.Module:
    """The same tree as `ast.parse(text)`, parsed in pieces when the module is large. Raises
    what `ast.parse` raises on a module it cannot parse."""
    if len(text) < _SPLIT_MIN:
        return ast.parse(text)
    lines = text.split("\n")
    starts = _statement_starts(lines, 0, len(lines), "")
    if not starts or not all(not s.strip() or _comment(s) for s in lines[: starts[0]]):
        return ast.parse(text)  # nothing to cut at, or code before the first statement
    body = _parse_groups(lines, _groups(lines, starts, len(lines)), "")
    if body is None:
        return ast.parse(text)
    return ast.Module(body=body, type_ignores=[])


def _statement_starts(lines: list[str], begin: int, end: int, indent: str) -> list[int]:
    """Lines in [begin, end) that may start a statement at exactly `indent`."""
    out: list[int] = []
    width = len(indent)
    for i in range(begin, end):
        line = lines[i]
        if not line.startswith(indent) or len(line) <= width:
            continue
        first = line[width]
        if first in " \t\f\r" or line.startswith(_CONTINUES, width):
            continue
        if out and lines[out[-1]].startswith("@", width) and _only_decorators(lines, out[-1], i):
            continue  # the decorated statement starts at its first decorator
        out.append(i)
    return out


def _only_decorators(lines: list[str], begin: int, end: int) -> bool:
    return all(
        not s or s.startswith(("@", "#")) for s in (lines[j].strip() for j in range(begin, end))
    )


def _groups(lines: list[str], starts: list[int], end: int) -> list[tuple[int, int]]:
    """Consecutive statements grouped into pieces of about PARSE_PIECE_BYTES: (first line,
    end line) pairs covering [starts[0], end)."""
    out: list[tuple[int, int]] = []
    bounds = [*starts, end]
    first = bounds[0]
    size = 0
    for a, b in itertools.pairwise(bounds):
        own = sum(len(lines[i]) + 1 for i in range(a, b))
        if own >= _SPLIT_MIN and first < a:  # a large statement (a class to split) alone
            out.append((first, a))
            first, size = a, 0
        size += own
        if size >= PARSE_PIECE_BYTES:
            out.append((first, b))
            first, size = b, 0
    if first < end:
        out.append((first, end))
    return out


def _parse_groups(
    lines: list[str], groups: list[tuple[int, int]], indent: str
) -> list[ast.stmt] | None:
    """The statements of each group, in order; None when they cannot be parsed apart."""
    body: list[ast.stmt] = []
    miscuts = 0
    i = 0
    while i < len(groups):
        first, end = groups[i]
        try:
            body.extend(_parse_one(lines, first, end, indent))
        except (SyntaxError, ValueError):
            if i + 1 == len(groups) or miscuts >= _MAX_MISCUTS:
                return None
            miscuts += 1
            groups[i + 1] = (first, groups[i + 1][1])  # cut in the wrong place: merge
        i += 1
    return body


def _parse_one(lines: list[str], first: int, end: int, indent: str) -> list[ast.stmt]:
    piece = "\n".join(lines[first:end])
    if not indent:
        if len(piece) >= _SPLIT_MIN and end - first > 1:
            split = _split_class(lines, first, end)
            if split is not None:
                return [split]
        return ast.parse("\n" * first + piece).body
    # An indented group: `if 1:` on the line above keeps its lines and columns.
    wrapped = ast.parse("\n" * (first - 1) + "if 1:\n" + piece)
    only = wrapped.body
    if len(only) != 1 or not isinstance(only[0], ast.If):
        raise SyntaxError("not one indented group")
    return only[0].body


def _split_class(lines: list[str], first: int, end: int) -> ast.ClassDef | None:
    """A large top-level class parsed as its header and groups of its members; None when the
    piece is not one class or its parts do not parse alone (it is then parsed whole)."""
    k = first
    while k < end and lines[k].startswith(("@", "#")):
        k += 1
    if k == end or not lines[k].startswith("class "):
        return None
    for head_end in range(k, min(end, k + 30)):  # the header may span lines (bases)
        code = lines[head_end].split("#", 1)[0].rstrip()
        if not code.endswith(":"):
            continue
        body_first = next(
            (j for j in range(head_end + 1, end) if lines[j].strip() and not _comment(lines[j])),
            None,
        )
        if body_first is None:
            return None
        line = lines[body_first]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if not indent:
            return None
        header = "\n".join(lines[first : head_end + 1]) + f"\n{indent}pass"
        try:
            parsed = ast.parse("\n" * first + header).body
        except (SyntaxError, ValueError):
            continue  # a ':' inside the bases (a lambda, a slice): the header goes on
        if len(parsed) != 1 or not isinstance(parsed[0], ast.ClassDef):
            return None
        cls = parsed[0]
        starts = _statement_starts(lines, body_first, end, indent)
        if not starts or starts[0] != body_first:
            return None
        members = _parse_groups(lines, _groups(lines, starts, end), indent)
        if not members:
            return None
        cls.body = members
        cls.end_lineno, cls.end_col_offset = members[-1].end_lineno, members[-1].end_col_offset
        return cls
    return None


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")
