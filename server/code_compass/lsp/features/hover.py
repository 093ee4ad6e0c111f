"""`textDocument/hover`: definition links, signature and ranked evidence for a symbol.

Lexical index + symbol table only (no embeddings), so it stays within the hover budget
(issue 4: p95 <= 30 ms at Django scale). `null` for anything that names nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from code_compass.constants import (
    HOVER_EVIDENCE_PER_KIND,
    HOVER_MAX_DEFINITIONS,
    HOVER_MENTIONS_LIMIT,
)
from code_compass.index.languages import DOC_LANGUAGES, PAGED_LANGUAGES, language_for
from code_compass.lsp.features.documents import document_path
from code_compass.lsp.features.evidence import (
    Mention,
    TextCache,
    file_uri,
    is_definition_chunk,
    locate,
)
from code_compass.lsp.identifiers import identifier_at
from code_compass.records import SymbolDef

if TYPE_CHECKING:
    from code_compass.lsp.server import CodeCompassServer


class HoverFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        return await self.ls.run_blocking(self.compute, params)

    def compute(self, params: types.HoverParams) -> types.Hover | None:
        ls = self.ls
        engine = ls.require_engine()
        path = document_path(params.text_document.uri)
        if path is None:
            return None
        found = engine.project_for_path(path)
        if found is None:
            return None
        project, rel = found
        lines = ls.workspace.get_text_document(params.text_document.uri).source.split("\n")
        codec = ls.workspace.position_codec
        if params.position.line >= len(lines):
            return None
        pos = codec.position_from_client_units(lines, params.position)
        line = lines[pos.line]
        word = identifier_at(line, pos.character, language_for(rel) or "text")
        if word is None:
            return None
        defs = engine.symbols_named(word.text, project)
        if not defs:
            return None
        root = ls.roots.get(project) or _root_of(path, rel)
        docs, code = self._evidence(project, word.text, defs)
        value = render(word.text, defs, docs, code, root)
        rng = types.Range(
            start=codec.position_to_client_units(lines, types.Position(pos.line, word.start)),
            end=codec.position_to_client_units(lines, types.Position(pos.line, word.end)),
        )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value), range=rng
        )

    def _evidence(
        self, project: str, name: str, defs: list[SymbolDef]
    ) -> tuple[list[Mention], list[Mention]]:
        engine = self.ls.require_engine()
        cache = TextCache(engine, project)
        docs: list[Mention] = []
        code: list[Mention] = []
        for hit in engine.mentions(name, project, HOVER_MENTIONS_LIMIT):
            if is_definition_chunk(hit, defs):
                continue
            bucket = docs if hit.language in DOC_LANGUAGES else code
            if len(bucket) >= HOVER_EVIDENCE_PER_KIND:
                continue
            mention = locate(hit, name, cache)
            if mention is not None and not any(
                m.path == mention.path and m.line == mention.line for m in bucket
            ):
                bucket.append(mention)
            if len(docs) >= HOVER_EVIDENCE_PER_KIND and len(code) >= HOVER_EVIDENCE_PER_KIND:
                break
        return docs, code


def _root_of(path: Path, rel: str) -> Path:
    parts = len(Path(rel).parts)
    return path.resolve().parents[parts - 1] if parts else path


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|<>~])")


def _md_escape(text: str) -> str:
    """For text inside a code span: only backticks could break out of it."""
    return text.replace("`", "'")


def _md_text(text: str) -> str:
    """Indexed text shown as Markdown is data: escape everything Markdown would act on
    (links, images, emphasis; `__init__.py` must not turn bold)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _link(root: Path, rel: str, line: int, paged: bool = False) -> str:
    label = _md_text(f"{rel}:{line}" if not paged else f"{rel} (page {line})")
    target = file_uri(root, rel) + ("" if paged else f"#L{line}")
    return f"[{label}]({target})"


def render(
    name: str, defs: list[SymbolDef], docs: list[Mention], code: list[Mention], root: Path
) -> str:
    """The hover's Markdown: definitions (links + signatures), then doc and code evidence."""
    out: list[str] = []
    first = defs[0]
    more = f" — {len(defs)} definitions" if len(defs) > 1 else ""
    out.append(f"**{first.kind}** `{first.qualified_name}`{more}")
    for d in defs[:HOVER_MAX_DEFINITIONS]:
        out.append("")
        out.append(f"Defined at {_link(root, d.path, d.name_line)}")
        if d.signature:
            out.append(f"```{d.language}\n{d.signature.strip()}\n```")
    if len(defs) > HOVER_MAX_DEFINITIONS:
        out.append(f"\n…and {len(defs) - HOVER_MAX_DEFINITIONS} more definitions")
    if docs:
        out.append("\n---\n**Mentioned in the docs**\n")
        for m in docs:
            paged = m.language in PAGED_LANGUAGES
            out.append(f"- {_link(root, m.path, m.line, paged)} — {_md_text(m.snippet)}")
    if code:
        out.append("\n---\n**Used in the code**\n")
        for m in code:
            out.append(f"- {_link(root, m.path, m.line)} — `{_md_escape(m.snippet)}`")
    if not docs and not code:
        out.append(f"\n---\n_No passage in this workspace mentions `{name}` yet._")
    return "\n".join(out)
