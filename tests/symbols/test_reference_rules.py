"""References the way the compilers count them: tokens after a regular expression or a rune
literal holding a quote, renamed imports, interfaces embedding interfaces, comma-ok
assertions, a class-level `None` default set by a method, and more uses than one answer
lists. Each over a real engine (index, then `references` at the definition)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import SYMBOL_REFERENCES_LIMIT
from code_compass_server.engine import Engine
from code_compass_server.symbols.code_names import code_columns_in
from code_compass_server.symbols.navigation import renamed_imports
from code_compass_server.symbols.resolve_python import PythonScopes
from tests.conftest import write_tree

TS = {
    "src/compiler.ts": (
        "const QUOTE = /[\\\\'\"]/g\n"  # 1
        "const TICK = /`/g\n"  # 2
        "export class Compiler {\n"  # 3
        "  protected append(s: string): void {}\n"  # 4
        "  run(): void { this.append('a') }\n"  # 5
        "}\n"  # 6
        "export function makeCompiler(): Compiler { return new Compiler() }\n"  # 7
    ),
    "src/mysql.ts": (
        "import { Compiler } from './compiler'\n"  # 1
        "const ESCAPE = /[\\\\'\"]/g\n"  # 2
        "const WRAP = /`/g\n"  # 3
        "export class MysqlCompiler extends Compiler {\n"  # 4
        "  quote(v: string): string { return v.replace(ESCAPE, (c) => '\\\\' + \"'\") }\n"  # 5
        "  index(): void {\n"  # 6
        "    this.append('create ')\n"  # 7
        "    if (1 / 2 > 0) { this.append('x') }\n"  # 8
        "  }\n"  # 9
        "}\n"  # 10
    ),
    "src/utils.ts": (
        "import {\n"  # 1
        "  makeCompiler as newCompiler,\n"  # 2
        "} from './compiler'\n"  # 3
        "export function makeCompiler(): void {}\n"  # 4
        "export function build(): void { newCompiler().run() }\n"  # 5
    ),
}

GO = {
    "go.mod": "module example.com/md\n\ngo 1.21\n",
    "text/reader.go": (
        "package text\n"  # 1
        "\n"  # 2
        "type Reader interface {\n"  # 3
        "\tAdvance(n int)\n"  # 4
        "}\n"  # 5
        "\n"  # 6
        "type BlockReader interface {\n"  # 7
        "\tReader\n"  # 8
        "\tReset()\n"  # 9
        "}\n"  # 10
    ),
    "ast/ast.go": (
        "package ast\n"  # 1
        "\n"  # 2
        "type Node interface{ Kind() int }\n"  # 3
        "\n"  # 4
        "type BaseBlock struct{ lines []int }\n"  # 5
        "\n"  # 6
        "func (b *BaseBlock) Lines() []int { return b.lines }\n"  # 7
        "\n"  # 8
        "type Paragraph struct{ BaseBlock }\n"  # 9
        "\n"  # 10
        "func (p *Paragraph) Kind() int { return 1 }\n"  # 11
    ),
    "parser/parser.go": (
        "package parser\n"  # 1
        "\n"  # 2
        "import (\n"  # 3
        '\t"example.com/md/ast"\n'  # 4
        '\t"example.com/md/text"\n'  # 5
        ")\n"  # 6
        "\n"  # 7
        "func parse(block text.BlockReader, n ast.Node, paras []*ast.Paragraph) {\n"  # 8
        "\tif c := '`'; c == '`' {\n"  # 9
        "\t\tblock.Advance(1)\n"  # 10
        "\t}\n"  # 11
        "\tpara, ok := n.(*ast.Paragraph)\n"  # 12
        "\tif ok {\n"  # 13
        "\t\t_ = para.Lines()\n"  # 14
        "\t}\n"  # 15
        "\tfirst := paras[0]\n"  # 16
        "\t_ = first.Lines()\n"  # 17
        "}\n"  # 18
    ),
}

PY = {
    "pkg/__init__.py": "",
    "pkg/env.py": (
        "class Environment:\n"  # 1
        "    def get_template(self, name):\n"  # 2
        "        return name\n"  # 3
    ),
    "tests/test_loader.py": (
        "from pkg.env import Environment\n"  # 1
        "\n"  # 2
        "\n"  # 3
        "class TestModuleLoader:\n"  # 4
        "    env = None\n"  # 5
        "\n"  # 6
        "    def setup_method(self):\n"  # 7
        "        self.env = Environment()\n"  # 8
        "\n"  # 9
        "    def test_load(self):\n"  # 10
        "        self.env.get_template('a')\n"  # 11
    ),
}


def _references(engine: Engine, root: Path, rel: str, line: int, word: str) -> set[tuple[str, int]]:
    text = (root / rel).read_text()
    column = text.split("\n")[line - 1].index(word) + 1
    name = engine.status().projects[0].name
    found = engine.references(name, rel, line, column)
    return {(loc.path, loc.line) for loc in found.locations}


def _indexed(make_engine: Callable[..., Engine], root: Path) -> Engine:
    engine = make_engine(root)
    for p in engine.status().projects:
        engine.index(p.name, embed=False, background_embed=False)
    return engine


def test_a_quote_in_a_regular_expression_or_a_rune_opens_no_string() -> None:
    """`/[\\\\'"]/g`, `` /`/g `` and Go's `'`'` are literals of their own: the code after
    them still holds identifier tokens (a division is not a regular expression)."""
    ts = TS["src/mysql.ts"]
    assert code_columns_in(ts, "typescript", "append") == {7: [9], 8: [26]}
    assert code_columns_in("a = b / c / d\nd()\n", "typescript", "d") == {1: [12], 2: [0]}
    assert code_columns_in(GO["parser/parser.go"], "go", "Advance") == {10: [8]}
    # A regular expression at a line's start: `//` inside it is no comment.
    line_start = "f(\n  /^https?:\\/\\//.test(u) ? u : `x${join(u)}`,\n)\n"
    assert code_columns_in(line_start, "typescript", "join") == {2: [35]}


def test_renamed_imports_are_found_in_import_and_export_lists() -> None:
    assert renamed_imports(TS["src/utils.ts"], "makeCompiler") == [("newCompiler", False)]
    text = "import D, { a as b, c } from './m'\nexport { a as z }\nconst q = a as any\n"
    assert renamed_imports(text, "a") == [("b", False), ("z", True)]


def test_typescript_references_through_subclasses_regexes_and_renamed_imports(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    root = write_tree(tmp_path / "ts", TS)
    engine = _indexed(make_engine, root)
    append = _references(engine, root, "src/compiler.ts", 4, "append")
    assert append == {("src/compiler.ts", 4), ("src/compiler.ts", 5)} | {
        ("src/mysql.ts", 7),
        ("src/mysql.ts", 8),
    }
    # `import { makeCompiler as newCompiler }`: the specifier's first name is the import's
    # (not the module's own `makeCompiler`), and the alias's uses are references.
    make = _references(engine, root, "src/compiler.ts", 7, "makeCompiler")
    assert make == {("src/compiler.ts", 7), ("src/utils.ts", 2), ("src/utils.ts", 5)}


def test_go_references_through_embedded_interfaces_and_comma_ok_assertions(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    root = write_tree(tmp_path / "go", GO)
    engine = _indexed(make_engine, root)
    assert _references(engine, root, "text/reader.go", 4, "Advance") == {
        ("text/reader.go", 4),
        ("parser/parser.go", 10),
    }
    assert _references(engine, root, "ast/ast.go", 7, "Lines") == {
        ("ast/ast.go", 7),
        ("parser/parser.go", 14),  # `para, ok := n.(*ast.Paragraph)`: promoted from BaseBlock
        ("parser/parser.go", 17),  # `first := paras[0]`: the element type
    }


def test_python_a_class_level_none_default_is_typed_by_the_method_that_sets_it(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path, PY)
    rel = "tests/test_loader.py"
    row = PY[rel].split("\n")[10]
    res = PythonScopes(root).resolve(rel, PY[rel], 10, row.index("get_template"))
    assert res is not None and [(t.path, t.line) for t in res.targets] == [("pkg/env.py", 2)]


def test_every_reference_is_found_and_one_answer_lists_the_first_ones(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    uses = SYMBOL_REFERENCES_LIMIT + 20
    files = {
        "lib.py": "def helper():\n    return 1\n",
        "main.py": "from lib import helper\n\n" + "helper()\n" * uses,
    }
    root = write_tree(tmp_path / "many", files)
    engine = _indexed(make_engine, root)
    name = engine.status().projects[0].name
    listed = engine.references(name, "lib.py", 1, 5)
    assert len(listed.locations) == SYMBOL_REFERENCES_LIMIT
    every = engine.references(name, "lib.py", 1, 5, limit=None)
    # the definition, the import and each call
    assert len(every.locations) == uses + 2 == listed.total


GENERICS = {
    "src/model.ts": (
        "export class Foo { name(): string { return '' } }\n"  # 1
        "export class Bar { name(): string { return '' } }\n"  # 2
        "export class Box<T, D = Bar> {\n"  # 3
        "  value: T\n"  # 4
        "  other: D\n"  # 5
        "  get(): T { return this.value }\n"  # 6
        "  all(): T[] { return [this.value] }\n"  # 7
        "}\n"  # 8
        "export interface Repo<E> { find(): Promise<E> }\n"  # 9
        "export type Pair<A> = { left: A; right: Box<A> }\n"  # 10
    ),
    "src/use.ts": (
        "import { Foo, Bar, Box, Repo, Pair } from './model'\n"  # 1
        "class FooBox extends Box<Foo> {\n"  # 2
        "  first(): string { return this.get().name() }\n"  # 3
        "}\n"  # 4
        "async function use(b: Box<Foo>, r: Repo<Bar>, p: Pair<Foo>): Promise<void> {\n"  # 5
        "  b.get().name()\n"  # 6
        "  b.value.name()\n"  # 7
        "  b.other.name()\n"  # 8
        "  const made = new Box<Bar>()\n"  # 9
        "  made.get().name()\n"  # 10
        "  const found = await r.find()\n"  # 11
        "  found.name()\n"  # 12
        "  ;(await r.find()).name()\n"  # 13
        "  p.left.name(); p.right.get().name()\n"  # 14
        "  for (const each of b.all()) { each.name() }\n"  # 15
        "}\n"  # 16
        "function pick<T extends Foo>(x: T): string { return x.name() }\n"  # 17
        "function loop(xs: Bar[]): void { for (const x of xs) { x.name() } }\n"  # 18
    ),
}


def test_typescript_type_arguments_are_substituted(tmp_path: Path) -> None:
    """`Box<Foo>`'s `get(): T` is a Foo: through annotations, `new Box<Bar>()`, defaults,
    `extends Box<Foo>`, aliases with parameters, `await` of a `Promise<T>`, constraints of
    unbound parameters and `for … of` over `T[]`."""
    from code_compass_server.symbols.resolve_tree import TreeScopes

    write_tree(tmp_path, GENERICS)
    scopes, text = TreeScopes(tmp_path), GENERICS["src/use.ts"]

    def name_at(line: int, nth: int = 0) -> int | None:
        row = text.split("\n")[line - 1]
        col = -1
        for _ in range(nth + 1):
            col = row.index("name", col + 1)
        res = scopes.resolve("src/use.ts", "typescript", text, line - 1, col)
        return res.targets[0].line if res is not None and res.targets else None

    foo, bar = 1, 2  # the lines of Foo.name and Bar.name in src/model.ts
    assert name_at(3) == foo  # this.get() in `extends Box<Foo>`
    assert name_at(6) == foo  # b: Box<Foo>, get(): T
    assert name_at(7) == foo  # value: T
    assert name_at(8) == bar  # D = Bar, the default
    assert name_at(10) == bar  # new Box<Bar>()
    assert name_at(12) == bar  # await of find(): Promise<E>, E = Bar
    assert name_at(13) == bar
    assert name_at(14) == foo  # Pair<Foo>'s left: A
    assert name_at(14, 1) == foo  # Pair<Foo>'s right: Box<A>
    assert name_at(15) == foo  # for … of all(): T[]
    assert name_at(17) == foo  # T extends Foo
    assert name_at(18) == bar  # for … of Bar[]


GO_SCOPES = {
    "go.mod": "module example.com/opts\n\ngo 1.21\n",
    "opts.go": (
        "package opts\n"  # 1
        "\n"  # 2
        "type Option interface{ filter() Option }\n"  # 3
        "\n"  # 4
        "type Options []Option\n"  # 5
        "\n"  # 6
        "func (o Options) filter() Option {\n"  # 7
        "\tfor _, opt := range o {\n"  # 8
        "\t\tif opt := opt.filter(); opt != nil {\n"  # 9
        "\t\t\treturn opt\n"  # 10
        "\t\t}\n"  # 11
        "\t}\n"  # 12
        "\ttype MyByte byte\n"  # 13
        "\t_ = []MyByte{1}\n"  # 14
        "\treturn nil\n"  # 15
        "}\n"  # 16
        "\n"  # 17
        "func use() bool { return fast }\n"  # 18
        "\n"  # 19
        "type stats struct{ removed int }\n"  # 20
        "\n"  # 21
        "func merge(groups []stats) int {\n"  # 22
        "\tgroups, orig := groups[:0], groups\n"  # 23
        "\tprev := &groups[0]\n"  # 24
        "\treturn prev.removed + orig[0].removed\n"  # 25
        "}\n"  # 26
    ),
    "fast_purego.go": "//go:build purego\n\npackage opts\n\nconst fast = false\n",
    "fast_unsafe.go": "//go:build !purego\n\npackage opts\n\nconst fast = true\n",
    "fast_windows.go": "package opts\n\nconst slow = true\n",
}


def test_go_scopes_begin_after_the_declaration_and_the_default_build_decides(
    tmp_path: Path,
) -> None:
    """`if opt := opt.filter()`: the right side's `opt` is the range variable (a local's
    scope begins after its declaration); a type declared in a function; a name declared in
    two files is the one the default build compiles (`//go:build !purego`)."""
    from code_compass_server.symbols.resolve_go import _build_expr
    from code_compass_server.symbols.resolve_tree import TreeScopes

    write_tree(tmp_path, GO_SCOPES)
    scopes, text = TreeScopes(tmp_path), GO_SCOPES["opts.go"]

    def at(line: int, word: str, nth: int = 0) -> tuple[str, int] | None:
        row = text.split("\n")[line - 1]
        col = -1
        for _ in range(nth + 1):
            col = row.index(word, col + 1)
        res = scopes.resolve("opts.go", "go", text, line - 1, col)
        return (res.targets[0].path, res.targets[0].line) if res and res.targets else None

    assert at(9, "filter") == ("opts.go", 3)  # the interface's method, not Options.filter
    assert at(9, "opt", 1) == ("opts.go", 8)
    assert at(10, "opt") == ("opts.go", 9)
    assert at(14, "MyByte") == ("opts.go", 13)
    assert at(18, "fast") == ("fast_unsafe.go", 5)
    assert at(25, "removed") == ("opts.go", 20)  # `groups[:0]` is a []stats too
    assert at(25, "removed", 1) == ("opts.go", 20)
    assert _build_expr("(darwin || linux) && !purego") and not _build_expr("windows")


TS_TYPES = {
    "src/config.ts": (
        "export interface Cursor { close(): void }\n"  # 1
        "export interface Conn { connect(): void }\n"  # 2
        "export interface Client {\n"  # 3
        "  query(sql: string, params: unknown[]): Promise<number>\n"  # 4
        "  query(cursor: Cursor): Cursor\n"  # 5
        "  end(): void\n"  # 6
        "}\n"  # 7
        "export interface PoolClient extends Omit<Client, 'end'> { release(): void }\n"  # 8
        "export interface Config {\n"  # 9
        "  control?: { (uri: string): Conn }\n"  # 10
        "  make: (n: number) => Conn\n"  # 11
        "}\n"  # 12
    ),
    "src/driver.ts": (
        "import { Cursor, PoolClient, Config } from './config'\n"  # 1
        "export class Driver {\n"  # 2
        "  #client: PoolClient\n"  # 3
        "  #control: Config['control']\n"  # 4
        "  #make: Config['make']\n"  # 5
        "  run(c: Cursor): void {\n"  # 6
        "    const cursor = this.#client.query(c)\n"  # 7
        "    cursor.close()\n"  # 8
        "    this.#control!('x').connect()\n"  # 9
        "    const made = this.#make(1)\n"  # 10
        "    made.connect()\n"  # 11
        "    const state = { done: false, inner: { count: 1 } }\n"  # 12
        "    state.done = state.inner.count > 0\n"  # 13
        "  }\n"  # 14
        "}\n"  # 15
    ),
}


def test_typescript_lib_subsets_indexed_types_overloads_and_call_signatures(
    tmp_path: Path,
) -> None:
    """`Omit<Client, 'end'>` has Client's members; `Config['control']` is that member's
    type; a call's overload is the one its arity picks (`query(cursor)` returns a Cursor);
    calling a value uses its type's call signature (`{ (uri): Conn }`, `(n) => Conn`)."""
    from code_compass_server.symbols.resolve_tree import TreeScopes

    write_tree(tmp_path, TS_TYPES)
    scopes, text = TreeScopes(tmp_path), TS_TYPES["src/driver.ts"]

    def at(line: int, word: str) -> tuple[str, int] | None:
        col = text.split("\n")[line - 1].index(word)
        res = scopes.resolve("src/driver.ts", "typescript", text, line - 1, col)
        return (res.targets[0].path, res.targets[0].line) if res and res.targets else None

    assert at(7, "query") == ("src/config.ts", 5)
    assert at(8, "close") == ("src/config.ts", 1)
    assert at(9, "connect") == ("src/config.ts", 2)
    assert at(11, "connect") == ("src/config.ts", 2)
    declared, used = text.split("\n")[11:13]
    for word in ("done", "count"):
        res = scopes.resolve("src/driver.ts", "typescript", text, 12, used.index(word))
        assert res is not None and [(t.line, t.column) for t in res.targets] == [
            (12, declared.index(word))
        ]  # an object literal's own property
