"""TypeScript receivers the checker types from context, on the parse-tree fast path: `this`
(a `this:` parameter, an object literal's methods, `const self = this`), type guards and
`instanceof` narrowing, the lib's `Map.get` / `T[].find`, computed keys (`o[$k]`),
constructor parameter properties, an assignment's value; each with a case where the rule
must not apply."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.symbols.identifiers import identifier_at
from code_compass_server.symbols.resolve_tree import TreeScopes
from tests.conftest import write_tree

SRC = (
    "class A { run(): void {} }\n"  # 1
    "class B { run(): void {} }\n"  # 2
    "interface Runner { run(): void }\n"  # 3
    "function viaThis(this: Runner) { this.run() }\n"  # 4
    "function plain() { this.run() }\n"  # 5
    "const obj = { run() {}, go() { this.run() } }\n"  # 6
    "class C {\n"  # 7
    "  run(): void {}\n"  # 8
    "  go(): void { const self = this; self.run(); const o = { f() { this.run() } } }\n"  # 9
    "}\n"  # 10
    "function isB(x: any): x is B { return x instanceof B }\n"  # 11
    "const isA = make() as (thing: any) => thing is A\n"  # 12
    "declare function make(): any\n"  # 13
    "function guard(v: any) {\n"  # 14
    "  if (isB(v)) { v.run() } else if (isA(v)) { v.run() }\n"  # 15
    "  if (v instanceof A && v.run) v.run()\n"  # 16
    "  v.run()\n"  # 17
    "}\n"  # 18
    "const boxes: Map<string, B> = new Map()\n"  # 19
    "const list: A[] = []\n"  # 20
    "boxes.get('k')?.run(); list.find(x => true)!.run()\n"  # 21
    "const $key = Symbol('k')\n"  # 22
    "interface Held { [$key]: B; other: A }\n"  # 23
    "function held(h: Held, k: string) { h[$key].run(); h[k].run() }\n"  # 24
    "class D { constructor(public a: A, b: B) { b.run() } }\n"  # 25
    "class E { d!: D; m(): void { const x = (this.d = new D(new A(), b)); x.a.run() } }\n"  # 26
    "export const api = { $key }\n"  # 27
    "function guardOf<T>(name: string, c: new () => T): (x: any) => x is T { return null! }\n"
    "function looseOf<T>(name: string, c: T): (x: any) => x is T { return null! }\n"  # 29
    "const isB2 = guardOf('B', B)\n"  # 30
    "const isA2 = looseOf('A', A)\n"  # 31
    "function made(v: any) { if (isB2(v)) v.run(); if (isA2(v)) v.run() }\n"  # 32
    "interface Handler<T> { open(ws: Sock<T>): void; close(): void }\n"  # 33
    "interface Sock<T> { data: T }\n"  # 34
    "interface Data { events: B }\n"  # 35
    "const h: Handler<Data> = { open(ws) { ws.data.events.run(); this.close() } }\n"  # 36
    "const bare = { open(ws) { ws.data.events.run(); this.close() } }\n"  # 37
    "const mk = () => new B()\n"  # 38
    "function outer() { function inner() { return new A() }; return new B() }\n"  # 39
    "function untyped(x: any) { return x }\n"  # 40
    "mk().run(); outer().run(); untyped(1).run()\n"  # 41
    "function early(v: any) { if (!isB(v)) return; v.run() }\n"  # 42
    "function notEarly(v: any) { if (!isB(v)) { log() } v.run() }\n"  # 43
    "declare function log(): void\n"  # 44
)


def _at(s: TreeScopes, line: int, word: str, nth: int = 0) -> tuple[str, int] | str | None:
    row = SRC.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = row.index(word, col + 1)
    res = s.resolve("src/t.ts", "typescript", SRC, line - 1, col)
    if res is None:
        return None
    return (res.targets[0].path, res.targets[0].line) if res.targets else res.outside


def test_this_is_typed_by_a_this_parameter_an_object_literal_or_the_class(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 4, "run") == ("src/t.ts", 3)  # `this: Runner`
    assert _at(s, 5, "run") is None  # a plain function's `this`: not guessed
    assert _at(s, 6, "run", 1) == ("src/t.ts", 6)  # the object literal's own `run`
    assert _at(s, 9, "run") == ("src/t.ts", 8)  # `const self = this`
    assert _at(s, 9, "run", 1) is None  # a literal's method: its `this` has no `run`, not C's


def test_object_literal_methods_take_their_contextual_type(tmp_path: Path) -> None:
    """`const h: Handler<Data> = { open(ws) {…} }`: `ws` is typed by `Handler.open`'s
    parameter (T bound to Data) and `this` has the members of Handler; without a contextual
    type neither is guessed."""
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 36, "run") == ("src/t.ts", 2)
    assert _at(s, 36, "close") == ("src/t.ts", 33)
    assert _at(s, 37, "run") is None
    assert _at(s, 37, "close") is None


def test_unannotated_functions_return_what_their_return_expression_is(tmp_path: Path) -> None:
    """No return annotation: the checker infers it from the returned expression (an arrow's
    body, a `return` of the function itself, never a nested function's)."""
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 41, "run") == ("src/t.ts", 2)
    assert _at(s, 41, "run", 1) == ("src/t.ts", 2)  # not inner()'s A
    assert _at(s, 41, "run", 2) is None  # returns an `any`


def test_type_guards_and_instanceof_narrow_only_where_they_hold(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 15, "run") == ("src/t.ts", 2)  # `x is B`
    assert _at(s, 15, "run", 1) == ("src/t.ts", 1)  # a variable cast to a guard's type
    assert _at(s, 16, "run", 1) == ("src/t.ts", 1)  # `instanceof A && …`
    assert _at(s, 16, "run") == ("src/t.ts", 1)  # the right of `&&`
    assert _at(s, 17, "run") is None  # outside every guard: `any`
    assert _at(s, 32, "run") == ("src/t.ts", 2)  # a guard a generic factory made for B
    assert _at(s, 32, "run", 1) is None  # T bound to a value, not a class: not inferred
    assert _at(s, 42, "run") == ("src/t.ts", 2)  # after `if (!isB(v)) return`
    assert _at(s, 43, "run") is None  # the branch does not leave: no narrowing


def test_lib_collection_accessors_take_the_declared_type_arguments(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 21, "run") == ("src/t.ts", 2)  # Map<string, B>.get: a B
    assert _at(s, 21, "run", 1) == ("src/t.ts", 1)  # A[].find: an A
    shadowed = SRC + "class Map<K, V> { get(k: K): A { return new A() } }\n"
    write_tree(tmp_path, {"src/t.ts": shadowed})
    row = shadowed.split("\n")[20]
    res = TreeScopes(tmp_path).resolve("src/t.ts", "typescript", shadowed, 20, row.index("run"))
    assert res is not None and res.targets[0].line == 1  # a workspace `Map`: its own `get`


def test_computed_keys_parameter_properties_assignments_and_shorthands(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/t.ts": SRC})
    s = TreeScopes(tmp_path)
    assert _at(s, 24, "run") == ("src/t.ts", 2)  # `h[$key]`: the `[$key]: B` member
    assert _at(s, 24, "run", 1) is None  # a key that is no declared computed key
    assert _at(s, 26, "run") == ("src/t.ts", 1)  # `x = (this.d = …)`, `public a: A`
    res = s.resolve("src/t.ts", "typescript", SRC, 24, SRC.split("\n")[24].index("a: A"))
    assert res is not None and res.targets[0].kind == "member" and not res.targets[0].local
    res = s.resolve("src/t.ts", "typescript", SRC, 24, SRC.split("\n")[24].index("b: B"))
    assert res is not None and res.targets[0].local  # a plain parameter stays local
    assert _at(s, 27, "$key") == ("src/t.ts", 22)  # `{ $key }` reads the variable


def test_reserved_words_after_a_member_dot_are_names() -> None:
    assert identifier_at("    m.delete(k)", 7, "typescript") is not None
    assert identifier_at("p?.catch(f)", 4, "javascript") is not None
    assert identifier_at("    delete m[k]", 5, "typescript") is None  # the operator
    assert identifier_at("f(...new Set())", 6, "typescript") is None  # spread, then `new`
