"""Line-range helpers shared by the chunkers. Lines are 1-based and inclusive."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from code_compass_server.records import Chunk


def is_blank(line: str) -> bool:
    return not line or line.isspace()


def make_chunk(
    rel: str,
    lines: Sequence[str],
    start: int,
    end: int,
    language: str,
    kind: str,
    symbol: str,
    signature: str = "",
    doc: str = "",
    context: str = "",
) -> Chunk:
    """A chunk whose text is exactly lines start..end of the file."""
    return Chunk(
        path=rel,
        start_line=start,
        end_line=end,
        language=language,
        kind=kind,
        symbol=symbol,
        text="\n".join(lines[start - 1 : end]),
        signature=signature,
        doc=doc,
        context=context,
    )


def trim_blank(lines: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    """The range without leading/trailing blank lines; None if nothing is left."""
    while start <= end and is_blank(lines[start - 1]):
        start += 1
    while end >= start and is_blank(lines[end - 1]):
        end -= 1
    return (start, end) if start <= end else None


def line_windows(start: int, end: int, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """Windows of `size` lines stepping by size - overlap, the last one ending at `end`."""
    step = max(1, size - overlap)
    s = start
    while True:
        e = min(s + size - 1, end)
        yield s, e
        if e >= end:
            return
        s += step


def non_blank_windows(
    lines: Sequence[str], start: int, end: int, size: int, overlap: int
) -> Iterator[tuple[int, int]]:
    """`line_windows` over the trimmed range, trimmed again, empty ones dropped."""
    trimmed = trim_blank(lines, start, end)
    if trimmed is None:
        return
    for s, e in line_windows(trimmed[0], trimmed[1], size, overlap):
        window = trim_blank(lines, s, e)
        if window is not None:
            yield window


def char_pieces(
    lines: Sequence[str], start: int, end: int, max_chars: int, overlap_chars: int
) -> Iterator[tuple[int, int]]:
    """Split a line range at line boundaries into pieces of about `max_chars`.

    Each piece after the first starts with the trailing lines of the previous one,
    up to `overlap_chars` (at least one line of progress is always made). A single
    line longer than `max_chars` becomes a piece on its own.
    """
    s = start
    while s <= end:
        size = 0
        e = s
        while e <= end:
            size += len(lines[e - 1]) + 1
            if size > max_chars and e > s:
                e -= 1
                break
            e += 1
        e = min(e, end)
        yield s, e
        if e >= end:
            return
        # back up from e while the overlap stays within budget, but move forward
        back = 0
        nxt = e + 1
        while nxt - 1 > s + 1:
            back += len(lines[nxt - 2]) + 1
            if back > overlap_chars:
                break
            nxt -= 1
        s = nxt
