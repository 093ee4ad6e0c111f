"""Definitions and references of the symbol at a position, for scripts and agents.

The same resolver as the editor's hover and code lens (`resolve.SymbolResolver`: parse trees,
then jedi for Python), without a hover's deadline: a command or a tool call may wait for
jedi. References are the name's identifier tokens in code that resolve to the definition;
tokens whose resolution fails are returned apart, "by name". Every location is re-read from
the file (the editor's buffer when one is published) and nothing outside the workspace or in a
secret file is shown: the source refuses to read those.

Knows nothing of the CLI, MCP or LSP: the engine hands it a `SymbolSource` (its own reading,
symbol table and mentions) and the front doors turn `Lookup` into JSON.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from code_compass_server.constants import (
    LENS_SCAN_CHUNKS,
    SYMBOL_REFERENCES_BUDGET_S,
    SYMBOL_REFERENCES_LIMIT,
    SYMBOL_REFERENCES_SCAN_CHUNKS,
    SYMBOL_RESOLVE_BUDGET_S,
    SYMBOL_SNIPPET_MAX_LINES,
)
from code_compass_server.errors import InputError
from code_compass_server.index.languages import CODE_LANGUAGES, language_for
from code_compass_server.records import SymbolDef
from code_compass_server.symbols.code_names import code_columns_in
from code_compass_server.symbols.identifiers import identifier_at
from code_compass_server.symbols.lens_usages import UsageResolver, same_family
from code_compass_server.symbols.mentions import NameIndex
from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_go import go_tool_ignores
from code_compass_server.symbols.resolve_model import Resolution, Target
from code_compass_server.symbols.resolve_tree import TS_LANGUAGES

# `name = other`, `export const name = other;`, `var Name = pkg.Other`: another name for a
# definition elsewhere (a wrapper or alias), in Python, TypeScript/JavaScript and Go.
_ALIAS = re.compile(
    r"^\s*(?:export\s+)?(?:const\s+|let\s+|var\s+)?(?P<name>[A-Za-z_$][\w$]*)\s*"
    r"(?::\s*[^=]+)?=\s*(?P<value>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*;?\s*$"
)


class SymbolSource(NameIndex, Protocol):
    """What navigation reads, from the engine: its look-ups by name and files (never outside a
    root)."""

    def read_text(self, project: str, rel_path: str) -> str | None: ...


@dataclass(frozen=True, slots=True)
class SymbolLocation:
    """A definition or a reference as the front doors show it (1-based lines and column)."""

    path: str  # workspace-relative, '/'
    start_line: int
    end_line: int
    line: int  # the name's line
    column: int  # the name's column, 1-based (characters)
    symbol: str  # qualified name ("Flask.run", "mux.Router.HandleFunc")
    kind: str
    snippet: str  # re-read from the file now
    resolved: bool = True  # False: matched by name only (resolution failed)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "line": self.line,
            "column": self.column,
            "symbol": self.symbol,
            "kind": self.kind,
            "snippet": self.snippet,
            "resolved": self.resolved,
        }


@dataclass(frozen=True, slots=True)
class Lookup:
    """What a definition or references request found at a position."""

    name: str  # the identifier at the position; "" when there is none
    locations: list[SymbolLocation]  # best first
    outside: str = ""  # defined outside the workspace ("json.dumps"): no location
    by_name: list[SymbolLocation] = field(default_factory=list)  # references not resolved
    total: int = 0  # locations found before the limit


class SymbolNavigator:
    """Definitions and references at a position of a workspace file."""

    def __init__(self, source: SymbolSource, resolver: SymbolResolver | None = None) -> None:
        self.source = source
        self.resolver = resolver or SymbolResolver(SYMBOL_RESOLVE_BUDGET_S)
        self.usages = UsageResolver(self.resolver)

    def close(self) -> None:
        self.resolver.close()

    # -- definitions ---------------------------------------------------------------------
    def definitions(self, project: str, root: Path, rel: str, line: int, column: int) -> Lookup:
        """Where the identifier at (1-based `line`, `column`) of `rel` is defined."""
        name, res = self._resolve(project, root, rel, line, column)
        if not name:
            return Lookup("", [])
        if res is not None and res.is_outside:
            return Lookup(name, [], outside=res.outside)
        if res is not None and res.targets:
            table = self.source.symbols_named(name, project)
            shown = [self._definition(project, t, table) for t in res.targets]
            found = [s for s in shown if s is not None]
            return Lookup(name, found, total=len(found))
        # Resolution failed: the name lookup, labelled as such (never passed off as resolved).
        defs = self.source.symbols_named(name, project)
        by_name = [self._row(project, d, resolved=False) for d in defs]
        found = [s for s in by_name if s is not None]
        return Lookup(name, found, total=len(found))

    # -- references ----------------------------------------------------------------------
    def references(
        self,
        project: str,
        root: Path,
        rel: str,
        line: int,
        column: int,
        limit: int | None = SYMBOL_REFERENCES_LIMIT,
    ) -> Lookup:
        """The definition of the identifier at the position (first, kind "definition", as
        compilers list it among the references), then the code tokens that resolve to it;
        tokens whose resolution failed go to `by_name`. At most `limit` of each are listed
        (None: all); `total` counts every resolved one."""
        name, res = self._resolve(project, root, rel, line, column)
        if not name:
            return Lookup("", [])
        if res is not None and res.is_outside:
            return Lookup(name, [], outside=res.outside)
        if res is None or not res.targets:
            return Lookup(name, [])
        targets = [t for t in res.targets if self.source.read_text(project, t.path) is not None]
        if not targets:
            return Lookup(name, [])
        texts: dict[str, str | None] = {}

        def text_of(path: str) -> str | None:
            if path not in texts:
                texts[path] = self.source.read_text(project, path)
            return texts[path]

        candidates = self._candidates(project, name, targets, text_of)
        wanted = frozenset((t.path, t.line) for t in targets)
        deadline = time.perf_counter() + SYMBOL_REFERENCES_BUDGET_S
        usages, left = self.usages.classify(root, wanted, candidates, text_of, 1.0)
        if left and time.perf_counter() < deadline:
            # The caller waits for this answer: no background size limit on parses.
            self.usages.finish_now(root, left, max_parse_bytes=None, deadline=deadline)
            usages, _ = self.usages.classify(root, wanted, candidates, text_of, 0.0)
        symbol = _qualified(targets[0], self.source.symbols_named(name, project))
        first = targets[0].path

        def located(tokens: list[tuple[str, int, int]], resolved: bool) -> list[SymbolLocation]:
            out = []
            for path, ln, col in sorted(tokens, key=lambda t: (t[0] != first, t[0], t[1], t[2])):
                text = text_of(path)
                lines = text.split("\n") if text is not None else []
                snippet = lines[ln - 1].strip() if 0 < ln <= len(lines) else ""
                out.append(
                    SymbolLocation(
                        path, ln, ln, ln, col + 1, symbol, "reference", snippet, resolved
                    )
                )
            return out

        own = [
            replace(loc, kind="definition")
            for loc in located([(t.path, t.line, t.column) for t in targets], True)
        ]
        found = own + located([(t.path, t.line, t.column) for t in usages.resolved], True)
        unsure = located([(t.path, t.line, t.column) for t in usages.by_name], False)
        return Lookup(
            name,
            found[:limit],
            by_name=unsure[:limit],
            total=len(found),
        )

    # -- ranking the symbol table ----------------------------------------------------------
    def rank_definitions(self, project: str, root: Path, defs: list[SymbolDef]) -> list[bool]:
        """For each row of the symbol table: is it the real declaration of its name? False
        for a row that is only another name for a definition elsewhere (`render = _render`,
        `export const x = y`, `var X = pkg.Y`, an import alias), so callers can list real
        declarations first."""
        out = []
        for d in defs:
            language = d.language or language_for(d.path) or ""
            text = self.source.read_text(project, d.path)
            lines = text.split("\n") if text is not None else []
            row = lines[d.name_line - 1] if 0 < d.name_line <= len(lines) else ""
            alias = _ALIAS.match(row)
            if alias is None or alias.group("name") != d.name:
                out.append(True)
                continue
            value = alias.group("value")
            column = alias.start("value") + value.rfind(".") + 1  # the last part of `pkg.other`
            res = self.resolver.fast(root, d.path, language, text, d.name_line - 1, column)
            elsewhere = res is not None and any(
                (t.path, t.line) != (d.path, d.name_line) for t in res.targets
            )
            out.append(not elsewhere)
        return out

    # -- helpers ---------------------------------------------------------------------------
    def _resolve(
        self, project: str, root: Path, rel: str, line: int, column: int
    ) -> tuple[str, Resolution | None]:
        text = self.source.read_text(project, rel)
        if text is None:
            raise InputError(
                "path",
                f"'{rel}' cannot be read: a secret file, not a text file, or over the size limit",
            )
        lines = text.split("\n")
        if line > len(lines):
            raise InputError("line", f"is past the end of '{rel}', which has {len(lines)} lines")
        row = lines[line - 1]
        if column > len(row) + 1:
            raise InputError(
                "column", f"is past the end of line {line} of '{rel}' ({len(row)} characters)"
            )
        language = language_for(rel) or "text"
        word = identifier_at(row, column - 1, language)
        if word is None:
            return "", None
        res = self.resolver.resolve(root, rel, language, text, line - 1, word.start)
        if res is None and language == "python":
            self.resolver.wait_idle(SYMBOL_RESOLVE_BUDGET_S)  # another call held jedi's lane
            res = self.resolver.resolve(root, rel, language, text, line - 1, word.start)
        if res is not None:
            # Confinement: a target the workspace's reader refuses (a secret file, a link out
            # of the root) is not shown.
            kept = tuple(
                t for t in res.targets if self.source.read_text(project, t.path) is not None
            )
            if res.targets and not kept:
                return word.text, None
            res = Resolution(kept, res.outside)
        return word.text, res

    def _candidates(
        self,
        project: str,
        name: str,
        targets: list[Target],
        read: Callable[[str], str | None],
    ) -> dict[str, list[tuple[int, int]]]:
        """rel -> (1-based line, column) of the name's code tokens in files that mention it;
        the definitions' own tokens excluded. A local is only used in its own file."""
        def_language = language_for(targets[0].path) or ""
        own = {(t.path, t.line, t.column) for t in targets}
        # The definitions' own files always (in a large project their other uses of the name
        # may rank below the lexical scan's limit); a local, or a JavaScript private name
        # (`#x`: only its class's body can say it), is used there only.
        paths = {t.path for t in targets}
        if not (all(t.local for t in targets) or name.startswith("#")):
            # Go: code the go tool leaves out of the module (`_examples/`, `testdata/`)
            # cannot refer to its declarations, unless the definition is there too.
            outside_module = def_language == "go" and not any(
                go_tool_ignores(t.path) for t in targets
            )
            for hit in self.source.mentions(name, project, SYMBOL_REFERENCES_SCAN_CHUNKS):
                code = hit.language in CODE_LANGUAGES
                ignored = outside_module and go_tool_ignores(hit.path)
                if code and same_family(def_language, hit.language) and not ignored:
                    paths.add(hit.path)
        out: dict[str, list[tuple[int, int]]] = {}
        # TypeScript/JavaScript: `import { name as alias }` makes `alias` another name of the
        # definition in that module (the language service lists its uses among the
        # references); `export { name as alias }` in every module that imports `alias`.
        # Their tokens are candidates too; resolution decides, as for the name's own.
        names = {path: {name} for path in paths}
        if def_language in TS_LANGUAGES:
            for path in sorted(paths):
                text = read(path)
                for alias, exported in renamed_imports(text or "", name):
                    names[path].add(alias)
                    if exported:
                        for hit in self.source.mentions(alias, project, LENS_SCAN_CHUNKS):
                            if hit.language in CODE_LANGUAGES and same_family(
                                def_language, hit.language
                            ):
                                names.setdefault(hit.path, set()).add(alias)
        for path in sorted(names):
            text = read(path)
            language = language_for(path)
            if text is None or language is None:
                continue
            tokens = sorted(
                (ln, col)
                for each in names[path]
                for ln, cols in code_columns_in(text, language, each).items()
                for col in cols
                if (path, ln, col) not in own
            )
            if tokens:
                out[path] = tokens
        return out

    def _definition(self, project: str, t: Target, table: list[SymbolDef]) -> SymbolLocation | None:
        row = next((d for d in table if d.path == t.path and d.name_line == t.line), None)
        if row is not None:
            return self._row(project, row, resolved=True, column=t.column)
        text = self.source.read_text(project, t.path)
        if text is None:
            return None
        lines = text.split("\n")
        snippet = lines[t.line - 1] if 0 < t.line <= len(lines) else ""
        kind = {"statement": "variable", "instance": "variable", "param": "parameter"}.get(
            t.kind, t.kind
        )
        return SymbolLocation(
            t.path, t.line, t.line, t.line, t.column + 1, _qualified(t, table), kind, snippet
        )

    def _row(
        self, project: str, d: SymbolDef, resolved: bool, column: int | None = None
    ) -> SymbolLocation | None:
        text = self.source.read_text(project, d.path)
        if text is None:
            return None
        lines = text.split("\n")
        start, end = max(1, d.start_line), min(len(lines), d.end_line)
        shown = lines[start - 1 : min(end, start + SYMBOL_SNIPPET_MAX_LINES - 1)]
        col = d.name_col if column is None else column
        return SymbolLocation(
            d.path, start, max(start, end), d.name_line, col + 1, d.qualified_name, d.kind,
            "\n".join(shown), resolved,
        )  # fmt: skip


_SPECIFIERS = re.compile(
    r"\b(?P<kind>import|export)\s+(?:type\s+)?(?:[A-Za-z_$][\w$]*\s*,\s*)?\{(?P<body>[^{}]*)\}"
)


def renamed_imports(text: str, name: str) -> list[tuple[str, bool]]:
    """(alias, in an export) for each `import { name as alias }` / `export { name as alias }`
    of a JavaScript/TypeScript module's text."""
    if " as " not in text or name not in text:
        return []
    renamed = re.compile(rf"(?<![\w$.]){re.escape(name)}\s+as\s+([A-Za-z_$][\w$]*)")
    out = []
    for m in _SPECIFIERS.finditer(text):
        for r in renamed.finditer(m.group("body")):
            if r.group(1) != name:
                out.append((r.group(1), m.group("kind") == "export"))
    return out


def _qualified(t: Target, table: list[SymbolDef]) -> str:
    """The symbol table's qualified name for a target, else the last two parts of its full
    name (a local's own name)."""
    row = next((d for d in table if d.path == t.path and d.name_line == t.line), None)
    if row is not None:
        return row.qualified_name
    if t.local:
        return t.name
    parts = [p for p in t.full_name.split(".") if p]
    return ".".join(parts[-2:]) if len(parts) >= 2 else t.name
