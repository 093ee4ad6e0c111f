"""Markdown sections, plain-text paragraphs and PDF pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from code_compass_server.constants import DOC_CHUNK_CHARS, DOC_CHUNK_OVERLAP
from code_compass_server.index.chunk import SkipFile, parse_file
from code_compass_server.index.scan import scan_workspace

MARKDOWN = """Intro before any heading.

# Install

## Linux

Run the installer:

```bash
# not a heading
./install.sh
```

### Debian

Use apt.

## Windows
Use the MSI.

Usage
-----

Call `compass --help`.
"""


def test_markdown_sections_with_heading_paths(exact_lines) -> None:
    parsed = parse_file("docs/guide.md", MARKDOWN.encode(), "markdown")
    exact_lines(parsed, MARKDOWN)
    got = [(c.start_line, c.end_line, c.symbol) for c in parsed.chunks]
    assert got == [
        (1, 1, ""),
        (3, 12, "Install > Linux"),  # the empty "# Install" section joins the next one
        (14, 16, "Install > Linux > Debian"),
        (18, 19, "Install > Windows"),
        (21, 24, "Install > Usage"),  # setext heading, level 2
    ]
    assert {c.kind for c in parsed.chunks} == {"section"}
    assert {c.language for c in parsed.chunks} == {"markdown"}
    assert not any(c.symbol.endswith("not a heading") for c in parsed.chunks)
    assert parsed.symbols == []


def test_long_markdown_section_is_split_with_overlap(exact_lines) -> None:
    body = "".join(f"Sentence number {i} about the installer and its options.\n" for i in range(80))
    text = "# Big\n\n" + body
    parsed = parse_file("big.md", text.encode(), "markdown")
    exact_lines(parsed, text)
    assert len(parsed.chunks) >= 4
    assert {c.symbol for c in parsed.chunks} == {"Big"}
    for a, b in zip(parsed.chunks, parsed.chunks[1:], strict=False):
        assert len(a.text) <= DOC_CHUNK_CHARS
        shared = a.end_line - b.start_line + 1
        assert shared >= 1  # overlapping lines
        overlap_chars = sum(len(line) + 1 for line in a.text.split("\n")[-shared:])
        assert overlap_chars <= DOC_CHUNK_OVERLAP


def test_front_matter_is_not_a_heading(exact_lines) -> None:
    text = "---\ntitle: Guide\n---\n\n# Real\n\nText.\n"
    parsed = parse_file("fm.md", text.encode(), "markdown")
    exact_lines(parsed, text)
    assert [c.symbol for c in parsed.chunks] == ["", "Real"]


def test_plain_text_paragraphs_are_packed(exact_lines) -> None:
    paragraphs = [f"Paragraph {i}. " + "word " * 40 for i in range(12)]  # ~220 chars each
    text = "\n\n".join(p.strip() for p in paragraphs) + "\n"
    parsed = parse_file("notes.txt", text.encode(), "text")
    exact_lines(parsed, text)
    assert {c.kind for c in parsed.chunks} == {"paragraph"}
    assert 3 <= len(parsed.chunks) <= 5
    assert all(len(c.text) <= DOC_CHUNK_CHARS for c in parsed.chunks)
    # chunks start and end on paragraph boundaries
    lines = text.split("\n")
    for c in parsed.chunks:
        assert c.start_line == 1 or lines[c.start_line - 2] == ""
        assert lines[c.end_line] == ""


def test_rst_titles_name_the_chunks(exact_lines) -> None:
    text = (
        "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun it.\n\n"
        "Linux\n~~~~~\n\nUse apt.\n\nUsage\n-------\n\nCall it.\n"
    )
    parsed = parse_file("guide.rst", text.encode(), "rst")
    exact_lines(parsed, text)
    assert [c.symbol for c in parsed.chunks] == [
        "Guide",
        "Guide > Install",
        "Guide > Install > Linux",
        "Guide > Usage",
    ]


def test_long_paragraph_is_split(exact_lines) -> None:
    text = "".join(
        f"line {i} of one very long paragraph without any blank line\n" for i in range(60)
    )
    parsed = parse_file("long.txt", text.encode(), "text")
    exact_lines(parsed, text)
    assert len(parsed.chunks) >= 3
    assert all(
        b.start_line <= a.end_line for a, b in zip(parsed.chunks, parsed.chunks[1:], strict=False)
    )


def _pdf(path: Path, pages: list[str]) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 10, text)
    pdf.output(str(path))
    return path.read_bytes()


def test_pdf_one_chunk_per_page(tmp_path: Path) -> None:
    data = _pdf(
        tmp_path / "spec.pdf",
        ["Requirements: the index must be incremental.", "", "Risks: slow disks and large repos."],
    )
    parsed = parse_file("docs/spec.pdf", data, "pdf")
    got = [(c.start_line, c.end_line, c.kind, c.symbol, c.language) for c in parsed.chunks]
    assert got == [(1, 1, "page", "page 1", "pdf"), (3, 3, "page", "page 3", "pdf")]  # empty page 2
    assert "incremental" in parsed.chunks[0].text
    assert "slow disks" in parsed.chunks[1].text


def test_broken_pdf_is_skipped() -> None:
    with pytest.raises(SkipFile) as err:
        parse_file("bad.pdf", b"%PDF-1.4\nthis is not really a pdf", "pdf")
    assert err.value.reason == "pdf_error"


def test_scan_then_parse_documents(tmp_path: Path) -> None:
    """The scanner hands PDFs, Markdown and text to the right chunkers."""
    _pdf(tmp_path / "a.pdf", ["First page.", "Second page."])
    (tmp_path / "b.md").write_text(MARKDOWN)
    (tmp_path / "c.txt").write_text("One.\n\nTwo.\n")
    kinds = {}
    for entry in scan_workspace(tmp_path).files:
        parsed = parse_file(entry.rel, entry.abs.read_bytes(), entry.language)
        kinds[entry.rel] = (entry.language, {c.kind for c in parsed.chunks}, len(parsed.chunks))
    assert kinds == {
        "a.pdf": ("pdf", {"page"}, 2),
        "b.md": ("markdown", {"section"}, 5),
        "c.txt": ("text", {"paragraph"}, 1),
    }
