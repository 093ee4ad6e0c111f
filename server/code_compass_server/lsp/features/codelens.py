"""`textDocument/codeLens` + `codeLens/resolve`: evidence counts over each definition.

The lens request only checks that there may be evidence (one Tantivy count per name); resolve
reads the passages and builds a title whose numbers are the locations it lists: a "usage" is a
line of source code (not configuration or scripts) where the name is an identifier token
(never a comment, docstring or string), other than a definition's own line; a "doc reference"
is a prose line that mentions the symbol (backticked, qualified, or a name that cannot be an
English word). The peek lists at most
`LENS_MAX_LOCATIONS` locations, docs first, each re-read from the buffer or disk; the lines
past them are counted from the passages' indexed text (no file read), and the title says
"showing 50 of 511".

The lens command is `codeCompass.showReferences` with [uri, position, locations]. The VS Code
client runs it itself (a peek view); any other client runs it on the server through
`workspace/executeCommand`, which returns the locations and opens the first with
`window/showDocument` when the client supports it. One lens per name and container in a
file: `@overload` stubs, property setters and the implementation share it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from code_compass_server.constants import (
    LENS_MAX_LOCATIONS,
)
from code_compass_server.index.languages import (
    PAGED_LANGUAGES,
    language_for,
)
from code_compass_server.lsp.features.documents import document_path, file_uri
from code_compass_server.records import VALUE_KINDS, SymbolDef
from code_compass_server.symbols.lens_references import LensReferences, lens_references
from code_compass_server.symbols.lens_usages import UsageResolver
from code_compass_server.symbols.mentions import Mention, Subject, name_pattern
from code_compass_server.symbols.resolve import shared_resolver
from code_compass_server.symbols.resolve_tree import TS_LANGUAGES

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

SHOW_REFERENCES = "codeCompass.showReferences"
RELOCATE_WINDOW = 30  # lines searched around a stale definition line (unsaved edits)


def lens_title(docs: int, usages: int, shown: int, capped: bool = False, by_name: int = 0) -> str:
    """ "3 doc references · 12 usages"; "… · 4 by name" for code tokens of the name that
    could not be resolved; "… · showing 50 of 511" when the peek is capped."""
    d = f"{docs} doc reference" + ("" if docs == 1 else "s")
    u = f"{usages} usage" + ("" if usages == 1 else "s")
    total = docs + usages + by_name
    title = f"{d} · {u}" + (f" · {by_name} by name" if by_name else "")
    if shown < total or capped:
        title += f" · showing {shown} of {total}{'+' if capped else ''}"
    return title


class CodeLensFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls
        self.usages = UsageResolver(shared_resolver(ls))

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await self.ls.run_blocking(self.lenses, params.text_document.uri)

    async def resolve(self, lens: types.CodeLens) -> types.CodeLens:
        return await self.ls.run_blocking(self.resolve_in_foreground, lens)

    def resolve_in_foreground(self, lens: types.CodeLens) -> types.CodeLens:
        with self.usages.resolver.foreground():  # background parses and collections wait
            return self.resolve_lens(lens)

    # -- the lens command, for clients that do not run it themselves -------------------
    def offer_command(self, params: types.InitializeParams) -> None:
        """Register `codeCompass.showReferences` with the server unless the client says it
        runs it itself (initializationOptions.clientCommands): a client whose own command
        has that name would otherwise get it twice."""
        opts = params.initialization_options
        own = opts.get("clientCommands") if isinstance(opts, dict) else None
        if isinstance(own, list) and SHOW_REFERENCES in own:
            return
        if SHOW_REFERENCES in self.ls.protocol.fm.commands:
            return

        # A plain function: pygls tags command handlers with attributes.
        async def show_references(
            uri: Any = None, position: Any = None, locations: Any = None
        ) -> list[dict[str, Any]]:
            return await self.show_references(uri, position, locations)

        self.ls.command(SHOW_REFERENCES)(show_references)

    async def show_references(
        self, uri: Any = None, position: Any = None, locations: Any = None
    ) -> list[dict[str, Any]]:
        """The lens's locations; the first is opened when the client can show documents."""
        found = [loc for loc in locations or [] if _is_location(loc)]
        caps = self.ls.protocol.client_capabilities
        window = getattr(caps, "window", None) if caps else None
        show = window.show_document if window is not None else None
        # neovim 0.7 declares the capability with support=false, and errors on the request.
        if found and show is not None and show.support:
            first = found[0]
            start = types.Position(**first["range"]["start"])
            end = types.Position(**first["range"]["end"])
            await self.ls.window_show_document_async(
                types.ShowDocumentParams(
                    uri=first["uri"], take_focus=True, selection=types.Range(start, end)
                )
            )
        return found

    # -- lens list ---------------------------------------------------------------------
    def lenses(self, uri: str) -> list[types.CodeLens]:
        ls = self.ls
        engine = ls.require_engine()
        if not engine.settings.code_lens:
            return []
        path = document_path(uri)
        found = engine.project_for_path(path) if path else None
        if found is None:
            return []
        project, rel = found
        source = ls.workspace.get_text_document(uri).source
        lines = source.split("\n")
        root = ls.roots.get(project)
        language = language_for(rel)
        if root is not None and language is not None:
            # Clients ask for lenses when a file opens: parse it (and what it imports) now,
            # so the first hovers in it take the fast path.
            shared_resolver(ls).warm_later(root, rel, language, source)
        codec = ls.workspace.position_codec
        counts: dict[str, tuple[int, int, int]] = {}
        seen: set[tuple[str, str]] = set()
        out: list[types.CodeLens] = []
        for d in engine.symbols_in_file(project, rel):
            if d.name.startswith("__") and d.name.endswith("__"):
                continue  # dunders: everywhere, evidence about nothing in particular
            if d.name == "constructor" and d.language in TS_LANGUAGES:
                continue  # used as `new Class(…)`: the class's lens counts those
            if d.kind in VALUE_KINDS:
                continue  # a lens on every constant and attribute would bury the definitions'
            if (d.container, d.name) in seen:
                continue  # overload stubs / setters: one lens for the name
            seen.add((d.container, d.name))
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
            data = {
                "project": project,
                "name": d.name,
                "container": d.container,
                "uri": uri,
                "line": line,
            }
            out.append(types.CodeLens(range=rng, data=data))
        return out

    # -- resolve -----------------------------------------------------------------------
    def resolve_lens(self, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data if isinstance(lens.data, dict) else {}
        project, name, uri = data.get("project"), data.get("name"), data.get("uri")
        if not (isinstance(project, str) and isinstance(name, str) and isinstance(uri, str)):
            from code_compass_server.errors import InputError

            raise InputError("data", "must be the {project, name, uri, line} a lens was sent with")
        engine = self.ls.require_engine()
        if project not in engine.projects():
            lens.command = types.Command(title="project closed", command="")
            return lens
        container = data.get("container")
        container = container if isinstance(container, str) else ""
        path = document_path(uri)
        found = engine.project_for_path(path) if path else None
        rel = found[1] if found is not None else ""
        group = [
            d for d in engine.symbols_in_file(project, rel)
            if d.name == name and d.container == container
        ]  # fmt: skip
        refs = self.references(project, Subject(name, (container,) if container else ()), group)
        root = self.ls.roots.get(project, Path("/"))
        shown = (refs.docs + refs.usages + refs.by_name)[:LENS_MAX_LOCATIONS]
        locations = [_location(root, m, len(name)) for m in shown]
        title = lens_title(
            len(refs.docs), len(refs.usages), len(locations), refs.capped, len(refs.by_name)
        )
        position = {"line": lens.range.start.line, "character": lens.range.start.character}
        lens.command = types.Command(
            title=title, command=SHOW_REFERENCES, arguments=[uri, position, locations]
        )
        return lens

    def references(self, project: str, subject: Subject, group: list[SymbolDef]) -> LensReferences:
        root = self.ls.roots.get(project)
        engine = self.ls.require_engine()
        docs = self.ls.workspace.text_documents

        def buffer(rel: str) -> str | None:
            doc = docs.get((root / rel).as_uri()) if root is not None else None
            return doc.source if doc is not None else None

        return lens_references(
            engine, project, root, self.usages, subject, group, buffer, self._refresh
        )

    def _refresh(self) -> None:
        """Background resolution changed what lenses would say: ask the client to re-read
        them, when it can (`workspace/codeLens/refresh`)."""
        caps = self.ls.protocol.client_capabilities
        ws = getattr(caps, "workspace", None) if caps else None
        lens_caps = getattr(ws, "code_lens", None) if ws else None
        if lens_caps is not None and lens_caps.refresh_support:

            def ask() -> None:
                self.ls.workspace_code_lens_refresh(None)

            self.ls.call_in_loop(ask)


def _is_location(loc: Any) -> bool:
    try:
        return isinstance(loc["uri"], str) and all(
            isinstance(loc["range"][k][f], int)
            for k in ("start", "end")
            for f in ("line", "character")
        )
    except (KeyError, TypeError):
        return False


def _location(root: Path, m: Mention, width: int) -> dict[str, Any]:
    paged = m.language in PAGED_LANGUAGES
    line = 0 if paged else m.line - 1
    col = 0 if paged else m.column
    return {
        "uri": file_uri(root, m.path),
        "range": {
            "start": {"line": line, "character": col},
            "end": {"line": line, "character": col + width},
        },
    }


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
