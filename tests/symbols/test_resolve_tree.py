"""The tree-sitter resolvers: TypeScript imports/re-exports/this/overloads, Go method sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_compass_server.symbols.resolve_tree import TreeScopes

FILES = {
    "src/base.ts": ("export class Base {\n  protected count = 0;\n  start(): void {}\n}\n"),
    "src/util.ts": (
        "export function twice(x: number): number;\n"
        "export function twice(x: number, y: number): number;\n"
        "export function twice(x: number, y?: number): number { return x * 2; }\n"
        "export const LIMIT = 3;\n"
    ),
    "src/index.ts": "export * from './util';\nexport { Base as Root } from './base';\n",
    "src/app.ts": (
        "import { Root } from './index';\n"
        "import { twice as double, LIMIT } from './index';\n"
        "import * as util from './util';\n"
        "export class App extends Root {\n"
        "  constructor(private readonly name: string) { super(); }\n"
        "  run(n: number, other: App): number {\n"
        "    const local = double(n, LIMIT);\n"
        "    this.start(); this.count; this.name;\n"
        "    other.run(1, other);\n"
        "    return local + util.LIMIT + Math.max(1, 2) + n;\n"
        "  }\n"
        "}\n"
    ),
    "mux/router.go": (
        "package mux\n"
        "\n"
        'import "net/http"\n'
        "\n"
        "type conf struct {\n"
        "\tstrict bool\n"
        "}\n"
        "\n"
        "type Router struct {\n"
        "\tconf\n"
        "\troutes []*Route\n"
        "}\n"
        "\n"
        "func (r *Router) Handle(w http.ResponseWriter) bool {\n"
        "\tfor _, route := range r.routes {\n"
        "\t\troute.Match(w)\n"
        "\t}\n"
        "\tx := NewRoute()\n"
        "\treturn r.strict && x.ok && len(r.routes) > 0\n"
        "}\n"
    ),
    "mux/route.go": (
        "package mux\n"
        "\n"
        'import "net/http"\n'
        "\n"
        "type Route struct {\n"
        "\tok bool\n"
        "}\n"
        "\n"
        "// NewRoute makes an empty route.\n"
        "func NewRoute() *Route { return &Route{} }\n"
        "\n"
        "func (r *Route) Match(w http.ResponseWriter) bool { return r.ok }\n"
    ),
}


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def at(scopes: TreeScopes, rel: str, line: int, word: str, nth: int = 0) -> str | None:
    """The first target ("path:line") of the nth `word` on 1-based `line`; "outside:…"."""
    text = FILES[rel]
    src = text.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = src.index(word, col + 1)
    language = "go" if rel.endswith(".go") else "typescript"
    res = scopes.resolve(rel, language, text, line - 1, col)
    if res is None:
        return None
    if res.is_outside:
        return f"outside:{res.outside}"
    return f"{res.targets[0].path}:{res.targets[0].line}" if res.targets else None


def test_typescript_imports_reexports_and_aliases(repo: Path) -> None:
    s = TreeScopes(repo)
    assert at(s, "src/app.ts", 1, "Root") == "src/base.ts:1"  # export { Base as Root } from
    assert at(s, "src/app.ts", 4, "Root") == "src/base.ts:1"  # extends, through index.ts
    assert at(s, "src/app.ts", 7, "LIMIT") == "src/util.ts:4"  # export * from './util'
    assert at(s, "src/app.ts", 10, "LIMIT") == "src/util.ts:4"  # namespace import member
    assert at(s, "src/app.ts", 10, "local") == "src/app.ts:7"  # block-scoped const
    assert at(s, "src/app.ts", 10, "n", 1) == "src/app.ts:6"  # parameter


def test_typescript_overloads_this_and_typed_members(repo: Path) -> None:
    s = TreeScopes(repo)
    # double(n, LIMIT): the two-argument overload, as TypeScript picks it
    assert at(s, "src/app.ts", 7, "double") == "src/util.ts:2"
    assert at(s, "src/app.ts", 8, "start") == "src/base.ts:3"  # inherited method
    assert at(s, "src/app.ts", 8, "count") == "src/base.ts:2"  # inherited field
    assert at(s, "src/app.ts", 8, "name") == "src/app.ts:5"  # constructor parameter property
    assert at(s, "src/app.ts", 9, "run") == "src/app.ts:6"  # `other: App` -> App.run
    assert at(s, "src/app.ts", 10, "Math") == "outside:lib.Math"
    assert at(s, "src/app.ts", 10, "max") == "outside:lib.Math.max"


def test_go_package_receivers_embedding_and_outside(repo: Path) -> None:
    s = TreeScopes(repo)
    assert at(s, "mux/router.go", 15, "routes") == "mux/router.go:11"  # field via receiver
    assert at(s, "mux/router.go", 16, "Match") == "mux/route.go:12"  # range over []*Route
    assert at(s, "mux/router.go", 18, "NewRoute") == "mux/route.go:10"  # another file
    assert at(s, "mux/router.go", 19, "strict") == "mux/router.go:6"  # embedded struct field
    assert at(s, "mux/router.go", 19, "ok") == "mux/route.go:6"  # x := NewRoute()
    assert at(s, "mux/router.go", 19, "len") == "outside:builtin.len"
    assert at(s, "mux/router.go", 14, "http") == "outside:net/http"
    assert at(s, "mux/router.go", 14, "ResponseWriter") == "outside:net/http.ResponseWriter"
    assert at(s, "mux/router.go", 16, "route") == "mux/router.go:15"  # range variable
    text = FILES["mux/router.go"]
    res = s.resolve("mux/router.go", "go", text, 17, text.split("\n")[17].index("NewRoute"))
    assert res is not None and res.targets[0].doc_summary == "NewRoute makes an empty route."


RECEIVERS_TS = """export interface Observer<T> {
  next(value: T): void;
}
export class Subscriber<T> {
  next(value: T): void {}
  unsubscribe(): void {}
}
export class Subject<T> {
  next(value: T): void {}
  unsubscribe(): void {}
}
export function createSubscriber<T>(): Subscriber<T> {
  return new Subscriber<T>();
}
class Options { retry = 3; }
export class Client {
  #options: Options = new Options();
  private obs: Observer<number>;
  run(): number {
    const s = createSubscriber<number>();
    s.unsubscribe();
    this.obs.next(1);
    createSubscriber().next(2);
    return this.#options.retry;
  }
}
"""


def test_typescript_receivers_by_return_type_field_type_and_private_name(tmp_path: Path) -> None:
    """Methods defined in several classes: the receiver's declared type decides, as tsc does
    (a workspace function's return type, a field's type through `this.a.b`, `#private`
    fields, an interface-typed value -> the interface's member)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/sub.ts").write_text(RECEIVERS_TS, encoding="utf-8")
    s = TreeScopes(tmp_path)
    lines = RECEIVERS_TS.split("\n")

    def first(line: int, word: str) -> tuple[str, int] | None:
        res = s.resolve("src/sub.ts", "typescript", RECEIVERS_TS, line - 1,
                        lines[line - 1].index(word))  # fmt: skip
        return (res.targets[0].path, res.targets[0].line) if res and res.targets else None

    assert first(21, "unsubscribe") == ("src/sub.ts", 6)  # Subscriber's, not Subject's
    assert first(22, "next") == ("src/sub.ts", 2)  # the interface member
    assert first(23, "next") == ("src/sub.ts", 5)  # on a call's result
    assert first(24, "#options") == ("src/sub.ts", 17)
    assert first(24, "retry") == ("src/sub.ts", 15)


CALLBACK_TS = """export class Subscriber<T> {
  complete(): void {}
}
export class Subject<T> {
  complete(): void {}
}
export class Observable<T> {
  constructor(subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => void) {}
}
export function from<T>(): Observable<T> {
  return new Observable<T>((subscriber) => {
    subscriber.complete();
  });
}
"""


def test_a_callbacks_parameter_is_typed_by_the_callee_as_tsc_does(tmp_path: Path) -> None:
    """`new Observable((subscriber) => subscriber.complete())`: the constructor's declared
    callback type names the parameter's class (its `this:` pseudo-parameter skipped)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/obs.ts").write_text(CALLBACK_TS, encoding="utf-8")
    line = CALLBACK_TS.split("\n")[11]
    res = TreeScopes(tmp_path).resolve(
        "src/obs.ts", "typescript", CALLBACK_TS, 11, line.index("complete")
    )
    assert res is not None and [(t.path, t.line) for t in res.targets] == [("src/obs.ts", 2)]
