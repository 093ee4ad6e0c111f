"""tree-sitter chunking and symbols for python, typescript, tsx, javascript, go, java, rust."""

from __future__ import annotations

import itertools

import pytest

from code_compass_server.constants import (
    CODE_WINDOW_LINES,
    CODE_WINDOW_OVERLAP,
    MAX_SYMBOL_CHUNK_LINES,
    SYMBOL_SPLIT_OVERLAP,
)
from code_compass_server.index.chunk import SkipFile, parse_file
from code_compass_server.records import Chunk, ParsedFile, SymbolDef


def parse(rel: str, text: str, language: str) -> ParsedFile:
    return parse_file(rel, text.encode("utf-8"), language)


def symbols(parsed: ParsedFile) -> dict[str, SymbolDef]:
    return {s.qualified_name: s for s in parsed.symbols}


def chunk_for(parsed: ParsedFile, symbol: str, kind: str | None = None) -> Chunk:
    found = [
        c
        for c in parsed.chunks
        if c.symbol == symbol and c.signature and (kind is None or c.kind == kind)
    ]
    assert len(found) == 1, (symbol, parsed.chunks)
    return found[0]


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return i
    raise AssertionError(needle)


PYTHON = '''"""Module docstring."""
import os

LIMIT = 10


# Adds numbers.
@cache
def add(a: int, b: int) -> int:
    """Return the sum."""
    return a + b


class Account(Base):
    """A bank account."""

    currency = "EUR"

    def __init__(self, owner: str) -> None:
        self.owner = owner

    # Money in.
    @property
    def balance(self) -> int:
        """Current balance."""
        return 0

    kind = "checking"

    class Meta:
        ordering = ["owner"]


if __name__ == "__main__":
    print(add(1, 2))
'''


def test_python_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("bank.py", PYTHON, "python")
    exact_lines(parsed, PYTHON)
    syms = symbols(parsed)
    assert set(syms) == {
        "LIMIT",
        "add",
        "Account",
        "Account.currency",
        "Account.__init__",
        "Account.balance",
        "Account.kind",
        "Account.Meta",
        "Account.Meta.ordering",
    }
    assert syms["LIMIT"].kind == "constant"
    assert syms["Account.currency"].kind == syms["Account.Meta.ordering"].kind == "attribute"
    add = syms["add"]
    assert (add.kind, add.container, add.language) == ("function", "", "python")
    assert add.start_line == line_of(PYTHON, "# Adds numbers.")  # comment + decorator included
    assert add.end_line == line_of(PYTHON, "return a + b")
    assert (add.name_line, add.name_col) == (line_of(PYTHON, "def add"), 4)
    assert add.signature == "def add(a: int, b: int) -> int"
    balance = syms["Account.balance"]
    assert (balance.kind, balance.container, balance.name) == ("method", "Account", "balance")
    assert syms["Account"].kind == "class"
    assert syms["Account.Meta"].kind == "class"

    add_chunk = chunk_for(parsed, "add")
    assert add_chunk.kind == "function"
    assert add_chunk.doc == "Return the sum."
    assert "@cache" in add_chunk.text and '"""Return the sum."""' in add_chunk.text
    assert add_chunk.text.startswith("# Adds numbers.")

    header = chunk_for(parsed, "Account")
    assert header.kind == "class" and header.doc == "A bank account."
    assert header.signature == "class Account(Base)"
    assert 'currency = "EUR"' in header.text
    assert "def __init__" not in header.text  # methods are not duplicated in the class chunk
    balance_chunk = chunk_for(parsed, "Account.balance")
    assert balance_chunk.text.startswith("    # Money in.\n    @property")
    assert balance_chunk.doc == "Current balance."
    # fields between methods land in a chunk named after the class
    kind_line = line_of(PYTHON, 'kind = "checking"')
    holder = [c for c in parsed.chunks if c.start_line <= kind_line <= c.end_line]
    assert holder and holder[0].symbol == "Account"
    # module-level code goes in module windows
    module = [c for c in parsed.chunks if c.kind == "module"]
    assert [c.start_line for c in module] == [1, line_of(PYTHON, "if __name__")]
    assert all(c.symbol == "" for c in module)


TYPESCRIPT = """import { Dep } from "./dep";

/**
 * A counter service.
 */
@Injectable()
export class Counter<T> extends Base {
  private count: number = 0;

  constructor(private readonly dep: Dep) {
    super();
  }

  /** Adds n. */
  add(n: number): number {
    return this.count + n;
  }

  handler = (e: Event): void => {
    console.log(e);
  };
}

export interface Shape {
  area(): number;
}

export type Id = string | number;

export enum Color {
  Red,
  Green,
}

// Doubles.
export const double = (n: number): number => n * 2;

namespace Util {
  export function clamp(v: number): number {
    return v;
  }
}

/* é */ function late(): void {}
late();
"""


def test_typescript_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("counter.ts", TYPESCRIPT, "typescript")
    exact_lines(parsed, TYPESCRIPT)
    syms = symbols(parsed)
    kinds = {name: s.kind for name, s in syms.items()}
    assert kinds == {
        "Counter": "class",
        "Counter.count": "attribute",  # a field: a value, named but not a chunk of its own
        "Counter.constructor": "method",
        "Counter.add": "method",
        "Counter.handler": "method",
        "Shape": "interface",
        "Id": "type",
        "Color": "enum",
        "double": "function",
        "Util": "namespace",
        "Util.clamp": "function",
        "late": "function",
    }
    counter = chunk_for(parsed, "Counter")
    assert counter.start_line == line_of(TYPESCRIPT, "/**")
    assert "@Injectable()" in counter.text and "private count" in counter.text
    assert counter.doc == "A counter service."
    assert counter.signature == "class Counter<T> extends Base"
    add = chunk_for(parsed, "Counter.add")
    assert add.doc == "Adds n." and add.text.lstrip().startswith("/** Adds n. */")
    assert add.signature == "add(n: number): number"
    assert chunk_for(parsed, "double").doc == "Doubles."
    # name_col counts characters, not UTF-8 bytes ("é" is two bytes)
    late = syms["late"]
    assert (late.name_line, late.name_col) == (line_of(TYPESCRIPT, "function late"), 17)


TSX = """import React from "react";

type Props = { name: string };

/** Greets someone. */
export function Hello({ name }: Props) {
  return <div className="hello">Hello {name}</div>;
}

export const Bye = ({ name }: Props) => <span>Bye {name}</span>;

export default class Panel extends React.Component<Props> {
  render() {
    return <section>{this.props.name}</section>;
  }
}
"""


def test_tsx_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("hello.tsx", TSX, "tsx")
    exact_lines(parsed, TSX)
    kinds = {name: s.kind for name, s in symbols(parsed).items()}
    assert kinds == {
        "Props": "type",
        "Hello": "function",
        "Bye": "function",
        "Panel": "class",
        "Panel.render": "method",
    }
    hello = chunk_for(parsed, "Hello")
    assert hello.doc == "Greets someone."
    assert "<div" in hello.text
    assert (hello.start_line, hello.end_line) == (5, 8)


JAVASCRIPT = """const fs = require("fs");

/**
 * Reads a file.
 * @param {string} p
 */
function read(p) {
  return fs.readFileSync(p, "utf8");
}

class Cache {
  static size = 0;

  get(key) {
    return this.map.get(key);
  }

  clear = () => {
    this.map.clear();
  };
}

const handler = async function (req) {
  return read(req.path);
};

module.exports = { read, Cache, handler };
"""


def test_javascript_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("cache.js", JAVASCRIPT, "javascript")
    exact_lines(parsed, JAVASCRIPT)
    syms = symbols(parsed)
    assert {n: s.kind for n, s in syms.items()} == {
        "fs": "constant",
        "read": "function",
        "Cache": "class",
        "Cache.size": "attribute",
        "Cache.get": "method",
        "Cache.clear": "method",
        "handler": "function",
    }
    read = chunk_for(parsed, "read")
    assert read.doc == "Reads a file.\n@param {string} p"
    assert read.start_line == 3 and read.end_line == 9
    assert read.signature == "function read(p)"
    assert syms["Cache.get"].container == "Cache"
    exports = [c for c in parsed.chunks if "module.exports" in c.text]
    assert exports and exports[0].kind == "module"


GO = """package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Circle is round.
// It has a radius.
type Circle struct {
	R float64
}

// Area returns the area.
func (c *Circle) Area() float64 {
	return math.Pi * c.R * c.R
}

func New(r float64) *Circle {
	return &Circle{R: r}
}

type (
	ID   int
	Name string
)
"""


def test_go_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("shapes.go", GO, "go")
    exact_lines(parsed, GO)
    syms = symbols(parsed)
    assert {n: s.kind for n, s in syms.items()} == {
        "Shape": "interface",
        "Circle": "struct",
        "Circle.Area": "method",  # (*Circle).Area -> Circle.Area
        "New": "function",
        "ID": "type",
        "Name": "type",
    }
    area = chunk_for(parsed, "Circle.Area")
    assert area.signature == "func (c *Circle) Area() float64"
    assert area.doc == "Area returns the area."
    assert area.text.startswith("// Area returns the area.\nfunc (c *Circle) Area()")
    circle = chunk_for(parsed, "Circle")
    assert circle.doc == "Circle is round.\nIt has a radius."
    assert circle.signature == "type Circle struct"
    assert syms["Circle"].name_line == line_of(GO, "type Circle struct")
    assert syms["Circle"].name_col == 5


JAVA = """package bank;

import java.util.List;

/**
 * An account.
 */
@Entity
public class Account extends Base {
    private int balance;

    /** Creates it. */
    public Account(int b) {
        this.balance = b;
    }

    @Override
    public String toString() {
        return "Account";
    }

    interface Listener {
        void changed(int v);
    }

    enum State {
        OPEN,
        CLOSED;

        boolean isOpen() {
            return this == OPEN;
        }
    }
}
"""


def test_java_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("Account.java", JAVA, "java")
    exact_lines(parsed, JAVA)
    syms = symbols(parsed)
    assert {n: s.kind for n, s in syms.items()} == {
        "Account": "class",
        "Account.Account": "constructor",
        "Account.toString": "method",
        "Account.Listener": "interface",
        "Account.Listener.changed": "method",
        "Account.State": "enum",
        "Account.State.isOpen": "method",
    }
    account = chunk_for(parsed, "Account")
    assert account.start_line == 5 and "@Entity" in account.text
    assert account.doc == "An account."
    assert account.signature == "public class Account extends Base"
    to_string = chunk_for(parsed, "Account.toString")
    assert to_string.text.lstrip().startswith("@Override")
    ctor = chunk_for(parsed, "Account.Account")
    assert ctor.doc == "Creates it."


RUST = """use std::fmt;

/// A point.
#[derive(Debug, Clone)]
pub struct Point {
    x: i32,
    y: i32,
}

impl Point {
    /// Makes one.
    pub fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub trait Shape {
    fn area(&self) -> f64;
}

pub enum Dir {
    Up,
    Down,
}

mod inner {
    pub fn helper() -> u8 {
        1
    }
}

fn main() {
    let p = Point::new(1, 2);
    println!("{}", p);
}
"""


def test_rust_symbols_and_chunks(exact_lines) -> None:
    parsed = parse("point.rs", RUST, "rust")
    exact_lines(parsed, RUST)
    kinds = [(s.qualified_name, s.kind) for s in parsed.symbols]
    assert kinds == [
        ("Point", "struct"),
        ("Point", "impl"),
        ("Point.new", "method"),
        ("Point", "impl"),
        ("Point.fmt", "method"),
        ("Shape", "trait"),
        ("Shape.area", "method"),
        ("Dir", "enum"),
        ("inner", "module"),
        ("inner.helper", "function"),
        ("main", "function"),
    ]
    point = chunk_for(parsed, "Point", "struct")
    assert point.kind == "struct" and point.doc == "A point."
    assert point.text.startswith("/// A point.\n#[derive(Debug, Clone)]")
    new = chunk_for(parsed, "Point.new")
    assert new.signature == "pub fn new(x: i32, y: i32) -> Self" and new.doc == "Makes one."
    fmt_impl = [s for s in parsed.symbols if s.kind == "impl"][1]
    assert fmt_impl.signature == "impl fmt::Display for Point"
    # A bare header (`impl Point {` alone) is no chunk: it opens its first member's chunk,
    # which carries the container's signature and member list as context.
    assert [c for c in parsed.chunks if c.kind == "impl"] == []
    assert new.text.startswith("impl Point {\n")
    assert "impl Point" in new.context and "members: pub fn new(x: i32, y: i32) -> Self" in (
        new.context
    )
    fmt = chunk_for(parsed, "Point.fmt")
    assert fmt.text.startswith("impl fmt::Display for Point {\n")


def _long_python(body_lines: int) -> str:
    body = "".join(f"    total += {i}\n" for i in range(body_lines))
    return f'def long_one(x):\n    """Sums."""\n    total = 0\n{body}    return total\n'


def test_long_body_is_split_with_overlap(exact_lines) -> None:
    text = _long_python(200)
    parsed = parse("long.py", text, "python")
    exact_lines(parsed, text)
    pieces = [c for c in parsed.chunks if c.symbol == "long_one"]
    assert len(pieces) == 3
    assert all(c.kind == "function" for c in pieces)
    assert all(c.end_line - c.start_line + 1 <= MAX_SYMBOL_CHUNK_LINES for c in pieces)
    assert pieces[0].start_line == 1 and pieces[-1].end_line == 204
    for a, b in itertools.pairwise(pieces):
        assert a.end_line - b.start_line + 1 == SYMBOL_SPLIT_OVERLAP
    assert pieces[0].signature == "def long_one(x)" and pieces[0].doc == "Sums."
    assert all(not c.signature for c in pieces[1:])


def test_module_code_in_overlapping_windows(exact_lines) -> None:
    text = "".join(f"X{i} = {i}\n" for i in range(100))
    parsed = parse("consts.py", text, "python")
    exact_lines(parsed, text)
    assert [(c.start_line, c.end_line) for c in parsed.chunks] == [(1, 40), (36, 75), (71, 100)]
    assert CODE_WINDOW_LINES == 40 and CODE_WINDOW_OVERLAP == 5
    assert {c.kind for c in parsed.chunks} == {"module"}
    # Each constant is a symbol of its own, but its lines stay in the windows.
    assert [s.name for s in parsed.symbols] == [f"X{i}" for i in range(100)]
    assert {s.kind for s in parsed.symbols} == {"constant"}


FLASK_LIKE = '''from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from .app import Flask

    class GetKwargs(t.TypedDict):
        """Options of a lookup."""

        default: str

try:
    from greenlet import getcurrent as _ident
except ImportError:
    _ident = None

AppContextProxy = LocalProxy
ResponseValue: t.TypeAlias = "Response | str"
T_route = t.TypeVar("T_route")
type Pair = tuple[int, int]


class Config(dict):
    root_path: str
    DEFAULTS = {
        "DEBUG": False,
    }

    if sys.version_info >= (3, 12):

        def modern(self) -> None:
            pass
'''


def test_python_values_and_nested_definitions_are_symbols(exact_lines) -> None:
    parsed = parse("globals.py", FLASK_LIKE, "python")
    exact_lines(parsed, FLASK_LIKE)
    syms = symbols(parsed)
    kinds = {n: s.kind for n, s in syms.items()}
    assert kinds == {
        "GetKwargs": "class",
        "GetKwargs.default": "attribute",
        "_ident": "variable",
        "AppContextProxy": "variable",
        "ResponseValue": "type",
        "T_route": "type",
        "Pair": "type",
        "Config": "class",
        "Config.root_path": "attribute",
        "Config.DEFAULTS": "attribute",
        "Config.modern": "method",
    }
    alias = syms["AppContextProxy"]
    line = line_of(FLASK_LIKE, "AppContextProxy =")
    assert (alias.start_line, alias.end_line) == (line, line)
    assert (alias.name_line, alias.name_col) == (line, 0)
    assert alias.signature == "AppContextProxy = LocalProxy"
    defaults = syms["Config.DEFAULTS"]
    assert defaults.end_line == defaults.start_line + 2
    # A class under `if TYPE_CHECKING:` gets its own chunk; values stay in the windows.
    kwargs = chunk_for(parsed, "GetKwargs")
    assert kwargs.kind == "class" and kwargs.doc == "Options of a lookup."
    assert kwargs.start_line == line_of(FLASK_LIKE, "class GetKwargs")
    assert not any(c.symbol == "AppContextProxy" for c in parsed.chunks)
    window = [c for c in parsed.chunks if c.start_line <= line <= c.end_line]
    assert window and window[0].kind == "module"
    # Attributes don't split the class: its header still holds them.
    header = chunk_for(parsed, "Config")
    assert "root_path: str" in header.text and '"DEBUG": False' in header.text


GO_VALUES = """package limits

// Sizes of things.
const (
	MaxSize = 1 << 20
	minSize, midSize = 1, 2
	_ = 3
)

var ErrTooBig = errors.New("too big")

var (
	cache map[string]int
)

type (
	Size int
	Name = string
)
"""


def test_go_const_var_and_type_groups_name_each_member(exact_lines) -> None:
    parsed = parse("limits.go", GO_VALUES, "go")
    exact_lines(parsed, GO_VALUES)
    kinds = {s.name: s.kind for s in parsed.symbols}
    assert kinds == {
        "MaxSize": "constant",
        "minSize": "constant",
        "midSize": "constant",
        "ErrTooBig": "variable",
        "cache": "variable",
        "Size": "type",
        "Name": "type",
    }
    mid = next(s for s in parsed.symbols if s.name == "midSize")
    assert mid.name_line == line_of(GO_VALUES, "minSize, midSize") and mid.name_col == 10


TS_TYPES = """export const DEFAULT_TIMEOUT = 30;
export const helper = (x: number) => x + 1;
let counter = 0;

/** A request's options. */
export interface RequestOptions {
  timeout?: number;
}

export type Handler = (req: Request) => void;

export enum Method {
  Get,
  Post,
}
"""


def test_typescript_consts_interfaces_type_aliases_enums(exact_lines) -> None:
    parsed = parse("client.ts", TS_TYPES, "typescript")
    exact_lines(parsed, TS_TYPES)
    kinds = {s.name: s.kind for s in parsed.symbols}
    assert kinds == {
        "DEFAULT_TIMEOUT": "constant",
        "helper": "function",
        "counter": "variable",
        "RequestOptions": "interface",
        "Handler": "type",
        "Method": "enum",
    }
    assert chunk_for(parsed, "RequestOptions").doc == "A request's options."
    assert chunk_for(parsed, "Handler").kind == "type"


def test_other_languages_use_windows(exact_lines) -> None:
    text = "name: demo\n\nsteps:\n" + "".join(f"  - run: step {i}\n" for i in range(60))
    parsed = parse("ci.yaml", text, "yaml")
    exact_lines(parsed, text)
    assert {c.kind for c in parsed.chunks} == {"window"}
    assert {c.language for c in parsed.chunks} == {"yaml"}
    assert parsed.symbols == []


@pytest.mark.parametrize(
    ("head", "language"),
    [
        ("# @generated by protoc\n", "python"),
        ("// Code generated by mockgen. DO NOT EDIT.\n", "go"),
    ],
)
def test_generated_files_are_skipped(head: str, language: str) -> None:
    with pytest.raises(SkipFile) as err:
        parse("gen.x", head + "x = 1\n", language)
    assert err.value.reason == "generated"


def test_minified_and_binary_are_skipped() -> None:
    minified = "var a=" + ",".join(str(i) for i in range(3000)) + ";\n"
    with pytest.raises(SkipFile) as err:
        parse("app.js", minified, "javascript")
    assert err.value.reason == "minified"
    with pytest.raises(SkipFile) as err:
        parse_file("x.py", b"\x00\x01\x02def f(): pass", "python")
    assert err.value.reason == "binary"


def test_syntax_errors_still_chunk(exact_lines) -> None:
    text = "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass C:\n    def m(self): ...\n"
    parsed = parse("broken.py", text, "python")
    exact_lines(parsed, text)
    assert "ok" in symbols(parsed)
    assert "C.m" in symbols(parsed)


def test_empty_file_has_no_chunks() -> None:
    assert parse("empty.py", "", "python").chunks == []
    assert parse("blank.go", "\n\n   \n", "go").chunks == []


# --- context a chunk carries (index/chunk/context.py) ---------------------------------------

CONTEXT_PY = '''\
"""Tokens for the lexical index: identifiers split into words."""


class Splitter:
    """Splits glued identifiers."""

    def split(self, ident):
        return ident.split("_")

    def join(self, parts):
        return "_".join(parts)


class Bare:
    def only(self):
        return 1


def split_identifier(ident):
    return ident.lower()
'''


def test_class_header_holds_docstring_and_members_never_a_bare_line(exact_lines) -> None:
    parsed = parse("tokens.py", CONTEXT_PY, "python")
    exact_lines(parsed, CONTEXT_PY)
    header = chunk_for(parsed, "Splitter", "class")
    assert '"""Splits glued identifiers."""' in header.text
    assert "members: def split(self, ident); def join(self, parts)" in header.context
    # `class Bare:` alone is no chunk: its line opens the first method's chunk.
    assert [c for c in parsed.chunks if c.symbol == "Bare"] == []
    only = chunk_for(parsed, "Bare.only")
    assert only.text.startswith("class Bare:\n") and "members: def only(self)" in only.context
    one_line_headers = [
        c for c in parsed.chunks if c.kind == "class" and c.start_line == c.end_line
    ]
    assert one_line_headers == []


def test_method_knows_its_class_and_function_its_module() -> None:
    parsed = parse("tokens.py", CONTEXT_PY, "python")
    split = chunk_for(parsed, "Splitter.split")
    assert split.context.splitlines()[:2] == ["class Splitter", "Splits glued identifiers."]
    top = chunk_for(parsed, "split_identifier")
    assert top.context == "Tokens for the lexical index: identifiers split into words."


def test_long_method_pieces_repeat_signature_and_class() -> None:
    body = "".join(f"        total += {i}\n" for i in range(200))
    head = "class Summer:\n    def add_all(self, xs):\n        total = 0\n"
    text = f"{head}{body}        return total\n"
    parsed = parse("summer.py", text, "python")
    pieces = [c for c in parsed.chunks if c.symbol == "Summer.add_all"]
    assert len(pieces) >= 3
    assert pieces[0].text.startswith("class Summer:\n    def add_all(self, xs):")
    for piece in pieces[1:]:
        assert "def add_all" not in piece.text  # the piece's own lines lack it
        assert "class Summer" in piece.context and "def add_all(self, xs)" in piece.context
