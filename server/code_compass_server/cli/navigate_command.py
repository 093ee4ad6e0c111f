"""`code-compass definition PATH:LINE:COL` and `code-compass references PATH:LINE:COL`.

The symbol at a position (line and column 1-based, as compilers print them) resolved as its
language does, by the engine's `SymbolNavigator` (the resolver the editor's hover uses).
`--json` prints `{"definitions": [...]}` or `{"references": [...]}`, each location
`{path, startLine, endLine, line, column, symbol, kind, snippet, resolved}`, best first.
A path outside every workspace folder, a line past the end of the file or a column that is
not a whole number is bad input: exit 2 with the reason on stderr, nothing indexed.
`references --limit N` lists N references (0: all; the default is the MCP tool's cap).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from code_compass_server.constants import SYMBOL_REFERENCES_LIMIT
from code_compass_server.errors import InputError

COMMANDS = ("definition", "references")


def add_parsers(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """The two commands' arguments, with the options every command shares."""
    for name, what in (
        ("definition", "where the symbol at PATH:LINE:COL is defined"),
        ("references", "code that uses the symbol at PATH:LINE:COL"),
    ):
        p = sub.add_parser(name, help=what)
        common(p)
        p.add_argument("position", help="PATH:LINE:COL, line and column 1-based (src/app.py:12:5)")
        if name == "references":
            p.add_argument(
                "--limit",
                default=str(SYMBOL_REFERENCES_LIMIT),
                help=f"references listed (default {SYMBOL_REFERENCES_LIMIT}; 0: all of them)",
            )


def parse_position(raw: str, roots: list[Path]) -> tuple[int, str, int, int]:
    """(index of the root, workspace-relative path, line, column) of `PATH:LINE:COL`.

    A relative PATH is read from the current folder, else from a workspace folder; it must
    be a file inside one of `roots` (also after following links)."""
    parts = raw.rsplit(":", 2)
    if len(parts) != 3 or not parts[0]:
        raise InputError("position", f"'{raw}' is not PATH:LINE:COL (e.g. src/app.py:12:5)")
    path_text, line_text, col_text = parts
    line = _whole(line_text, "line")
    column = _whole(col_text, "column")
    given = Path(path_text).expanduser()
    tries = [given] if given.is_absolute() else [Path.cwd() / given, *(r / given for r in roots)]
    resolved_roots = [r.expanduser().resolve() for r in roots]
    outside = False
    for candidate in tries:
        target = candidate.resolve()
        for i, root in enumerate(resolved_roots):
            try:
                rel = target.relative_to(root).as_posix()
            except ValueError:
                continue
            if target.is_dir():
                raise InputError("path", f"'{path_text}' is a folder; give a file in it")
            if target.is_file():
                return i, rel, line, column
        outside = outside or candidate.exists()
    if outside:
        where = ", ".join(str(r) for r in resolved_roots)
        raise InputError(
            "path",
            f"'{path_text}' is outside the workspace ({where}); give a file inside it or "
            "pass --workspace",
        )
    raise InputError("path", f"no file '{path_text}' in the workspace")


def _whole(text: str, field: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise InputError(field, f"'{text}' is not a whole number of at least 1 (1-based)")
    return int(text)


def cmd_navigate(args: argparse.Namespace) -> int:
    from code_compass_server.cli.commands import open_engine, print_json

    roots = args.workspace or [Path.cwd()]
    index, rel, line, column = parse_position(args.position, roots)  # bad input: nothing opened
    limit: int | None = None
    if args.command == "references":
        raw = args.limit
        if not raw.isdigit():
            raise InputError("limit", f"'{raw}' is not a whole number (0 lists every reference)")
        limit = int(raw) or None
    engine, names = open_engine(args, queries_only=True)
    try:
        project = names[index]
        engine.index(project, embed=False, background_embed=False)  # stat-only when unchanged
        if args.command == "definition":
            found = engine.definitions(project, rel, line, column)
        else:
            found = engine.references(project, rel, line, column, limit=limit)
        key = "definitions" if args.command == "definition" else "references"
        out: dict[str, Any] = {
            "name": found.name,
            key: [loc.to_json() for loc in found.locations],
            "total": found.total,
        }
        if found.outside:
            out["outside"] = found.outside
        if args.command == "references":
            out["byName"] = [loc.to_json() for loc in found.by_name]
        if args.json:
            print_json(out)
            return 0
        if not found.name:
            print(f"no identifier at {rel}:{line}:{column}")
        elif found.outside:
            print(f"{found.name}: defined outside the workspace ({found.outside})")
        elif not found.locations and not found.by_name:
            print(f"{found.name}: no {key} in the workspace")
        for loc in found.locations:
            first = loc.snippet.split("\n", 1)[0].strip()
            print(f"{loc.path}:{loc.line}:{loc.column}: {loc.kind} {loc.symbol}  {first}")
        for loc in found.by_name:
            print(f"{loc.path}:{loc.line}:{loc.column}: by name  {loc.snippet}")
        return 0
    finally:
        engine.close()
