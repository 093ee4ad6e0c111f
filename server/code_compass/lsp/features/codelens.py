"""`textDocument/codeLens` + `codeLens/resolve`: evidence counts over each definition.

The lens request only counts (one Tantivy count per name) and drops definitions with no
evidence; resolve builds the title ("3 doc references · 12 usages") and the location
list, handed to the client command `codeCompass.showReferences`
([uri, position, locations]; the VS Code client forwards it to
`editor.action.showReferences`).

A "usage" is a code passage (chunk) that mentions the name, other than the passage that
defines it; a "doc reference" is a document passage (Markdown, PDF page, text) that does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from code_compass.constants import LENS_MAX_LOCATIONS
from code_compass.index.languages import DOC_LANGUAGES, PAGED_LANGUAGES
from code_compass.lsp.features.documents import document_path
from code_compass.lsp.features.evidence import (
    TextCache,
    file_uri,
    is_definition_chunk,
    locate,
    name_pattern,
)
from code_compass.records import SymbolDef

if TYPE_CHECKING:
    from code_compass.lsp.server import CodeCompassServer

SHOW_REFERENCES = "codeCompass.showReferences"
RELOCATE_WINDOW = 30  # lines searched around a stale definition line (unsaved edits)


def lens_title(docs: int, usages: int) -> str:
    d = f"{docs} doc reference" + ("" if docs == 1 else "s")
    u = f"{usages} usage" + ("" if usages == 1 else "s")
    return f"{d} · {u}"


class CodeLensFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await self.ls.run_blocking(self.lenses, params.text_document.uri)

    async def resolve(self, lens: types.CodeLens) -> types.CodeLens:
        return await self.ls.run_blocking(self.resolve_lens, lens)

    # -- lens list ---------------------------------------------------------------------
    def lenses(self, uri: str) -> list[types.CodeLens]:
        ls = self.ls
        engine = ls.require_engine()
        path = document_path(uri)
        found = engine.project_for_path(path) if path else None
        if found is None:
            return []
        project, rel = found
        lines = ls.workspace.get_text_document(uri).source.split("\n")
        codec = ls.workspace.position_codec
        counts: dict[str, tuple[int, int, int]] = {}
        out: list[types.CodeLens] = []
        for d in engine.symbols_in_file(project, rel):
            if d.name.startswith("__") and d.name.endswith("__"):
                continue  # dunders: everywhere, evidence about nothing in particular
            if d.name not in counts:
                docs, code = engine.count_mentions(d.name, project)
                n_defs = len(engine.symbols_named(d.name, project))
                counts[d.name] = (docs, code, n_defs)
            docs, code, n_defs = counts[d.name]
            if docs == 0 and code <= n_defs:
                continue  # no evidence beyond the definitions themselves
            at = relocate(lines, d)
            if at is None:
                continue  # the buffer no longer has this definition
            line, col = at
            rng = types.Range(
                start=codec.position_to_client_units(lines, types.Position(line, col)),
                end=codec.position_to_client_units(lines, types.Position(line, col + len(d.name))),
            )
            data = {"project": project, "name": d.name, "uri": uri, "line": line}
            out.append(types.CodeLens(range=rng, data=data))
        return out

    # -- resolve -----------------------------------------------------------------------
    def resolve_lens(self, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data if isinstance(lens.data, dict) else {}
        project, name, uri = data.get("project"), data.get("name"), data.get("uri")
        if not (isinstance(project, str) and isinstance(name, str) and isinstance(uri, str)):
            from code_compass.errors import InputError

            raise InputError("data", "must be the {project, name, uri, line} a lens was sent with")
        engine = self.ls.require_engine()
        if project not in engine.projects():
            lens.command = types.Command(title="project closed", command="")
            return lens
        defs = engine.symbols_named(name, project)
        docs_count, code_count = engine.count_mentions(name, project)
        cache = TextCache(engine, project)
        root = self.ls.roots.get(project, Path("/"))
        locations: list[dict[str, Any]] = []
        def_chunks = 0
        for hit in engine.mentions(name, project, LENS_MAX_LOCATIONS):
            if hit.language not in DOC_LANGUAGES and is_definition_chunk(hit, defs):
                def_chunks += 1
                continue
            m = locate(hit, name, cache)
            if m is None:
                continue
            paged = m.language in PAGED_LANGUAGES
            line = 0 if paged else m.line - 1
            col = 0 if paged else m.column
            locations.append(
                {
                    "uri": file_uri(root, m.path),
                    "range": {
                        "start": {"line": line, "character": col},
                        "end": {"line": line, "character": col + len(name)},
                    },
                }
            )
        usages = max(0, code_count - def_chunks)
        title = lens_title(docs_count, usages)
        position = {"line": lens.range.start.line, "character": lens.range.start.character}
        lens.command = types.Command(
            title=title, command=SHOW_REFERENCES, arguments=[uri, position, locations]
        )
        return lens


def relocate(lines: list[str], d: SymbolDef) -> tuple[int, int] | None:
    """(0-based line, column) of the definition's name in the current text."""
    pattern = name_pattern(d.name)
    guess = d.name_line - 1
    if 0 <= guess < len(lines):
        line = lines[guess]
        if line[d.name_col : d.name_col + len(d.name)] == d.name:
            return guess, d.name_col
        m = pattern.search(line)
        if m:
            return guess, m.start()
    for delta in range(1, RELOCATE_WINDOW + 1):
        for n in (guess - delta, guess + delta):
            if 0 <= n < len(lines):
                m = pattern.search(lines[n])
                if m:
                    return n, m.start()
    return None
