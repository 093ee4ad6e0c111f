"""Hover over stdio answers from the tree resolvers (symbols/resolve_tree.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lsp.test_hover_lens import hover_params
from tests.symbols.test_resolve_tree import FILES


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


async def test_hover_over_stdio_resolves_typescript_and_go(start: Any, repo: Path) -> None:
    """The server's hover answers from the tree resolvers: the aliased, re-exported import
    shows its real definition (not "by name"); a Go builtin shows no workspace definition."""
    s = await start([repo])
    await s.wait_indexed()
    uri = s.open(repo / "src/app.ts", language="typescript")
    line = FILES["src/app.ts"].split("\n")[6]  # const local = double(n, LIMIT);
    h = await s.client.text_document_hover_async(hover_params(uri, 6, line.index("double")))
    assert h is not None
    md = h.contents.value  # type: ignore[union-attr]
    assert "src/util.ts:2" in md and "by name" not in md.split("\n", 1)[0]
    go_uri = s.open(repo / "mux/router.go", language="go")
    go_line = FILES["mux/router.go"].split("\n")[18]
    h = await s.client.text_document_hover_async(hover_params(go_uri, 18, go_line.index("len")))
    assert h is not None
    head = h.contents.value.split("\n", 1)[0]  # type: ignore[union-attr]
    assert "outside the workspace" in head and "builtin.len" in head
