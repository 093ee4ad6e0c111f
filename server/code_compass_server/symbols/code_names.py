"""Where a name is an identifier token in code, and where prose mentions a symbol.

Usages are identifier tokens in code, never words in comments, docstrings or strings: one
regular expression per language finds comments and string literals (triple-quoted, prefixed,
template and raw strings included); their spans are cached per file version, so a lens over
hundreds of files scans each once. Doc references are mentions of *this*
symbol: the name in backticks (Markdown, reST roles), qualified (`Flask.run`,
`flask.request`), or bare only when it cannot be an English word (`make_response`,
`SansioBlueprint`).
"""

from __future__ import annotations

import bisect
import re
import threading
from array import array
from collections import OrderedDict

_HASH_COMMENT = frozenset({"python", "ruby", "shell", "yaml", "toml"})
_QUOTES = {"python": "\"'", "go": "\"`'", "rust": '"', "java": '"'}
_JS_QUOTES = "\"'`"
MASK_CACHE_FILES = 4096  # files whose comment/string spans are kept (a few KB each)
# Span offsets are kept as machine integers (8 bytes each), not lists of int objects (40): a
# lens's scan fills this cache with most of a project's files within minutes, and a Django
# replay held 180k spans there (14 MB as lists, scattered among the parse trees' objects).
_SPAN_TYPE = "q"

# Python: comments, then strings with any prefix (triple-quoted first: docstrings span lines).
_PYTHON_NOISE = re.compile(
    r"#[^\n]*"
    r"|(?<!\w)[rRbBuUfF]{0,2}(?:"
    r'"""(?:\\.|[^\\])*?(?:"""|\Z)'
    r"|'''(?:\\.|[^\\])*?(?:'''|\Z)"
    r'|"(?:\\.|[^"\\\n])*"?'
    r"|'(?:\\.|[^'\\\n])*'?)",
    re.S,
)
# JavaScript/TypeScript regular expression literals (`/[\\'"]/g`, `/`/g`): a quote or a
# backquote inside one must not open a string. A `/` starts one only where an expression can
# start: after an operator, an opening bracket, a comma, `;`, `return` or at a line's start
# (an argument on a line of its own), never after an operand (`a / b`) — the rule
# JavaScript's own grammar applies.
_JS_REGEX = (
    r"(?:(?<=[(,=:\[!&|?{};~^%*+<>\n-])|(?<=\breturn))[ \t]*"
    r"/(?![/*])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+/[a-z]*"
)
_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})
_masks: OrderedDict[tuple[str, int, int], tuple[array[int], array[int]]] = OrderedDict()
_masks_lock = threading.Lock()
_patterns: dict[str, re.Pattern[str]] = {}


def _noise(language: str) -> re.Pattern[str]:
    """Comments and string literals of a language, as one pattern (C-like by default)."""
    if language == "python":
        return _PYTHON_NOISE
    hash_comment = language in _HASH_COMMENT
    quotes = _QUOTES.get(language, "\"'" if hash_comment else _JS_QUOTES)
    parts = [r"#[^\n]*"] if hash_comment else [r"//[^\n]*", r"/\*.*?(?:\*/|\Z)"]
    if language in _JS_FAMILY:
        parts.append(_JS_REGEX)
    for q in quotes:
        eq = re.escape(q)
        if q == "`":  # template literals and Go raw strings span lines
            parts.append(rf"{eq}(?:\\.|[^{eq}\\])*(?:{eq}|\Z)")
        else:
            parts.append(rf"{eq}(?:\\.|[^{eq}\\\n])*{eq}?")
    return re.compile("|".join(parts), re.S)


def noise_spans(text: str, language: str) -> tuple[array[int], array[int]]:
    """Where comments and string literals start and end (sorted, disjoint); cached per text."""
    key = (language, len(text), hash(text))
    with _masks_lock:
        hit = _masks.get(key)
        if hit is not None:
            _masks.move_to_end(key)
            return hit
    pattern = _patterns.get(language)
    if pattern is None:
        pattern = _patterns[language] = _noise(language)
    starts: list[int] = []
    ends: list[int] = []
    js = language not in _HASH_COMMENT and language not in _QUOTES
    for m in pattern.finditer(text):
        s, e = m.start(), m.end()
        head = text[s : s + 3]
        f_string = language == "python" and head[:1] != "#" and "f" in head[:2].lower()
        if (js and head[:1] == "`") or f_string:
            # Template literals' `${…}` and f-strings' `{…}` hold code: only the text
            # between them is noise.
            for a, b in _literal_parts(text, s, e, "${" if js else "{"):
                starts.append(a)
                ends.append(b)
            continue
        starts.append(s)
        ends.append(e)
    spans = (array(_SPAN_TYPE, starts), array(_SPAN_TYPE, ends))
    del starts, ends
    with _masks_lock:
        _masks[key] = spans
        while len(_masks) > MASK_CACHE_FILES:
            _masks.popitem(last=False)
    return spans


def _literal_parts(text: str, start: int, end: int, opener: str) -> list[tuple[int, int]]:
    """The spans of a template literal or f-string that are text, around its interpolations
    (`{{` in an f-string is an escaped brace, not one)."""
    parts: list[tuple[int, int]] = []
    at = start
    i = start
    while i < end:
        if text.startswith(opener, i) and not (opener == "{" and text.startswith("{{", i)):
            parts.append((at, i + len(opener)))
            depth, i = 1, i + len(opener)
            while i < end and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            at = i - 1 if depth == 0 else i  # the closing brace is text again
            continue
        if opener == "{" and text.startswith("{{", i):
            i += 2
            continue
        i += 1
    parts.append((at, end))
    return [(a, b) for a, b in parts if b > a]


def code_columns_in(text: str, language: str, name: str) -> dict[int, list[int]]:
    """1-based line -> 0-based columns where `name` is an identifier token in code (never in
    a comment, docstring or string literal)."""
    if not name or name not in text:
        return {}
    starts, ends = noise_spans(text, language)
    out: dict[int, list[int]] = {}
    line, line_start, scanned = 1, 0, 0
    width = len(name)
    pos = text.find(name)
    while pos >= 0:
        after = pos + width
        if (pos == 0 or not _ident_char(text[pos - 1])) and (
            after >= len(text) or not _ident_char(text[after])
        ):
            i = bisect.bisect_right(starts, pos) - 1
            if i < 0 or pos >= ends[i]:
                line += text.count("\n", scanned, pos)
                scanned = pos
                line_start = text.rfind("\n", 0, pos) + 1
                out.setdefault(line, []).append(pos - line_start)
        pos = text.find(name, after)
    return out


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def code_columns(lines: list[str], language: str, name: str) -> dict[int, list[int]]:
    """`code_columns_in` over a file given as lines."""
    return code_columns_in("\n".join(lines), language, name)


_BACKTICKS = re.compile(r"`+([^`]+)`+")


def looks_like_code(name: str) -> bool:
    """snake_case, camelCase/PascalCase with inner capitals: not an English word."""
    return "_" in name.strip("_") or any(c.isupper() for c in name[1:])


def doc_column(line: str, name: str, qualifiers: tuple[str, ...]) -> int | None:
    """Column where a prose line mentions this symbol, or None."""
    if name not in line:
        return None  # most lines of a passage: no regular expression needed
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
