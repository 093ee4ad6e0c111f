"""A cached tree-sitter parse gives each line of its file as the text had it."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.symbols.resolve_treecache import TreeFiles


def test_lines_are_the_texts_lines_unicode_and_line_ends_included(tmp_path: Path) -> None:
    text = (
        "const a = 'é';\r\n"
        "// 日本語 comment\n"
        "\n"
        "export function f(x) { return x + 'ü'; }\n"
        "const last = 1;"
    )
    parsed = TreeFiles(tmp_path).parse("m.js", "javascript", text)
    assert parsed is not None
    lines = text.split("\n")
    assert [parsed.line(r) for r in range(len(lines))] == lines
    assert parsed.line(len(lines)) == "" and parsed.line(-1) == ""
    call = parsed.node_at(3, text.split("\n")[3].index("x +"))
    assert call is not None and parsed.text_of(call) == "x"
    assert parsed.position(call) == (3, lines[3].index("x +"))
