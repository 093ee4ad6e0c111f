"""Hover citations and code-lens evidence, end to end over stdio."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path


def hover_params(uri: str, line: int, character: int) -> types.HoverParams:
    return types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


async def hover(s: Any, uri: str, line: int, character: int) -> types.Hover | None:
    return await s.client.text_document_hover_async(hover_params(uri, line, character))


def cites(md: str, label: str, target: str) -> bool:
    """A reference-style link: `[`label`][n]` in the text, `[n]: <target>` at the end."""
    m = re.search(rf"\[`{re.escape(label)}`\]\[(\d+)\]", md)
    return m is not None and f"[{m.group(1)}]: <{target}>" in md


async def test_hover_shows_true_definition_signature_and_doc_passage(
    start: Any, alpha: Path
) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "checkout.py")
    # line 5: "    return total - compute_discount(total, cart.tier)"
    h = await hover(s, uri, 5, 22)
    assert h is not None
    md = h.contents.value  # type: ignore[union-attr]
    assert h.contents.kind == types.MarkupKind.Markdown  # type: ignore[union-attr]
    definition = (alpha / "pricing.py").as_uri()
    assert cites(md, "pricing.py:4", f"{definition}#L4")
    assert "def compute_discount(order_total, customer_tier)" in md
    # the doc passage that mentions it, at its true line, before code evidence
    doc_link = "`docs/pricing.md:3`"
    assert cites(md, "docs/pricing.md:3", f"{(alpha / 'docs/pricing.md').as_uri()}#L3")
    assert "applies the rate" in md
    # code that uses it (not its own definition)
    assert cites(md, "pricing.py:15", f"{definition}#L15")
    assert md.index(doc_link) < md.index("pricing.py:15")
    assert "pricing.py:5`" not in md  # the body of the definition is not "evidence"
    # the range is the word under the cursor
    assert (h.range.start.character, h.range.end.character) == (19, 35)  # type: ignore[union-attr]


async def test_hover_is_null_for_keywords_literals_and_unknown_words(
    start: Any, alpha: Path
) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "pricing.py")
    lines = (alpha / "pricing.py").read_text().split("\n")
    cases = {
        "keyword def": (3, 1),
        "keyword return": (7, 10),
        "number literal": (6, 32),
        "inside a string": (5, 25),
        "builtin-like word": (13, 15),  # self
        "blank line": (1, 0),
    }
    for label, (line, col) in cases.items():
        assert await hover(s, uri, line, col) is None, (label, lines[line])
    # A parameter: its binding line (when resolved in time) or nothing, never a namesake.
    param = await hover(s, uri, 3, 22)
    assert param is None or "pricing.py:4" in param.contents.value  # type: ignore[union-attr]
    # ...while the same machinery does answer on a real symbol in this file.
    assert await hover(s, uri, 14, 17) is not None  # compute_discount call in build()
    # A file outside every workspace folder: null, not an error.
    outside = alpha.parent / "elsewhere.py"
    outside.write_text("compute_discount = 1\n")
    assert await hover(s, s.open(outside), 0, 3) is None
    # A document that is neither open nor on disk: a JSON-RPC error, and the server lives on.
    with pytest.raises(JsonRpcException):
        await hover(s, (alpha / "missing.py").as_uri(), 0, 0)
    assert (await s.request("codeCompass/status"))["projects"][0]["name"] == "alpha"


async def test_hover_positions_follow_the_unsaved_buffer(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    text = "# a new comment line\n\n" + (alpha / "checkout.py").read_text()
    uri = s.open(alpha / "checkout.py", text)
    h = await hover(s, uri, 7, 22)  # the call moved two lines down in the buffer
    assert h is not None and "pricing.py:4" in h.contents.value  # type: ignore[union-attr]
    assert h.range is not None and h.range.start.line == 7


async def test_code_lens_titles_count_doc_references_and_usages(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "pricing.py")
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    # Only compute_discount has evidence (InvoiceBuilder/build are mentioned nowhere else).
    assert [lens.data["name"] for lens in lenses] == ["compute_discount"]
    lens = lenses[0]
    assert lens.command is None  # resolved lazily
    assert (lens.range.start.line, lens.range.start.character) == (3, 4)
    assert lens.data["project"] == "alpha" and lens.data["uri"] == uri

    resolved = await s.client.code_lens_resolve_async(lens)
    assert resolved.command is not None
    # docs/pricing.md; usages: build() in pricing.py, the import and checkout() in checkout.py
    assert resolved.command.title == "1 doc reference · 3 usages"
    assert resolved.command.command == "codeCompass.showReferences"
    arg_uri, position, locations = resolved.command.arguments
    assert arg_uri == uri and position == {"line": 3, "character": 4}
    where = sorted((rel_to(alpha, loc["uri"]), loc["range"]["start"]["line"]) for loc in locations)
    assert where == [
        ("checkout.py", 0),
        ("checkout.py", 5),
        ("docs/pricing.md", 2),
        ("pricing.py", 14),
    ]

    # Bad lens data: a -32602, not a crash.
    with pytest.raises(JsonRpcException) as info:
        await s.client.code_lens_resolve_async(types.CodeLens(range=lens.range, data={"name": 3}))
    assert info.value.code == -32602


def rel_to(root: Path, uri: str) -> str:
    path = to_fs_path(uri)
    assert path is not None
    return Path(path).relative_to(root).as_posix()
