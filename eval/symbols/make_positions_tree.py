"""Pick editor positions by kind in a TypeScript or Go tree (tree-sitter), unlabelled.

    python eval/symbols/make_positions_tree.py ROOT typescript src/internal 6 > candidates
    python eval/symbols/make_positions_tree.py ROOT go mux 6 > candidates

Labels come from elsewhere: TypeScript's language service for TypeScript
(eval/symbols/ts_definitions.js), reading the source for Go (`--show` prints each position
and its line for that).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from tree_sitter import Node

from code_compass_server.index.chunk.treesitter import parser_for
from code_compass_server.symbols.resolve_go import GO_BUILTINS
from code_compass_server.symbols.resolve_ts import JS_GLOBALS

FUNCS = {"function_declaration", "method_definition", "arrow_function", "function_expression",
         "method_declaration", "func_literal"}  # fmt: skip


def walk(node: Node) -> Iterator[Node]:
    yield node
    for c in node.children:
        yield from walk(c)


def enclosing_function(node: Node) -> Node | None:
    p = node.parent
    while p is not None:
        if p.type in FUNCS:
            return p
        p = p.parent
    return None


def param_names(fn: Node, src: bytes) -> set[str]:
    out: set[str] = set()
    for field in ("parameters", "receiver"):
        params = fn.child_by_field_name(field)
        for n in walk(params) if params is not None else ():
            if n.type == "identifier" and n.parent is not None and n.parent.type in (
                "required_parameter", "optional_parameter", "parameter_declaration",
                "formal_parameters",
            ):  # fmt: skip
                out.add(src[n.start_byte : n.end_byte].decode())
    return out


def kinds_ts(root: Node, src: bytes) -> Iterator[tuple[str, Node]]:
    top = {
        src[d.start_byte : d.end_byte].decode()
        for st in root.named_children
        for d in walk(st)
        if (d.type == "variable_declarator" and d.parent is not None
        and d.parent.parent in (root, None)) or False
        for d in [d.child_by_field_name("name")] if d is not None and d.type == "identifier"
    }  # fmt: skip
    for n in walk(root):
        text = src[n.start_byte : n.end_byte].decode()
        p = n.parent
        if p is None:
            continue
        callee = p.child_by_field_name("function") if p.type == "call_expression" else None
        if n.type == "identifier" and callee == n:
            yield ("builtin" if text in JS_GLOBALS else "call"), n
        elif n.type == "property_identifier" and p.type == "member_expression":
            obj = p.child_by_field_name("object")
            if obj is not None and obj.type == "this":
                yield "attribute", n
            elif p.parent is not None and p.parent.type == "call_expression":
                yield "ambiguous method", n
        elif n.type == "identifier" and p.type == "import_specifier":
            yield "import/alias", n
        elif n.type in ("type_identifier", "identifier") and text[:1].isupper() and (
            p.type in ("new_expression", "extends_clause", "type_annotation", "generic_type",
                       "implements_clause")
        ):  # fmt: skip
            yield ("builtin" if text in JS_GLOBALS else "class reference"), n
        elif n.type == "identifier" and text in JS_GLOBALS and p.type == "member_expression":
            yield "builtin", n
        elif n.type == "identifier" and p.type not in ("variable_declarator", "required_parameter"):
            fn = enclosing_function(n)
            if fn is not None and text in param_names(fn, src):
                yield "local/parameter", n
            elif fn is not None and text in top:
                yield "module global", n


def kinds_go(root: Node, src: bytes) -> Iterator[tuple[str, Node]]:
    for n in walk(root):
        text = src[n.start_byte : n.end_byte].decode()
        p = n.parent
        if p is None:
            continue
        if n.type == "identifier" and p.type == "call_expression":
            yield ("builtin" if text in GO_BUILTINS else "call"), n
        elif n.type == "field_identifier" and p.type == "selector_expression":
            gp = p.parent
            yield ("ambiguous method" if gp is not None and gp.type == "call_expression"
                   else "attribute"), n  # fmt: skip
        elif n.type == "package_identifier" and p.type == "qualified_type":
            yield "import/alias", n
        elif n.type == "identifier" and p.type == "selector_expression" and text.islower():
            operand = p.child_by_field_name("operand")
            if operand == n and text in ("http", "strings", "fmt", "regexp", "bytes", "errors"):
                yield "import/alias", n
        elif n.type == "type_identifier" and p.type != "type_spec":
            yield ("builtin" if text in GO_BUILTINS else "class reference"), n
        elif n.type == "identifier" and text in GO_BUILTINS:
            yield "builtin", n
        elif n.type == "identifier" and p.type not in ("parameter_declaration", "expression_list"):
            fn = enclosing_function(n)
            if fn is not None and text in param_names(fn, src):
                yield "local/parameter", n
            elif fn is not None and text[:1].islower() and not text.startswith("_"):
                yield "module global", n  # package-level or local: labelled by reading


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    language = sys.argv[2]
    sub = sys.argv[3]
    per_kind = int(sys.argv[4])
    suffix = ".ts" if language == "typescript" else ".go"
    rng = random.Random(15)
    files = sorted(
        f for f in (root / sub).rglob(f"*{suffix}")
        if not f.name.endswith((".d.ts", "_test.go", ".spec.ts"))
    )  # fmt: skip
    cands: list[tuple[str, Path, Node]] = []
    for f in files:
        src = f.read_bytes()
        tree = parser_for(language).parse(src)
        pick = kinds_ts if language == "typescript" else kinds_go
        cands += [(k, f, n) for k, n in pick(tree.root_node, src)]
    rng.shuffle(cands)
    count: dict[str, int] = {}
    for kind, f, n in cands:
        if count.get(kind, 0) >= per_kind:
            continue
        count[kind] = count.get(kind, 0) + 1
        row, col = n.start_point
        line = f.read_text().split("\n")[row]
        col = len(line.encode()[:col].decode())
        name = line[col : col + (n.end_byte - n.start_byte)]
        rel = f.relative_to(root).as_posix()
        print(json.dumps({"path": rel, "line": row + 1, "col": col, "name": name, "kind": kind,
                          "repo": root.name, "language": language}))  # fmt: skip


if __name__ == "__main__":
    main()
