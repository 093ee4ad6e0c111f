"""Markdown to heading sections, heading path kept.

(docs/rules.md: markdown-sections, chunk-size-overlap.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from code_compass_server.constants import DOC_CHUNK_CHARS, DOC_CHUNK_OVERLAP
from code_compass_server.index.chunk.lines import char_pieces, is_blank, make_chunk, trim_blank
from code_compass_server.records import Chunk, ParsedFile

HEADING_PATH_SEPARATOR = " > "
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_MATTER_MAX_LINES = 200


def find_headings(lines: Sequence[str]) -> list[tuple[int, int, int, str]]:
    """(first line, last line, level, title) of each heading, 1-based.

    Skips YAML front matter and fenced code blocks ("# comment" in a bash fence is
    not a heading).
    """
    headings: list[tuple[int, int, int, str]] = []
    i = 0
    n = len(lines)
    if n and lines[0].strip() == "---":  # front matter
        for j in range(1, min(n, _FRONT_MATTER_MAX_LINES)):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    fence = ""
    paragraph_start = -1  # index of the first line of the current paragraph, for setext
    while i < n:
        line = lines[i]
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            i += 1
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            paragraph_start = -1
            i += 1
            continue
        m = _ATX.match(line)
        if m:
            headings.append((i + 1, i + 1, len(m.group(1)), (m.group(2) or "").strip()))
            paragraph_start = -1
        elif is_blank(line):
            paragraph_start = -1
        elif _SETEXT.match(line) and paragraph_start == i - 1 and i > 0:
            level = 1 if line.strip()[0] == "=" else 2
            headings.append((i, i + 1, level, lines[i - 1].strip()))
            paragraph_start = -1
        elif paragraph_start < 0:
            paragraph_start = i
        i += 1
    return headings


def parse_markdown(rel: str, lines: Sequence[str]) -> ParsedFile:
    headings = find_headings(lines)
    n = len(lines)
    # sections: (start, end, heading path, heading's last line)
    sections: list[tuple[int, int, str, int]] = []
    first = headings[0][0] if headings else n + 1
    if first > 1:
        sections.append((1, first - 1, "", 0))
    stack: list[tuple[int, str]] = []
    for k, (start, head_end, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[k + 1][0] - 1 if k + 1 < len(headings) else n
        path = HEADING_PATH_SEPARATOR.join(t for _, t in stack if t)
        sections.append((start, end, path, head_end))

    chunks: list[Chunk] = []
    carry = 0  # start line of empty sections waiting to join the next one
    for start, end, path, head_end in sections:
        if head_end and trim_blank(lines, head_end + 1, end) is None and end < n:
            carry = carry or start  # a heading with no text of its own
            continue
        span = trim_blank(lines, carry or start, end)
        carry = 0
        if span is None:
            continue
        s, e = span
        for ps, pe in char_pieces(lines, s, e, DOC_CHUNK_CHARS, DOC_CHUNK_OVERLAP):
            piece = trim_blank(lines, ps, pe)
            if piece is not None:
                chunks.append(
                    make_chunk(rel, lines, piece[0], piece[1], "markdown", "section", path)
                )
    return ParsedFile(chunks=chunks, symbols=[])
