"""Hover shows at most 3 definitions (the rest counted), 3 doc and 3 code passages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import write


async def test_hover_caps_definitions_and_passages(start: Any, tmp_path: Path) -> None:
    files = {f"defs/d{i}.py": f"def tally_rows(x):\n    return x + {i}\n" for i in range(4)}
    files |= {f"use/u{i}.py": f"def caller_{i}(v):\n    return tally_rows(v)\n" for i in range(4)}
    files |= {f"docs/n{i}.md": f"# Note {i}\n\nCall `tally_rows` to count.\n" for i in range(4)}
    ws = write(tmp_path / "ws", files)
    s = await start([ws])
    await s.wait_indexed()
    uri = s.open(ws / "docs/n0.md", language="markdown")
    h = await s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=2, character=8),
        )
    )
    assert h is not None
    md = h.contents.value  # type: ignore[union-attr]
    assert md.count("Defined at") == 3
    assert "and 1 more definitions" in md
    docs = md.split("Mentioned in the docs")[1].split("Used in the code")[0]
    code = md.split("Used in the code")[1]
    assert docs.count("- [`docs/n") == 3
    assert code.count("- [`use/u") == 3
