"""Candidates built from plain values, for fusion and calibration tests."""

from __future__ import annotations

from code_compass_server.index.catalog import ChunkRow
from code_compass_server.search.candidates import Candidate


def row(
    cid: str,
    path: str = "src/a.py",
    start: int = 1,
    end: int = 10,
    *,
    kind: str = "function",
    symbol: str = "f",
    category: str = "code",
    text: str = "def f():\n    pass\n",
    language: str = "python",
) -> ChunkRow:
    return ChunkRow(
        id=cid,
        path=path,
        start_line=start,
        end_line=end,
        language=language,
        kind=kind,
        symbol=symbol,
        signature="",
        doc="",
        hash=cid,
        category=category,
        text=text,
        embedded=True,
    )


def cand(r: ChunkRow, score: float = 0.5, **kw: float | int | None) -> Candidate:
    c = Candidate(row=r, project="p", **kw)  # type: ignore[arg-type]
    c.score = score
    return c
