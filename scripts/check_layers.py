#!/usr/bin/env python3
"""Check who may import whom: the server's packages and the client's pure modules.

The server (`server/code_compass_server`) is cut into units: each package (`index/`, …) and
each top-level module (`engine.py`, `cli.py`, …). `ALLOWED` below says which units each unit may
import; every `import` in the source counts, including imports inside functions and under
`TYPE_CHECKING`. `INNER` adds finer rules inside a package. In the client, the pure modules
(unit-tested under node without VS Code) must not import `vscode`.

Prints the import graph between units, then every violation with file:line; exits 1 if there
is one. docs/architecture.md explains the table, one section per folder.

Usage: scripts/check_layers.py [--server DIR] [--client DIR] [--quiet]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "code_compass_server"
REPO = Path(__file__).resolve().parent.parent

# Shared leaves: records, limits, errors and the JSON-lines log writer every layer may use.
LEAVES = {
    "__init__", "cancellation", "constants", "errors", "records", "jsonl_log", "storage",
    "text_escape",  # control characters made visible: every printer may use it
}  # fmt: skip
# The engine side: everything below the front doors.
CORE = LEAVES | {
    "validation",
    "storage",
    "settings",
    "index",
    "embed",
    "search",
    "query",
    "answer",
    "depth",
    "symbols",
}
# What a front door may use: the engine facade and the shared records, settings and validation.
FRONT = LEAVES | {"engine", "engine_status", "settings", "validation"}

ALLOWED: dict[str, set[str]] = {
    "__init__": set(),
    "__main__": {"cli"},
    "constants": set(),
    "errors": set(),
    "records": set(),
    "jsonl_log": {"constants"},
    "storage": set(),
    "text_escape": set(),
    "validation": LEAVES,
    "settings": LEAVES | {"index"},  # index.scan.ScanSettings is part of the engine's settings
    # The index knows nothing above it: no search, embeddings, answers or depth.
    "index": LEAVES,
    # Embeddings and search read the index's records and stores; search never imports embed
    # (the engine hands it the semantic channel as a function).
    # embed/links.py builds the semantic channel it hands to search (search never imports embed).
    "embed": LEAVES | {"index", "search"},
    # The engine's typed status, read from its services (the front doors turn it into JSON).
    "engine_status": LEAVES | {"index", "embed"},
    "search": LEAVES | {"index", "query"},
    # The query builder is pure text logic over its own lexicon: nothing below or above it.
    "query": LEAVES,
    # The depth controller is pure text logic over the conversation: it never searches itself
    # (a search function is passed in) and knows nothing of answers.
    "depth": LEAVES | {"validation"},
    # Answers see the index through the EvidenceSource protocol, never the engine or search;
    # index.textio is imported for its line-splitting contract with the editor.
    "answer": LEAVES | {"validation", "depth", "index", "query"},
    # The team index (PostgreSQL): the local index's parsers, tokens and stores' record types,
    # the embedding text rules, search's candidate records; the engine's typed status.
    "team": LEAVES | {"index", "embed", "search", "engine_status"},
    # Semantics: the identifier at a position resolved as its language does, references to a
    # definition, their caches and budgets. It reads files and grammars (index.languages,
    # index.chunk.treesitter) and is handed the symbol table and mentions by the engine
    # (a protocol, like answer's EvidenceSource): never search, the engine or a front door.
    "symbols": LEAVES | {"index"},
    "engine": CORE | {"engine_status", "team", "symbols"},
    # Front doors. lsp -> index is tolerated (see TOLERATED); cli is the program's entry point
    # and starts the other front doors. lsp drives the resolver itself (hover and code lens
    # hold its foreground while they resolve, and warm it when a file opens).
    "lsp": FRONT | {"index", "symbols"},
    # mcp validates an ask with answer.request before opening anything (as cli does) and cuts
    # open_file's lines with index.textio, the editor's line contract.
    "mcp": FRONT | {"answer", "index"},
    # cli -> team: `db start/stop/user add` and `index --database` (the push's progress).
    # cli -> embed: a one-shot search forks its query model (embed.forked_model) before
    # the engine's imports, and hands it to the engine.
    "cli": FRONT | {"lsp", "mcp", "answer", "depth", "index", "team", "embed"},
}

# Allowed edges that should go away; printed as warnings, not failures.
TOLERATED: dict[tuple[str, str], str] = {
    ("lsp", "index"): "hover and lens read index.languages (which languages are "
    "documents); progress reads the scheduler's records (index.job_records, index.summary); "
    "serve caps the process's malloc arenas before its threads start (index.heap)",
    ("cli", "index"): "the index command shows the index's progress records (index.summary) "
    "and the writer's live progress (index.live_progress)",
}

# Finer rules inside a package: modules under the key may import only these prefixes.
INNER: dict[str, tuple[str, ...]] = {
    # Chunkers are pure (bytes -> ParsedFile): no catalog, Tantivy, indexer or watcher.
    f"{PACKAGE}.index.chunk": (
        f"{PACKAGE}.index.chunk",
        f"{PACKAGE}.index.textio",
        f"{PACKAGE}.index.languages",
        f"{PACKAGE}.constants",
        f"{PACKAGE}.records",
    ),
}

# Client modules that must run under node without VS Code (unit-tested by `npm test`).
CLIENT_PURE = (
    "render/",
    "format/",
    "locations.ts",
    "settings.ts",
    "pythonEnv.ts",
    "protocol.ts",
    "conversation.ts",
    "suggestions.ts",
)
_TS_IMPORT = re.compile(r"""(?:from\s+|require\(\s*|import\(\s*)["']([^"']+)["']""")


@dataclass(frozen=True, slots=True)
class Edge:
    src_module: str
    dst_module: str
    path: Path
    line: int


def module_name(path: Path, server: Path) -> str:
    rel = path.relative_to(server).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def unit_of(module: str) -> str | None:
    """`<pkg>.index.scan` -> `index`; `<pkg>` -> `__init__`; other -> None."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def imports(path: Path, server: Path) -> list[Edge]:
    module = module_name(path, server)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[Edge] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(Edge(module, a.name, path, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == PACKAGE:  # `from code_compass_server import engine` names submodules
                for a in node.names:
                    sub = server / PACKAGE / a.name
                    named = f"{PACKAGE}.{a.name}"
                    is_sub = sub.is_dir() or sub.with_suffix(".py").exists()
                    out.append(Edge(module, named if is_sub else PACKAGE, path, node.lineno))
            else:
                out.append(Edge(module, target, path, node.lineno))
    return [e for e in out if e.dst_module.split(".")[0] == PACKAGE]


def check_server(server: Path) -> tuple[dict[tuple[str, str], int], list[str], list[str]]:
    graph: dict[tuple[str, str], int] = defaultdict(int)
    violations: list[str] = []
    warnings: list[str] = []
    for path in sorted((server / PACKAGE).rglob("*.py")):
        for e in imports(path, server):
            src, dst = unit_of(e.src_module), unit_of(e.dst_module)
            assert src is not None and dst is not None
            where = f"{path.relative_to(server.parent)}:{e.line}"
            for prefix, allowed in INNER.items():
                inside = e.src_module == prefix or e.src_module.startswith(prefix + ".")
                if inside and not any(
                    e.dst_module == a or e.dst_module.startswith(a + ".") for a in allowed
                ):
                    violations.append(f"{where}: {e.src_module} imports {e.dst_module}")
            if src == dst:
                continue
            graph[(src, dst)] += 1
            if src not in ALLOWED:
                violations.append(f"{where}: unit '{src}' is not in ALLOWED; add it")
            elif dst not in ALLOWED[src]:
                violations.append(f"{where}: {src} must not import {dst} ({e.dst_module})")
            elif (src, dst) in TOLERATED:
                warnings.append(f"{where}: {src} -> {dst} tolerated: {TOLERATED[(src, dst)]}")
    return graph, violations, warnings


def check_client(client_src: Path) -> list[str]:
    violations: list[str] = []
    if not client_src.is_dir():
        return violations
    for path in sorted(client_src.rglob("*.ts")):
        rel = path.relative_to(client_src).as_posix()
        if not rel.startswith(CLIENT_PURE):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _TS_IMPORT.finditer(line):
                target = m.group(1)
                if target == "vscode" or target.startswith("vscode-languageclient"):
                    violations.append(f"client-vscode/src/{rel}:{n}: pure module imports {target}")
    return violations


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--server", type=Path, default=REPO / "server", help="holds the package")
    ap.add_argument("--client", type=Path, default=REPO / "client-vscode" / "src")
    ap.add_argument("--quiet", action="store_true", help="violations only")
    args = ap.parse_args(argv)
    graph, violations, warnings = check_server(args.server)
    violations += check_client(args.client)
    if not args.quiet:
        by_src: dict[str, list[str]] = defaultdict(list)
        for (src, dst), n in sorted(graph.items()):
            by_src[src].append(f"{dst} ({n})")
        print("import graph (unit -> units it imports, number of import statements):")
        for src in sorted(by_src):
            print(f"  {src} -> {', '.join(by_src[src])}")
        for w in warnings:
            print(f"warning: {w}")
    for v in violations:
        print(f"violation: {v}")
    print(f"{len(violations)} violation(s), {len(warnings)} tolerated import(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
