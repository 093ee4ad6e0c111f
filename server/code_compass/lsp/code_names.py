"""Where a name is an identifier token in code, and where prose mentions a symbol.

Usages are identifier tokens in code, never words in comments, docstrings or strings:
Python files go through `tokenize` (exact), other languages through a small scanner that
blanks comments and string literals. Doc references are mentions of *this* symbol: the name
in backticks (Markdown, reST roles), qualified (`Flask.run`, `flask.request`), or bare only
when it cannot be an English word (`make_response`, `SansioBlueprint`).
"""

from __future__ import annotations

import io
import re
import tokenize

_LINE_COMMENT = {"python": "#", "ruby": "#", "shell": "#", "yaml": "#", "toml": "#"}
_QUOTES = {"python": "\"'", "go": '"`', "rust": '"', "java": '"'}
_JS_QUOTES = "\"'`"


def code_columns(lines: list[str], language: str, name: str) -> dict[int, list[int]]:
    """1-based line -> 0-based columns where `name` is an identifier token in code."""
    if language == "python":
        found = _python_columns(lines, name)
        if found is not None:
            return found
    return _scanned_columns(lines, language, name)


def _python_columns(lines: list[str], name: str) -> dict[int, list[int]] | None:
    out: dict[int, list[int]] = {}
    reader = io.StringIO("\n".join(lines)).readline
    try:
        for tok in tokenize.generate_tokens(reader):
            if tok.type == tokenize.NAME and tok.string == name:
                out.setdefault(tok.start[0], []).append(tok.start[1])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None  # unsaved, half-typed code: the scanner still does well
    return out


def _scanned_columns(lines: list[str], language: str, name: str) -> dict[int, list[int]]:
    comment = _LINE_COMMENT.get(language, "//")
    block = language not in ("python", "ruby", "shell", "yaml", "toml")
    quotes = _QUOTES.get(language, _JS_QUOTES)
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    out: dict[int, list[int]] = {}
    in_block = False
    for n, line in enumerate(lines, start=1):
        if name not in line and not in_block:
            continue_state = _skip_state(line, comment, block, quotes, in_block)
            in_block = continue_state
            continue
        code, in_block = _blank(line, comment, block, quotes, in_block)
        cols = [m.start() for m in pattern.finditer(code)]
        if cols:
            out[n] = cols
    return out


def _skip_state(line: str, comment: str, block: bool, quotes: str, in_block: bool) -> bool:
    if not block or ("/*" not in line and "*/" not in line):
        return in_block
    return _blank(line, comment, block, quotes, in_block)[1]


def _blank(line: str, comment: str, block: bool, quotes: str, in_block: bool) -> tuple[str, bool]:
    """The line with comments and string literals replaced by spaces (same columns)."""
    out = list(line)
    i, n = 0, len(line)
    quote: str | None = None
    while i < n:
        if in_block:
            end = line.find("*/", i)
            stop = n if end < 0 else end + 2
            out[i:stop] = " " * (stop - i)
            i, in_block = stop, end < 0
            continue
        ch = line[i]
        if quote is not None:
            out[i] = " "
            if ch == "\\" and i + 1 < n:
                out[i + 1] = " "
                i += 2
                continue
            if ch == quote:
                quote = None
            i += 1
            continue
        if line.startswith(comment, i):
            out[i:] = " " * (n - i)
            break
        if block and line.startswith("/*", i):
            in_block = True
            continue
        if ch in quotes:
            quote = ch
            out[i] = " "
        i += 1
    return "".join(out), in_block


_BACKTICKS = re.compile(r"`+([^`]+)`+")


def looks_like_code(name: str) -> bool:
    """snake_case, camelCase/PascalCase with inner capitals: not an English word."""
    return "_" in name.strip("_") or any(c.isupper() for c in name[1:])


def doc_column(line: str, name: str, qualifiers: tuple[str, ...]) -> int | None:
    """Column where a prose line mentions this symbol, or None."""
    ident = rf"(?<![\w$]){re.escape(name)}(?![\w$])"
    for m in _BACKTICKS.finditer(line):
        inner = re.search(ident, m.group(1))
        if inner:
            return m.start(1) + inner.start()
    for q in qualifiers:
        qm = re.search(rf"(?<![\w$]){re.escape(q)}\.{re.escape(name)}(?![\w$])", line)
        if qm:
            return qm.start() + len(q) + 1
    if looks_like_code(name):
        bare = re.search(ident, line)
        if bare:
            return bare.start()
    return None
