"""Hostile files for the indexer, written by code (nothing binary is checked in).

Each maker returns bytes; `write_hostile_set(root)` lays them all out in a workspace and says
which skip reason (or outcome) each should end in. The PDFs are small on disk and costly to
open: a deflate bomb of text operators, thousands of pages sharing one heavy content stream,
arrays nested far deeper than any real file, a page tree that loops, a huge object count.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path


def _pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF from numbered object bodies (object i+1 = objects[i]) with a correct xref."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        xref,
    )
    return bytes(out)


def _stream(data: bytes, *, flate: bool = False, extra: bytes = b"") -> bytes:
    if flate:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _page(parent: int, content: int, font: int) -> bytes:
    return (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (parent, content, font)
    )


def pdf_text_bomb(ops: int = 2_000_000) -> bytes:
    """One page whose deflated content stream inflates to millions of text operators."""
    content = b"BT /F1 12 Tf 72 720 Td\n" + b"(lorem ipsum) Tj 0 -1 Td\n" * ops + b"ET\n"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            _stream(content, flate=True),
            _FONT,
        ]
    )


def pdf_many_pages(pages: int = 50_000, ops_per_page: int = 400) -> bytes:
    """A page tree listing one page object `pages` times: each page re-reads the shared
    content stream, so the work is pages x stream while the file stays small."""
    line = b"(page text here) Tj 0 -1 Td\n"
    content = b"BT /F1 12 Tf 72 720 Td\n" + line * ops_per_page + b"ET\n"
    kids = b" ".join([b"3 0 R"] * pages)
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
            _page(2, 4, 5),
            _stream(content, flate=True),
            _FONT,
        ]
    )


def pdf_deep_nesting(depth: int = 200_000) -> bytes:
    """Arrays nested `depth` deep inside the page's resources."""
    nested = b"[" * depth + b"]" * depth
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> /X " + nested + b" >> >>",
            _stream(b"BT /F1 12 Tf 72 720 Td (deep) Tj ET\n"),
            _FONT,
        ]
    )


def pdf_page_tree_loop() -> bytes:
    """A Pages node that lists itself among its kids."""
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R] /Count 3 >>",
            _page(2, 4, 5),
            _stream(b"BT /F1 12 Tf 72 720 Td (loop) Tj ET\n"),
            _FONT,
        ]
    )


def pdf_many_objects(count: int = 2_000_000) -> bytes:
    """An ordinary page, and a deflated cross-reference stream declaring `count` objects:
    a few kilobytes on disk, millions of entries to walk."""
    head = _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            _stream(b"BT /F1 12 Tf 72 720 Td (many objects) Tj ET\n"),
            _FONT,
        ]
    )
    body = head[: head.index(b"xref\n")]
    offset = len(body)
    entries = b"\x01" + offset.to_bytes(4, "big") + b"\x00\x00"
    xref = _stream(
        entries * count,
        flate=True,
        extra=b" /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R" % count,
    )
    return body + b"%d 0 obj\n" % count + xref + b"\nendobj\nstartxref\n%d\n%%%%EOF\n" % offset


def pdf_slow_pages(pages: int = 1_500, ops_per_page: int = 3_000) -> bytes:
    """Within the page limit, but every page carries thousands of text operators."""
    return pdf_many_pages(pages, ops_per_page)


def pdf_ok(text: str = "An ordinary page about the billing ledger.") -> bytes:
    """A well-formed one-page PDF (the control: it must still be indexed)."""
    content = b"BT /F1 12 Tf 72 720 Td (" + text.encode("latin-1") + b") Tj ET\n"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            _stream(content),
            _FONT,
        ]
    )


def single_line(size: int = 50_000_000) -> bytes:
    """One line of `size` bytes of prose-like text (no newline at all)."""
    unit = b"word and more words "
    return (unit * (size // len(unit) + 1))[:size]


def deeply_nested_python(depth: int = 50_000) -> bytes:
    """Nested brackets over many lines: legal to tokenize, pathological to walk."""
    return b"x = " + b"(\n" * depth + b"1" + b"\n)" * depth + b"\n"


def deeply_nested_js(depth: int = 50_000) -> bytes:
    return b"function f() {\n" * depth + b"}\n" * depth


@dataclass(frozen=True, slots=True)
class Hostile:
    rel: str
    data: bytes
    outcome: str  # a skip reason the summary must count, or "indexed"


def hostile_set(*, full: bool = True) -> list[Hostile]:
    """Every hostile file with its expected outcome under default settings. `full=False`
    leaves out the slow ones (the 50 MB line, the PDF that runs into its time budget)."""
    files = [
        Hostile("docs/bomb.pdf", pdf_text_bomb(), "pdf_limits"),
        Hostile("docs/pages.pdf", pdf_many_pages(), "pdf_limits"),
        Hostile("docs/objects.pdf", pdf_many_objects(), "pdf_limits"),
        Hostile("docs/loop.pdf", pdf_page_tree_loop(), "pdf_error"),
        Hostile("docs/deep.pdf", pdf_deep_nesting(), "indexed"),
        Hostile("src/nested.py", deeply_nested_python(), "indexed"),
        Hostile("src/nested.js", deeply_nested_js(), "indexed"),
        Hostile("data/wide.txt", single_line(2_000_000), "too_large"),
    ]
    if full:
        files.append(Hostile("docs/slow.pdf", pdf_slow_pages(), "pdf_limits"))
        files.append(Hostile("data/one_line.txt", single_line(), "too_large"))
    return files


def write_hostile_set(root: Path, *, full: bool = True) -> list[Hostile]:
    files = hostile_set(full=full)
    for f in files:
        path = root / f.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.data)
    return files
