"""What a code chunk carries besides its own lines (records.Chunk.context).

A method's lines do not show its class, a piece of a long function does not show its signature,
and a class header (`class LexicalIndex:`) alone says nothing of what the class does. The
context holds those facts: the enclosing container's signature (and the first line of its
docstring), a container header's member list, the signature of a split definition. The
embedding reads it (embed/worker.py); the lexical fields do not (there it made a class's member
names and a method's class count as mentions in code-lens and hover counts). It is never shown
as evidence, and the chunk's line range and text stay exactly the file's lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from code_compass_server.constants import (
    CHUNK_CONTEXT_MAX_CHARS,
    CHUNK_MEMBER_LIST_MAX,
    CHUNK_MODULE_CONTEXT,
)

# Python modules' docstrings as the context of their top-level definitions (measured: see
# docs/search.md, "Chunks that carry their context").
MODULE_CONTEXT = CHUNK_MODULE_CONTEXT
_SUMMARY_CHARS = 200
_MEMBER_CHARS = 100


class DefLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def signature(self) -> str: ...
    @property
    def doc(self) -> str: ...
    @property
    def parent(self) -> int: ...
    @property
    def chunk(self) -> bool: ...


def join_context(*parts: str) -> str:
    """Non-empty parts, one per line, capped (the embedding reads it before every piece)."""
    text = "\n".join(p for p in parts if p)
    return text[:CHUNK_CONTEXT_MAX_CHARS]


def first_line(doc: str) -> str:
    """The first sentence-ish line of a docstring, for a summary."""
    for line in doc.splitlines():
        line = line.strip()
        if line:
            return line[:_SUMMARY_CHARS]
    return ""


def module_summary(doc: str) -> str:
    """A module docstring's first paragraph, joined into one line."""
    para: list[str] = []
    for line in doc.splitlines():
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    return " ".join(para)[:_SUMMARY_CHARS]


def container_context(outer: DefLike | None, module_doc: str) -> str:
    """The enclosing definition's signature and docstring summary; at top level, the module's
    summary."""
    if outer is None:
        return module_doc
    return join_context(outer.signature, first_line(outer.doc))


def members_of(defs: Sequence[DefLike]) -> dict[int, list[int]]:
    """Indexes of each definition's direct members, in source order."""
    out: dict[int, list[int]] = {}
    for i, d in enumerate(defs):
        if d.parent >= 0:
            out.setdefault(d.parent, []).append(i)
    return out


def member_list(defs: Sequence[DefLike], member_indexes: Sequence[int]) -> str:
    """`members: def add(...); def search(...)` of a container: its members' signatures."""
    names = [
        (defs[i].signature or defs[i].name)[:_MEMBER_CHARS]
        for i in member_indexes[:CHUNK_MEMBER_LIST_MAX]
    ]
    return ("members: " + "; ".join(names)) if names else ""


def first_member(defs: Sequence[DefLike], member_indexes: Sequence[int]) -> int | None:
    """The first member that is a chunk of its own (a method, a nested class)."""
    for i in member_indexes:
        if defs[i].chunk:
            return i
    return None


def is_bare_header(lines: Sequence[str], start: int, end: int, doc: str) -> bool:
    """A header holding nothing but the declaration: no docstring or doc comment and at most
    two non-blank lines (a decorator and `class X:`, `export class X {`)."""
    if doc:
        return False
    non_blank = sum(1 for i in range(start, end + 1) if lines[i - 1].strip())
    return non_blank <= 2
