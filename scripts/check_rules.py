#!/usr/bin/env python3
"""Check that docs/rules.md points at code and tests that exist.

Reads the rule table of docs/rules.md. In its "where in code" column every `module::symbol`
(module under server/code_compass_server/, symbol a top-level name or `Class.member`) must
be defined there, not merely imported;
a bare `NAME` after one belongs to the same module, a bare `pkg.module` must be a module. In its
"test" column every `tests/...py::test_name` must be a test function of that file and every
`scripts/...` path must exist. Text in parentheses is commentary and is not checked.

Prints every reference that does not resolve and exits 1 if there is one.

Usage: scripts/check_rules.py [--doc PATH] [--server DIR] [--root DIR]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICKED = re.compile(r"`([^`]+)`")
PARENS = re.compile(r"\([^()]*\)")
QUALIFIED = re.compile(r"^([\w.]+)::([\w.]+)$")
BARE_NAME = re.compile(r"^[A-Za-z_]\w*$")
BARE_MODULE = re.compile(r"^[a-z_]\w*(\.[a-z_]\w*)+$")
WHERE_COLUMN, TEST_COLUMN = 3, 4


def table_rows(doc: str) -> list[list[str]]:
    """The rows of the first table whose header starts with `| rule |`, as cells."""
    rows: list[list[str]] = []
    inside = False
    for line in doc.splitlines():
        if line.startswith("| rule |"):
            inside = True
            continue
        if inside:
            if not line.startswith("|"):
                break
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if set(cells[0]) <= {"-", " "}:
                continue
            rows.append(cells)
    return rows


def strip_parens(cell: str) -> str:
    previous = None
    while previous != cell:
        previous, cell = cell, PARENS.sub("", cell)
    return cell


@cache
def parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None


def module_file(server: Path, module: str) -> Path | None:
    base = server / "code_compass_server" / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def assigned_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names defined by a module or class body (also under if/try); imports do not count."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names[sub.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, (ast.If, ast.Try)):
            inner = list(node.body) + list(node.orelse)
            if isinstance(node, ast.Try):
                inner += list(node.finalbody)
                for handler in node.handlers:
                    inner += handler.body
            names.update(assigned_names(inner))
    return names


def class_members(cls: ast.ClassDef) -> set[str]:
    members = set(assigned_names(cls.body))
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Store)
        ):
            members.add(node.attr)
    return members


def symbol_exists(server: Path, module: str, symbol: str) -> str | None:
    """None if `module::symbol` resolves, else the reason it does not."""
    path = module_file(server, module)
    if path is None:
        return f"no module {module}"
    tree = parse(path)
    if tree is None:
        return f"cannot parse {path}"
    head, *rest = symbol.split(".")
    names = assigned_names(tree.body)
    if head not in names:
        return f"{module} defines no {head}"
    if rest:
        node = names[head]
        if not isinstance(node, ast.ClassDef):
            return f"{module}::{head} is not a class"
        if rest[0] not in class_members(node):
            return f"{module}::{head} has no member {rest[0]}"
    return None


def test_exists(root: Path, ref: str) -> str | None:
    file, _, name = ref.partition("::")
    path = root / file
    if not path.is_file():
        return f"no file {file}"
    if not name:
        return None
    tree = parse(path)
    if tree is None:
        return f"cannot parse {file}"
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return None
    return f"{file} has no {name}"


def check(doc_path: Path, server: Path, root: Path) -> tuple[int, list[str]]:
    """(references checked, problems) for the rule table of `doc_path`."""
    problems: list[str] = []
    checked = 0
    for cells in table_rows(doc_path.read_text(encoding="utf-8")):
        if len(cells) <= TEST_COLUMN:
            problems.append(f"{cells[0]}: row has {len(cells)} cells")
            continue
        rule = cells[0].strip("`")
        module = None
        for ref in TICKED.findall(strip_parens(cells[WHERE_COLUMN])):
            qualified = QUALIFIED.match(ref)
            if qualified:
                module, symbol = qualified.groups()
                reason = symbol_exists(server, module, symbol)
            elif module is not None and BARE_NAME.match(ref):
                reason = symbol_exists(server, module, ref)
            elif BARE_MODULE.match(ref):
                reason = None if module_file(server, ref) else f"no module {ref}"
            else:
                reason = f"unreadable reference {ref!r}"
            checked += 1
            if reason:
                problems.append(f"{rule}: where in code `{ref}`: {reason}")
        for ref in TICKED.findall(strip_parens(cells[TEST_COLUMN])):
            if not ref.startswith(("tests/", "scripts/")):
                continue
            checked += 1
            reason = test_exists(root, ref)
            if reason:
                problems.append(f"{rule}: test `{ref}`: {reason}")
    return checked, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--doc", type=Path, default=REPO / "docs" / "rules.md")
    ap.add_argument("--server", type=Path, default=REPO / "server")
    ap.add_argument("--root", type=Path, default=REPO, help="where tests/ and scripts/ are")
    args = ap.parse_args(argv)
    checked, problems = check(args.doc, args.server, args.root)
    for problem in problems:
        print(problem)
    print(f"{checked} reference(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
