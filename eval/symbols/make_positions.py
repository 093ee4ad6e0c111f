"""Pick labelled editor positions in a Python repository by kind; gold from jedi (no budget).

    python eval/symbols/make_positions.py /path/to/flask-3.1.0 > eval/symbols/positions.jsonl
    python eval/symbols/make_positions.py /path/to/django-5.2.8 django 7 \
        django/http,django/core/handlers,django/urls,django/utils/text.py \
        > eval/symbols/positions_django.jsonl

The gold of every position was then read against the source (ambiguous methods especially).
"""

from __future__ import annotations

import ast
import json
import random
import sys
from pathlib import Path

import jedi

PER_KIND = 9
GLOBALS = {"current_app", "g", "request", "session", "settings", "connections", "router", "apps"}


def kinds(tree: ast.AST, text: str) -> list[tuple[str, int, int, str]]:
    out: list[tuple[str, int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out.append(("call", node.func.lineno, node.func.col_offset, node.func.id))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            col = node.end_col_offset - len(node.attr)  # type: ignore[operator]
            if node.value.id == "self":
                out.append(("attribute", node.end_lineno, col, node.attr))  # type: ignore[arg-type]
            elif node.value.id not in ("t", "te", "ft", "os", "sys", "json", "typing"):
                out.append(("ambiguous method", node.end_lineno, col, node.attr))  # type: ignore[arg-type]
        if isinstance(node, ast.ImportFrom) and node.level >= 0:
            for a in node.names:
                out.append(("import/alias", node.lineno, -1, a.asname or a.name))
        if isinstance(node, ast.Name):
            if node.id in GLOBALS:
                out.append(("module global", node.lineno, node.col_offset, node.id))
            elif node.id[:1].isupper() and node.id not in ("None", "True", "False"):
                out.append(("class reference", node.lineno, node.col_offset, node.id))
            elif node.id in ("len", "isinstance", "str", "dict", "list", "getattr", "super"):
                out.append(("builtin", node.lineno, node.col_offset, node.id))
        if isinstance(node, ast.FunctionDef):
            for a in node.args.args[1:]:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Name) and sub.id == a.arg and sub.lineno > a.lineno:
                        out.append(("local/parameter", sub.lineno, sub.col_offset, sub.id))
                        break
    lines = text.split("\n")
    fixed = []
    for kind, line, col, name in out:
        if col < 0:
            idx = lines[line - 1].rfind(name)
            if idx < 0:
                continue
            col = idx
        fixed.append((kind, line, col, name))
    return fixed


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    package = sys.argv[2] if len(sys.argv) > 2 else "src/flask"
    per_kind = int(sys.argv[3]) if len(sys.argv) > 3 else PER_KIND
    subsets = sys.argv[4].split(",") if len(sys.argv) > 4 else [package]
    rng = random.Random(15)
    extra = [str(root / "src")] if (root / "src").is_dir() else []
    project = jedi.Project(root, added_sys_path=extra)
    by_kind: dict[str, list[dict[str, object]]] = {}
    files = sorted(
        f for sub in subsets for f in ((root / sub).rglob("*.py") if (root / sub).is_dir()
                                       else [root / sub])
    )  # fmt: skip
    cands = []
    for f in files:
        text = f.read_text()
        for k in kinds(ast.parse(text), text):
            cands.append((f, text, k))
    rng.shuffle(cands)
    for f, text, (kind, line, col, name) in cands:
        if len(by_kind.setdefault(kind, [])) >= per_kind:
            continue
        rel = f.relative_to(root).as_posix()
        names = jedi.Script(text, path=str(f), project=project).goto(line, col, follow_imports=True)
        if not names:
            continue
        n = names[0]
        inside = n.module_path is not None and str(n.module_path).startswith(str(root))
        gold = f"{Path(n.module_path).relative_to(root).as_posix()}:{n.line}" if inside else None
        if kind == "builtin" and gold is not None:
            continue
        by_kind[kind].append(
            {"path": rel, "line": line, "col": col, "name": name, "kind": kind, "gold": gold,
             "outside": None if inside else (n.full_name or n.name), "repo": root.name}
        )  # fmt: skip
    for rows in by_kind.values():
        for row in rows:
            print(json.dumps(row))


if __name__ == "__main__":
    main()
