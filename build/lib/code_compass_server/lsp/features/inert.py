"""Indexed text shown as Markdown stays text: nothing in it becomes a link.

Editors turn bare URLs, `www.` names and e-mail-like tokens into links (GFM autolinks), so an
attacker's URL or a secret webhook in an indexed file would be one click away in a hover. Each
such token goes into a code span instead (shown as is, never linked); the rest is escaped by
the caller's Markdown escaper (docs/rules.md: indexed-text-inert).
"""

from __future__ import annotations

import re
from collections.abc import Callable

LINKISH = re.compile(
    r"(?i)(?:\b[a-z][a-z0-9+.-]*:(?://|[^\s@]*@)|\bwww\.)[^\s`]+"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
)


def inert_markdown(text: str, escape: Callable[[str], str]) -> str:
    """`text` as Markdown: link-like tokens in code spans, everything else through `escape`."""
    out: list[str] = []
    at = 0
    for m in LINKISH.finditer(text):
        token = m.group(0).rstrip(".,;:!?)]")  # closing punctuation stays outside the span
        out.append(escape(text[at : m.start()]))
        out.append(f"`{token}`")  # the pattern stops at backticks: the span cannot break
        at = m.start() + len(token)
    out.append(escape(text[at:]))
    return "".join(out)
