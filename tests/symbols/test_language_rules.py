"""Definitions the way each language decides them, on the parse-tree fast path: TypeScript
private names, structural types (interfaces, type literals, aliases, intersections), getters,
element types and callbacks typed from context; Go's import names, type assertions, named
slices and test tables; Python's assignment order and import fallbacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_go import assumed_package_name, go_tool_ignores
from code_compass_server.symbols.resolve_python import PythonScopes
from code_compass_server.symbols.resolve_tree import TreeScopes
from tests.conftest import write_tree

TS = {
    "src/types.ts": (
        "export interface Listener { onMessage(data: string): void }\n"  # 1
        "export interface Named extends Listener { label: string }\n"  # 2
        "export type Options = { retries?: number; listener?: Named }\n"  # 3
        "export type Extra = Options & { verbose: boolean }\n"  # 4
        "export type Handler = (ctx: Ctx, next: () => void) => void\n"  # 5
        "export class Ctx {\n"  # 6
        "  #req: Req = new Req()\n"  # 7
        "  get req(): Req { return this.#req }\n"  # 8
        "}\n"  # 9
        "export class Req { json(): string { return '' } }\n"  # 10
        "export class Other { json(): string { return '' } }\n"  # 11
    ),
    "src/node.ts": (
        "import { Options, Extra, Handler, Named } from './types'\n"  # 1
        "export class Node {\n"  # 2
        "  #children: Record<string, Node> = {}\n"  # 3
        "  #list: Node[] = []\n"  # 4
        "  visit(other: Node, key: string): void {\n"  # 5
        "    other.#children[key].visit(other, key)\n"  # 6
        "    const kids = this.#list\n"  # 7
        "    const first = kids[0]\n"  # 8
        "    first.visit(other, key)\n"  # 9
        "  }\n"  # 10
        "  configure(o: Options, e: Extra, init: { named: Named }): void {\n"  # 11
        "    o.retries; e.verbose; e.retries; init.named.onMessage('x'); init.named.label\n"  # 12
        "  }\n"  # 13
        "}\n"  # 14
        "export function middleware(): Handler {\n"  # 15
        "  return (c, next) => { c.req.json(); next() }\n"  # 16
        "}\n"  # 17
        "const Sub = class extends Node { extra(): void {} }\n"  # 18
        "new Sub().extra()\n"  # 19
        "const body: Response = new Response('x'); body.headers.get('a')\n"  # 20
        "class Holder { match = match }\n"  # 21
        "function match(): void {}\n"  # 22
    ),
}


def _first(s: TreeScopes, rel: str, text: str, line: int, word: str, nth: int = 0):
    row = text.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = row.index(word, col + 1)
    res = s.resolve(rel, "typescript", text, line - 1, col)
    if res is None:
        return None
    return (res.targets[0].path, res.targets[0].line) if res.targets else res.outside


def test_typescript_private_names_are_the_enclosing_class_s_whatever_the_receiver(
    tmp_path: Path,
) -> None:
    """`other.#children`: a private name can only be the class body's own (the column on the
    `#`, as compilers print it); element types of `Record<K, T>` and `T[]` type what is
    indexed, through a const that copies a field."""
    write_tree(tmp_path, TS)
    s, text = TreeScopes(tmp_path), TS["src/node.ts"]
    assert _first(s, "src/node.ts", text, 6, "#children") == ("src/node.ts", 3)
    assert _first(s, "src/node.ts", text, 6, "visit") == ("src/node.ts", 5)
    assert _first(s, "src/node.ts", text, 7, "#list") == ("src/node.ts", 4)
    assert _first(s, "src/node.ts", text, 9, "visit") == ("src/node.ts", 5)


def test_typescript_structural_types_resolve_to_the_declaring_member(tmp_path: Path) -> None:
    """Members of a type alias of an object type, of an intersection, of an inline type
    literal, and of an interface through its `extends`: the property signature declaring
    them, as the language service answers."""
    write_tree(tmp_path, TS)
    s, text = TreeScopes(tmp_path), TS["src/node.ts"]
    assert _first(s, "src/node.ts", text, 12, "retries") == ("src/types.ts", 3)
    assert _first(s, "src/node.ts", text, 12, "verbose") == ("src/types.ts", 4)
    assert _first(s, "src/node.ts", text, 12, "retries", 1) == ("src/types.ts", 3)
    assert _first(s, "src/node.ts", text, 12, "onMessage") == ("src/types.ts", 1)
    assert _first(s, "src/node.ts", text, 12, "label") == ("src/types.ts", 2)


def test_typescript_callbacks_getters_class_expressions_and_lib_globals(tmp_path: Path) -> None:
    """A returned arrow function takes its parameters' types from the declared return type
    (an alias of a function type); a getter's return type types `c.req`; a const bound to a
    class expression is that class; `Response` is the lib's; a class field's initializer
    reads the module's `match`, not the field being declared."""
    write_tree(tmp_path, TS)
    s, text = TreeScopes(tmp_path), TS["src/node.ts"]
    assert _first(s, "src/node.ts", text, 16, "json") == ("src/types.ts", 10)  # Req's
    assert _first(s, "src/node.ts", text, 19, "extra") == ("src/node.ts", 18)
    assert _first(s, "src/node.ts", text, 20, "Response") == "lib.Response"
    assert _first(s, "src/node.ts", text, 20, "get") == "lib.Response.headers.get"
    assert _first(s, "src/node.ts", text, 21, "match", 1) == ("src/node.ts", 22)


def test_typescript_imports_from_a_file_tree_sitter_cannot_fully_parse(tmp_path: Path) -> None:
    """Newer syntax than the grammar (`const` type parameters) puts the file's root in an
    error node: its imports and exported declarations still resolve."""
    files = {
        "src/types.ts": (
            "import type { Base } from './base'\n"
            "export type Wrap = (b: Base) => void\n"
            "export interface Later<const Ps extends string[]> { paths: Ps }\n"
            "export interface OnHandler<\n"
            "  const P extends string[],\n"
            "> { on(p: P): void }\n"
        ),
        "src/base.ts": "export class Base {}\n",
        "src/app.ts": "import type { OnHandler } from './types'\nlet h: OnHandler<[]>\n",
    }
    write_tree(tmp_path, files)
    s = TreeScopes(tmp_path)
    app = files["src/app.ts"]
    assert _first(s, "src/app.ts", app, 1, "OnHandler") == ("src/types.ts", 4)
    types = files["src/types.ts"]
    assert _first(s, "src/types.ts", types, 2, "Base") == ("src/base.ts", 1)


GO = {
    "go.mod": "module example.com/shop/v2\n\ngo 1.19\n",
    "shop.go": (
        "package shop\n"  # 1
        "\n"  # 2
        "type Item struct{ Name string }\n"  # 3
        "\n"  # 4
        "func (i *Item) Check() bool { return true }\n"  # 5
        "\n"  # 6
        "type Items []*Item\n"  # 7
        "\n"  # 8
        "type Cart struct{}\n"  # 9
        "\n"  # 10
        "func (c *Cart) Check() bool { return false }\n"  # 11
        "\n"  # 12
        "func (c *Cart) With() *Cart { return c }\n"  # 13
        "\n"  # 14
        "func New() *Cart { return &Cart{} }\n"  # 15
        "\n"  # 16
        "func (is Items) All() bool {\n"  # 17
        "\tfor _, it := range is {\n"  # 18
        "\t\tif !it.Check() {\n"  # 19
        "\t\t\treturn false\n"  # 20
        "\t\t}\n"  # 21
        "\t}\n"  # 22
        "\tvar x interface{} = is[0]\n"  # 23
        "\treturn x.(*Item).Check()\n"  # 24
        "}\n"  # 25
    ),
    "api/api.go": (
        "package api\n"  # 1
        "\n"  # 2
        'import "example.com/shop/v2"\n'  # 3
        "\n"  # 4
        "func Use() bool {\n"  # 5
        "\treturn shop.New().With().Check()\n"  # 6
        "}\n"  # 7
    ),
    "shop_test.go": (
        "package shop\n"  # 1
        "\n"  # 2
        "func table() {\n"  # 3
        "\ttests := []struct {\n"  # 4
        "\t\tname string\n"  # 5
        "\t\twant bool\n"  # 6
        "\t}{\n"  # 7
        '\t\t{name: "a", want: true},\n'  # 8
        "\t}\n"  # 9
        "\tfor _, tt := range tests {\n"  # 10
        "\t\t_ = tt.want\n"  # 11
        "\t}\n"  # 12
        "}\n"  # 13
    ),
}


def _go(s: TreeScopes, rel: str, line: int, word: str, nth: int = 0):
    text = GO[rel]
    row = text.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = row.index(word, col + 1)
    res = s.resolve(rel, "go", text, line - 1, col)
    if res is None:
        return None
    return (res.targets[0].path, res.targets[0].line) if res.targets else res.outside


def test_go_receivers_through_named_slices_assertions_and_method_results(tmp_path: Path) -> None:
    """`range` over a named slice type, `x.(*Item)`, and a chain of method results across
    packages; the import path ends in `/v2` but binds the package clause's name."""
    write_tree(tmp_path, GO)
    s = TreeScopes(tmp_path)
    assert _go(s, "shop.go", 19, "Check") == ("shop.go", 5)
    assert _go(s, "shop.go", 24, "Check") == ("shop.go", 5)
    assert _go(s, "api/api.go", 6, "New") == ("shop.go", 15)
    assert _go(s, "api/api.go", 6, "Check") == ("shop.go", 11)


def test_go_test_tables_of_anonymous_structs(tmp_path: Path) -> None:
    """A table test's keyed literal and its loop variable's fields name the anonymous
    struct's fields."""
    write_tree(tmp_path, GO)
    s = TreeScopes(tmp_path)
    assert _go(s, "shop_test.go", 8, "name") == ("shop_test.go", 5)
    assert _go(s, "shop_test.go", 8, "want") == ("shop_test.go", 6)
    assert _go(s, "shop_test.go", 11, "want") == ("shop_test.go", 6)


def test_go_package_names_and_the_folders_the_go_tool_ignores() -> None:
    assert assumed_package_name("github.com/go-chi/chi/v5") == "chi"
    assert assumed_package_name("github.com/hashicorp/go-version") == "version"
    assert assumed_package_name("gopkg.in/yaml.v3") == "yaml"
    assert assumed_package_name("net/http") == "http"
    assert go_tool_ignores("_examples/rest/main.go")
    assert go_tool_ignores("pkg/testdata/x.go")
    assert not go_tool_ignores("middleware/logger.go")
    assert not go_tool_ignores("main_test.go")


PY = {
    "pkg/__init__.py": "",
    "pkg/compat.py": (
        "try:\n"
        "    from cStringIO import StringIO as fast_io\n"
        "except ImportError:\n"
        "    fast_io = None\n"
        "import json\n"
    ),
    "pkg/util.py": (
        "from .compat import fast_io, json\n"  # 1
        "\n"  # 2
        "\n"  # 3
        "def join(parts, member):\n"  # 4
        "    for prefix in parts:\n"  # 5
        "        member = '/'.join([prefix, member])\n"  # 6
        "    return member\n"  # 7
    ),
}


def test_python_an_assignment_binds_after_its_value_and_fallback_imports_are_undecided(
    tmp_path: Path,
) -> None:
    """`member = f(member)` reads the previous binding (the parameter); an import with an
    `except ImportError` fallback depends on the environment: the fast path leaves it to
    jedi (None), while a plain import next to it still resolves."""
    write_tree(tmp_path, PY)
    s = PythonScopes(tmp_path)
    text = PY["pkg/util.py"]
    row = text.split("\n")[5]
    res = s.resolve("pkg/util.py", text, 5, row.rindex("member"))
    assert res is not None and [(t.path, t.line) for t in res.targets] == [("pkg/util.py", 4)]
    assert s.resolve("pkg/util.py", text, 0, text.index("fast_io")) is None
    plain = s.resolve("pkg/util.py", text, 0, text.index("json"))
    assert plain is not None and plain.outside == "json"


def test_jedi_reads_the_workspace_before_site_packages(tmp_path: Path) -> None:
    """A workspace package with the name of one installed beside the server (here
    `tree_sitter`, in a src/ layout): jedi resolves through the workspace's code, as running
    the project from its tree would, not through the installed copy."""
    pytest.importorskip("jedi")
    files = {
        "src/tree_sitter/__init__.py": "from .core import make\n",
        "src/tree_sitter/core.py": (
            "class Shouter:\n    def shout(self):\n        return 1\n\n\n"
            "def make():\n    return Shouter()\n"
        ),
        "app.py": "import tree_sitter\n\ntree_sitter.make().shout()\n",
    }
    write_tree(tmp_path, files)
    text = files["app.py"]
    resolver = SymbolResolver()
    try:  # jedi itself, on its own process (the fast path is not asked)
        found = resolver.jedi_batch(
            tmp_path, "app.py", text, [(2, text.split("\n")[2].index("shout"))], 120.0
        )
    finally:
        resolver.close()
    assert found is not None and found[0] is not None
    assert [(t.path, t.line) for t in found[0].targets] == [("src/tree_sitter/core.py", 2)]


def test_typescript_destructured_names_take_the_member_s_type(tmp_path: Path) -> None:
    """`const { open } = this.config`: `open` has the type of `config.open` (an interface
    extending another), so `open.next()` is that interface's member."""
    files = {
        "src/sock.ts": (
            "interface Observer { next(v: string): void }\n"  # 1
            "interface NextObserver extends Observer { closed?: boolean }\n"  # 2
            "interface Config { open?: NextObserver; url: string }\n"  # 3
            "class Subject { next(v: string): void {} }\n"  # 4
            "export class Sock {\n"  # 5
            "  config: Config = { url: '' }\n"  # 6
            "  start(): void {\n"  # 7
            "    const { open, url: where } = this.config\n"  # 8
            "    open.next(where)\n"  # 9
            "  }\n"  # 10
            "}\n"  # 11
        ),
    }
    write_tree(tmp_path, files)
    s, text = TreeScopes(tmp_path), files["src/sock.ts"]
    assert _first(s, "src/sock.ts", text, 9, "next") == ("src/sock.ts", 1)


def test_typescript_super_names_the_base_class_member(tmp_path: Path) -> None:
    """`super.run()` inside an override: the base class's `run`, not the override."""
    text = "class A { run(): void {} }\nclass B extends A {\n  run(): void { super.run() }\n}\n"
    write_tree(tmp_path, {"src/a.ts": text})
    assert _first(TreeScopes(tmp_path), "src/a.ts", text, 3, "run", 1) == ("src/a.ts", 1)


def test_typescript_a_destructured_parameter_has_its_property_s_type(tmp_path: Path) -> None:
    """`({ cart }: Opts)`: the annotation types the pattern; `cart` is `Opts.cart`."""
    text = (
        "class Cart { add(): void {} }\n"
        "class Shelf { add(): void {} }\n"
        "interface Opts { cart: Cart; shelf: Shelf }\n"
        "export function fill({ cart, shelf: s }: Opts): void {\n"
        "  cart.add(); s.add()\n"
        "}\n"
    )
    write_tree(tmp_path, {"src/fill.ts": text})
    s = TreeScopes(tmp_path)
    assert _first(s, "src/fill.ts", text, 5, "add") == ("src/fill.ts", 1)
    assert _first(s, "src/fill.ts", text, 5, "add", 1) == ("src/fill.ts", 2)


GOPATH = {
    "utils/comparator.go": "package utils\n\nfunc IntComparator(a, b int) int { return a - b }\n",
    "json/json.go": "package json\n\nfunc Marshal(v any) ([]byte, error) { return nil, nil }\n",
    "trees/avl/avl.go": (
        "package avl\n"  # 1
        "\n"  # 2
        'import (\n\t"encoding/json"\n\t"github.com/acme/gods/utils"\n)\n'  # 3-6
        "\n"  # 7
        "func New() int { b, _ := json.Marshal(1); return utils.IntComparator(len(b), 0) }\n"  # 8
    ),
}


def test_go_source_without_go_mod_resolves_imports_by_the_folder_they_end_with(
    tmp_path: Path,
) -> None:
    """A GOPATH-style tree (a package copied out of `src/github.com/acme/gods`, no go.mod):
    `github.com/acme/gods/utils` is the workspace's `utils/`; the standard library's
    `encoding/json` is never the workspace's `json/`."""
    write_tree(tmp_path, GOPATH)
    s = TreeScopes(tmp_path)
    text = GOPATH["trees/avl/avl.go"]
    row = text.split("\n")[7]
    res = s.resolve("trees/avl/avl.go", "go", text, 7, row.index("IntComparator"))
    assert res is not None and [(t.path, t.line) for t in res.targets] == [
        ("utils/comparator.go", 3)
    ]
    res = s.resolve("trees/avl/avl.go", "go", text, 7, row.index("Marshal"))
    assert res is not None and not res.targets and "encoding/json" in res.outside
