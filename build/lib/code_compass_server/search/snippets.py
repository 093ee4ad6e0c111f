"""Snippets shown with hits: the chunk's own lines, bounded."""

from __future__ import annotations

MAX_SNIPPET_CHARS = 1200
MAX_SNIPPET_LINES = 30


def make_snippet(text: str) -> str:
    lines = text.split("\n")
    if len(lines) > MAX_SNIPPET_LINES:
        lines = [*lines[:MAX_SNIPPET_LINES], "…"]
    out = "\n".join(lines)
    if len(out) > MAX_SNIPPET_CHARS:
        out = out[:MAX_SNIPPET_CHARS].rstrip() + "…"
    return out
