"""Plain text and reStructuredText to paragraph chunks.

Paragraphs (blank-line separated) are packed up to ~DOC_CHUNK_CHARS; the next chunk
starts with the previous chunk's last paragraph when it is short
(docs/rules.md: chunk-size-overlap).
reST-style underlined titles start a new chunk and name the chunks under them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from code_compass_server.constants import DOC_CHUNK_CHARS, DOC_CHUNK_OVERLAP
from code_compass_server.index.chunk.lines import char_pieces, is_blank, make_chunk, trim_blank
from code_compass_server.index.chunk.markdown import HEADING_PATH_SEPARATOR
from code_compass_server.records import Chunk, ParsedFile

_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")


def _paragraphs(lines: Sequence[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for i, line in enumerate(lines, start=1):
        if is_blank(line):
            if start:
                out.append((start, i - 1))
                start = 0
        elif not start:
            start = i
    if start:
        out.append((start, len(lines)))
    return out


def _title(lines: Sequence[str], start: int, end: int) -> tuple[str, str] | None:
    """(adornment style, title) when a paragraph opens with a reST section title."""
    first = lines[start - 1]
    if end - start >= 2:
        over = _ADORNMENT.match(first)
        under = _ADORNMENT.match(lines[start + 1])
        if over and under and first.strip() == lines[start + 1].strip():
            return "over" + over.group(1), lines[start].strip()
    if end - start >= 1 and not _ADORNMENT.match(first):
        under = _ADORNMENT.match(lines[start])
        if under and len(lines[start].strip()) >= len(first.strip()) > 0:
            return under.group(1), first.strip()
    return None


def parse_paragraphs(rel: str, lines: Sequence[str], language: str) -> ParsedFile:
    chunks: list[Chunk] = []
    styles: list[str] = []  # reST levels: adornment styles in order of first use
    stack: list[tuple[int, str]] = []
    path = ""
    current: list[tuple[int, int]] = []
    size = 0

    def flush() -> None:
        if current:
            chunks.append(
                make_chunk(rel, lines, current[0][0], current[-1][1], language, "paragraph", path)
            )

    for start, end in _paragraphs(lines):
        chars = sum(len(lines[i - 1]) + 1 for i in range(start, end + 1))
        title = _title(lines, start, end)
        if title is not None:
            flush()
            style, text = title
            if style not in styles:
                styles.append(style)
            level = styles.index(style)
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
            path = HEADING_PATH_SEPARATOR.join(t for _, t in stack)
            current, size = [], 0
        if chars > DOC_CHUNK_CHARS:
            flush()
            current, size = [], 0
            for s, e in char_pieces(lines, start, end, DOC_CHUNK_CHARS, DOC_CHUNK_OVERLAP):
                piece = trim_blank(lines, s, e)
                if piece is not None:
                    chunks.append(
                        make_chunk(rel, lines, piece[0], piece[1], language, "paragraph", path)
                    )
            continue
        if current and size + chars > DOC_CHUNK_CHARS:
            flush()
            last = current[-1]
            last_chars = sum(len(lines[i - 1]) + 1 for i in range(last[0], last[1] + 1))
            if len(current) > 1 and last_chars <= DOC_CHUNK_OVERLAP:
                current, size = [last], last_chars
            else:
                current, size = [], 0
        current.append((start, end))
        size += chars
    flush()
    return ParsedFile(chunks=chunks, symbols=[])
