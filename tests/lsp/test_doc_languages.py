"""Which files are documents is decided once (index/languages.py): the index's category, the
chunker, the hover's documents half and the lens's "doc references" all agree on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from code_compass_server.index.categories import category_for
from code_compass_server.index.chunk.parse import parse_file
from code_compass_server.index.languages import DOC_LANGUAGES, language_for
from tests.lsp.conftest import write

ADOC = "= Pricing notes\n\nThe `compute_discount` rule applies to gold customers only.\n"
TEX = "\\section{Discounts}\nWe call compute\\_discount, i.e. compute_discount, per order.\n"


@pytest.mark.parametrize(
    "path", ["a.md", "a.rst", "a.txt", "a.adoc", "a.tex", "README", "docs/notes.text"]
)
def test_prose_files_are_documents_everywhere(path: str) -> None:
    language = language_for(path)
    assert language in DOC_LANGUAGES
    assert category_for(path, language) == "doc"
    parsed = parse_file(path, b"Some words about compute_discount.\n\nMore words.\n", language)
    assert parsed.chunks and not parsed.symbols  # prose: no symbols, chunks by section/paragraph


@pytest.mark.parametrize("path", ["a.py", "src/a.ts", "tests/test_a.py", "a.yaml", "Makefile"])
def test_code_tests_and_config_are_not_documents(path: str) -> None:
    language = language_for(path)
    assert language is not None and language not in DOC_LANGUAGES
    assert category_for(path, language) != "doc"


async def test_asciidoc_and_latex_count_as_doc_references_in_lens_and_hover(
    start: Any, alpha: Path
) -> None:
    write(alpha, {"docs/notes.adoc": ADOC, "paper/discounts.tex": TEX})
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "pricing.py")
    (lens,) = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    resolved = await s.client.code_lens_resolve_async(lens)
    assert resolved.command is not None
    # docs/pricing.md, docs/notes.adoc, paper/discounts.tex; the same 3 code usages as before
    assert resolved.command.title == "3 doc references · 3 usages"

    hover = await s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=s.open(alpha / "checkout.py")),
            position=types.Position(line=5, character=22),
        )
    )
    assert hover is not None
    md = hover.contents.value  # type: ignore[union-attr]
    code_usage = md.index("pricing.py:15")
    for doc in ("docs/pricing.md:3", "docs/notes.adoc:3", "paper/discounts.tex:2"):
        assert md.index(doc) < code_usage, doc  # in the documents half, before code
