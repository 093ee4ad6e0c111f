"""Shared checks for chunker tests (as a fixture: conftest is not importable by name)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from code_compass_server.records import ParsedFile

ExactLinesCheck = Callable[..., None]


def _assert_chunks_are_exact_lines(parsed: ParsedFile, text: str, *, cover: bool = True) -> None:
    """Chunk text equals the file's lines start..end; every non-blank line is covered."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    covered: set[int] = set()
    for chunk in parsed.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line]), chunk
        assert chunk.text.strip(), f"blank chunk {chunk}"
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    if cover:
        missing = [i for i, line in enumerate(lines, start=1) if line.strip() and i not in covered]
        assert not missing, f"lines not in any chunk: {missing}"
    ranges = [(c.start_line, c.end_line) for c in parsed.chunks]
    assert ranges == sorted(ranges)


@pytest.fixture
def exact_lines() -> ExactLinesCheck:
    return _assert_chunks_are_exact_lines
