"""TypeScript / JavaScript names resolved from tree-sitter trees (the fast path).

Block scopes and parameters, imports (relative, aliased, default, namespace, re-exported
through `export … from` and `export *`, so through `index.ts`), module-level declarations,
`this.x` along the workspace's `extends` chain (fields, methods, constructor parameter
properties), `ns.x` and `Class.x`. Anything else (a member of a value of unknown type) is
undecided: `None`, and the hover falls back to the name lookup, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tree_sitter import Node

from code_compass_server.symbols.resolve_model import MAX_FOLLOW, Resolution, Target
from code_compass_server.symbols.resolve_treecache import Parsed, TreeFiles
from code_compass_server.symbols.ts_globals import JS_GLOBALS, SAME_SHAPE_WRAPPERS

_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression",
     "function", "arrow_function", "method_definition", "generator_function",
     "function_signature", "method_signature", "abstract_method_signature"}
)  # fmt: skip
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_NAMED_DECLS = frozenset(
    {"function_declaration", "generator_function_declaration", "class_declaration",
     "abstract_class_declaration", "interface_declaration", "type_alias_declaration",
     "enum_declaration", "function_signature", "internal_module", "module"}
)  # fmt: skip
_IDENTS = frozenset(
    {"identifier", "type_identifier", "property_identifier", "shorthand_property_identifier",
     "shorthand_property_identifier_pattern", "private_property_identifier"}
)  # fmt: skip
_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")


# Type arguments in force: ((the type parameter's file, its start byte), the file the argument
# is written in, the argument's type node). Keyed by the parameter's declaration, not its
# name, so the bindings of a class and of its bases live side by side.
TypeArgs = tuple[tuple[tuple[str, int], Parsed, Node], ...]
_PROMISES = frozenset({"Promise", "PromiseLike"})
# The lib's keyed collections and their accessors of a value (`Map<K, V>.get(k)`: a V).
_MAPS = frozenset({"Map", "WeakMap", "ReadonlyMap"})
_MAP_GETTERS = frozenset({"get"})
# Array methods that give one element (`T[]`'s `find(…)`: a T).
_ARRAY_GETTERS = frozenset({"find", "findLast", "pop", "shift", "at"})
# `Omit<T, K>` / `Pick<T, K>`: some of T's members, each declared by T.
_SUBSET_WRAPPERS = frozenset({"Omit", "Pick"})


@dataclass(frozen=True, slots=True)
class Decl:
    name: str
    node: Node  # the name's node
    decl: Node  # the declaring node
    kind: str  # function | class | interface | type | variable | param | import | ...
    file: Parsed
    source: str = ""  # imports: the module specifier
    imported: str = ""  # imports: the exported name ("default", "*" for a namespace)
    # classes, interfaces, object types and their members: the type arguments they were
    # reached through (`b: Box<Foo>`, then `b.get()` of `get(): T` is a Foo)
    type_args: TypeArgs = ()


class TypeScriptScopes:
    def __init__(self, files: TreeFiles) -> None:
        self.files = files

    def resolve(
        self, rel: str, language: str, text: str | None, line: int, column: int
    ) -> Resolution | None:
        parsed = self.files.parse(rel, language, text)
        if parsed is None:
            return None
        node = parsed.node_at(line, column)
        if node is None or parsed.position(node) != (line, column):
            return Resolution((), "")  # a keyword (`from`, `new`): no symbol there
        if node.type not in _IDENTS:
            return None
        name = parsed.text_of(node)
        parent = node.parent
        if parent is not None and parent.type == "export_specifier":
            return self._result(self._export_specifier(parsed, parent))
        if node.type == "private_property_identifier" and (
            parent is None or parent.type == "member_expression"
        ):
            # `obj.#x` names the `#x` of the class whose body the code is in, whatever `obj`
            # is: private names are lexically scoped (the compiler's rule, not a guess).
            return self._result(self._private_member(parsed, node, name))
        if (
            parent is not None
            and parent.type == "member_expression"
            and node.type == "property_identifier"
        ):
            obj = parent.child_by_field_name("object")
            if obj is None:
                return None
            return self._result(_overload(self._member(parsed, obj, name, 0), parent))
        own = self._declared_here(parsed, node)
        if own is not None:
            return self._result(self._follow(own, 0))
        if node.type == "property_identifier":
            return None  # an object literal's key or a member name we cannot place
        # `{ x }` (a shorthand property) reads the variable `x`: resolved as `x` is.
        found = self._lookup(parsed, node, name)
        if found is None:
            if name in JS_GLOBALS:
                return Resolution((), f"lib.{name}")
            return None
        return self._result(_overload(self._follow(found, 0), node))

    def _export_specifier(self, parsed: Parsed, spec: Node) -> Decl | str | None:
        """`export { a as b } from './m'` / `export { a }`: what `a` names."""
        orig = spec.child_by_field_name("name")
        st = spec.parent.parent if spec.parent is not None else None
        if orig is None or st is None or st.type != "export_statement":
            return None
        source = _string(parsed, st.child_by_field_name("source"))
        if source:
            target = self._module(parsed, source)
            if target is None:
                return None if source.startswith(".") else f"{source}.{parsed.text_of(orig)}"
            return self._export(target, parsed.text_of(orig), 1)
        local = self._lookup(parsed, orig, parsed.text_of(orig))
        return self._follow(local, 1) if local is not None else None

    # -- declarations -----------------------------------------------------------------
    def _declared_here(self, parsed: Parsed, node: Node) -> Decl | None:
        """The identifier is itself a declaration's name (or an import specifier's)."""
        parent = node.parent
        if parent is None:
            return None
        if parent.type == "import_specifier":
            # `import { a as b }`: both names are the import's, never a local `a`
            # (specifier <- named_imports <- clause <- statement).
            st = parent.parent.parent.parent if parent.parent and parent.parent.parent else None
            if st is not None and st.type == "import_statement":
                return next(
                    (d for d in self._statement_decls(parsed, st) if d.node.id == node.id), None
                )
        if _is_parameter_property(parent) and parent.child_by_field_name("pattern") == node:
            # `constructor(public x: T)`: a member of the class, used through `this.x` and
            # by its instances anywhere, not a local of the constructor.
            return Decl(parsed.text_of(node), node, parent, "member", parsed)
        scope: Node | None = parent
        for _ in range(4):  # name <- declarator/parameter <- list <- scope
            if scope is None:
                break
            for d in self._scope_decls(parsed, scope):
                if d.node.id == node.id:
                    return d
            scope = scope.parent
        if parent.type in ("method_definition", "public_field_definition", "method_signature",
                           "property_signature", "abstract_method_signature") and (
            parent.child_by_field_name("name") == node
        ):  # fmt: skip
            return Decl(parsed.text_of(node), node, parent, "member", parsed)
        return None

    def _lookup(self, parsed: Parsed, node: Node, name: str) -> Decl | None:
        scope = node.parent
        while scope is not None:
            for d in self._scope_decls(parsed, scope):
                if d.name == name:
                    return d
            scope = scope.parent
        return None

    def _scope_decls(self, parsed: Parsed, scope: Node) -> Iterator[Decl]:
        t = scope.type
        tparams = scope.child_by_field_name("type_parameters")
        for tp in tparams.named_children if tparams is not None else ():
            name = tp.child_by_field_name("name")
            if name is not None:
                yield Decl(parsed.text_of(name), name, tp, "type parameter", parsed)
        if t in _FUNCTIONS:
            for field in ("parameters", "parameter"):
                params = scope.child_by_field_name(field)
                if params is not None:
                    for p in [params] if params.type == "identifier" else params.named_children:
                        pattern = p.child_by_field_name("pattern") if p.type != "identifier" else p
                        for ident in _pattern_names(pattern):
                            yield Decl(parsed.text_of(ident), ident, p, "param", parsed)
            if t in ("function_expression", "function"):
                name = scope.child_by_field_name("name")
                if name is not None:
                    yield Decl(parsed.text_of(name), name, scope, "function", parsed)
        elif t in ("for_in_statement", "for_statement", "catch_clause"):
            for field in ("left", "initializer", "parameter"):
                sub = scope.child_by_field_name(field)
                if sub is not None:
                    yield from self._statement_decls(parsed, sub)
                    for ident in _pattern_names(sub) if sub.type != "lexical_declaration" else ():
                        yield Decl(parsed.text_of(ident), ident, sub, "variable", parsed)
        elif t in ("program", "statement_block", "switch_case", "switch_default", "class_body",
                   "internal_module", "module", "export_statement",
                   "ERROR"):  # a file with syntax tree-sitter lacks: its root  # fmt: skip
            for child in scope.named_children:
                yield from self._statement_decls(parsed, child)
        if t in _CLASSES:  # a class expression's own name
            name = scope.child_by_field_name("name")
            if name is not None and t == "class":
                yield Decl(parsed.text_of(name), name, scope, "class", parsed)

    def _statement_decls(self, parsed: Parsed, st: Node) -> Iterator[Decl]:
        t = st.type
        if t == "export_statement":
            decl = st.child_by_field_name("declaration")
            if decl is not None:
                yield from self._statement_decls(parsed, decl)
            return
        if t == "ambient_declaration":
            for child in st.named_children:
                yield from self._statement_decls(parsed, child)
            return
        if t in ("lexical_declaration", "variable_declaration"):
            for d in st.named_children:
                if d.type == "variable_declarator":
                    for ident in _pattern_names(d.child_by_field_name("name")):
                        yield Decl(parsed.text_of(ident), ident, d, "variable", parsed)
            return
        if t in _NAMED_DECLS:
            name = st.child_by_field_name("name")
            if name is not None:
                kind = t.replace("_declaration", "").replace("abstract_", "")
                yield Decl(parsed.text_of(name), name, st, kind, parsed)
            return
        if t == "import_statement":
            source = _string(parsed, st.child_by_field_name("source"))
            for clause in st.named_children:
                if clause.type != "import_clause":
                    continue
                for part in clause.named_children:
                    if part.type == "identifier":
                        yield Decl(
                            parsed.text_of(part), part, st, "import", parsed, source, "default"
                        )
                    elif part.type == "namespace_import":
                        for ident in part.named_children:
                            yield Decl(
                                parsed.text_of(ident), ident, st, "import", parsed, source, "*"
                            )
                    elif part.type == "named_imports":
                        for spec in part.named_children:
                            name = spec.child_by_field_name("name")
                            alias = spec.child_by_field_name("alias") or name
                            if name is None or alias is None:
                                continue
                            imported = parsed.text_of(name)
                            yield Decl(
                                parsed.text_of(alias), alias, st, "import", parsed, source, imported
                            )
                            if alias.id != name.id:  # hovering the original name follows it too
                                yield Decl(
                                    parsed.text_of(alias),
                                    name,
                                    st,
                                    "import",
                                    parsed,
                                    source,
                                    imported,
                                )

    # -- imports and exports ------------------------------------------------------------
    def _follow(self, d: Decl, depth: int) -> Decl | str | None:
        if d.kind == "variable":
            value = d.decl.child_by_field_name("value")
            if value is not None and value.type == "class":
                return Decl(d.name, d.node, value, "class", d.file)  # `const C = class …`
        if d.kind != "import":
            return d
        if depth > MAX_FOLLOW:
            return None
        target = self._module(d.file, d.source)
        if target is None:
            if d.source.startswith("."):
                return None
            return d.source if d.imported == "*" else f"{d.source}.{d.imported}"
        if d.imported == "*":
            return Decl(d.name, target.tree.root_node, target.tree.root_node, "module", target)
        found = self._export(target, d.imported, depth + 1)
        return found

    def _module(self, parsed: Parsed, source: str) -> Parsed | None:
        if not source.startswith("."):
            return None
        base = parsed.rel.rsplit("/", 1)[0] if "/" in parsed.rel else ""
        parts = [p for p in base.split("/") if p]
        for piece in source.split("/"):
            if piece == "..":
                if parts:
                    parts.pop()
            elif piece not in (".", ""):
                parts.append(piece)
        stem = "/".join(parts)
        for p in stem.rsplit(".", 1)[0] if stem.endswith((".js", ".mjs")) else stem, stem:
            for cand in [*(p + e for e in _EXTENSIONS), *(f"{p}/index{e}" for e in _EXTENSIONS)]:
                found = self.files.load(cand)
                if found is not None:
                    return found
        return None

    def _export(self, module: Parsed, name: str, depth: int) -> Decl | str | None:
        if depth > MAX_FOLLOW:
            return None
        root = module.tree.root_node
        stars: list[str] = []
        for st in root.named_children:
            if st.type != "export_statement":
                continue
            source = _string(module, st.child_by_field_name("source"))
            decl = st.child_by_field_name("declaration")
            if decl is not None:
                for d in self._statement_decls(module, decl):
                    if d.name == name:
                        return d
                continue
            if name == "default" and any(c.type == "default" for c in st.children):
                value = st.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    local = self._lookup(module, value, module.text_of(value))
                    return self._follow(local, depth + 1) if local is not None else None
            clause = next((c for c in st.named_children if c.type == "export_clause"), None)
            if clause is None:
                if source and any(c.type == "*" for c in st.children):
                    stars.append(source)
                continue
            for spec in clause.named_children:
                orig = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias") or orig
                if orig is None or alias is None or module.text_of(alias) != name:
                    continue
                if source:
                    target = self._module(module, source)
                    return self._export(target, module.text_of(orig), depth + 1) if target else None
                local = self._lookup(module, orig, module.text_of(orig))
                return self._follow(local, depth + 1) if local is not None else None
        for source in stars:
            target = self._module(module, source)
            if target is not None:
                found = self._export(target, name, depth + 1)
                if found is not None:
                    return found
        # A declaration exported elsewhere in the file (`export { x }` handled above).
        for d in self._scope_decls(module, root):
            if d.name == name and d.kind != "import":
                return d
        return _exported_in_error(module, name)

    # -- members --------------------------------------------------------------------------
    def _member(self, parsed: Parsed, obj: Node, name: str, depth: int) -> Decl | str | None:
        if depth > MAX_FOLLOW:
            return None
        if obj.type == "this":
            return self._member_of_type(self._this_type(parsed, obj, depth + 1), name, depth)
        if obj.type == "super":
            cls = _enclosing_class(obj)
            return self._base_member(parsed, cls, name, depth + 1) if cls is not None else None
        if obj.type == "identifier":
            found = self._lookup(parsed, obj, parsed.text_of(obj))
            if found is None:
                name_of = parsed.text_of(obj)
                return f"lib.{name_of}.{name}" if name_of in JS_GLOBALS else None
            target = self._follow(found, depth + 1)
            if isinstance(target, str) or target is None:
                return f"{target}.{name}" if isinstance(target, str) else None
            if target.kind == "module":
                return self._export(target.file, name, depth + 1)
            if target.kind == "class":
                return self._class_member(target.file, target.decl, name, depth + 1)
            if target.kind == "enum":
                return self._enum_member(target, name)
            if target.kind in ("param", "variable", "member"):
                narrowed = self._narrowed(parsed, obj, depth + 1)
                typ = narrowed if narrowed is not None else self._declared_type(target, depth + 1)
                return self._member_of_type(typ, name, depth)
        if obj.type == "member_expression":
            # `this.#options.retry`, `a.b.c`: the member's declared type names the receiver.
            inner = obj.child_by_field_name("object")
            prop = obj.child_by_field_name("property")
            if inner is None or prop is None:
                return None
            field = self._member(parsed, inner, parsed.text_of(prop), depth + 1)
            if isinstance(field, str):
                return f"{field}.{name}"  # a member of something outside is outside too
            if isinstance(field, Decl) and field.kind == "member":
                return self._member_of_type(self._declared_type(field, depth + 1), name, depth)
            if isinstance(field, Decl) and _is_getter(field.decl):
                typ = self._type_decl(field.file, field.decl.child_by_field_name("return_type"),
                                      depth + 1, field.type_args)  # fmt: skip
                return self._member_of_type(typ, name, depth)
            if isinstance(field, Decl) and field.kind in ("class", "module", "enum"):
                return self._member_in(field, name, depth)
        if obj.type == "call_expression":
            return self._member_of_type(self._returned_type(parsed, obj, depth + 1), name, depth)
        if obj.type == "new_expression":  # `new C().m()`: an instance of C
            return self._member_of_type(self._constructed(parsed, obj, depth + 1), name, depth)
        if obj.type == "await_expression" and obj.named_children:
            awaited = obj.named_children[0]
            if awaited.type == "call_expression":  # `(await f()).m()`: f's `Promise<T>`'s T
                typ = self._returned_type(parsed, awaited, depth + 1, awaited=True)
                return self._member_of_type(typ, name, depth)
        if obj.type in ("parenthesized_expression", "non_null_expression") and obj.named_children:
            return self._member(parsed, obj.named_children[0], name, depth + 1)
        if obj.type in ("as_expression", "satisfies_expression") and len(obj.named_children) > 1:
            return self._member_of_type(
                self._type_decl(parsed, obj.named_children[1], depth + 1), name, depth
            )
        if obj.type == "subscript_expression":
            index = obj.child_by_field_name("index")
            holder = obj.child_by_field_name("object")
            if index is not None and holder is not None and index.type == "identifier":
                # `o[$key].m`: the member declared with the computed key `[$key]: T`.
                keyed = self._member(parsed, holder, f"[{parsed.text_of(index)}]", depth + 1)
                if isinstance(keyed, Decl):
                    return self._member_of_type(self._type_of_member(keyed, depth + 1), name,
                                                depth)  # fmt: skip
            indexed = self._type_node_of(parsed, obj.child_by_field_name("object"), depth + 1)
            element = self._element_type(*indexed, depth + 1) if indexed is not None else None
            if element is not None:
                return self._member_of_type(self._type_decl(*element, depth + 1), name, depth)
        return None

    def _this_type(self, parsed: Parsed, this: Node, depth: int) -> Decl | str | None:
        """What `this` is where it is written, as the checker types it: the enclosing class
        (arrow functions keep their outer `this`), a function's declared `this: T`
        parameter, or the object literal whose method (or function-valued property) the
        code is in."""
        p = this.parent
        while p is not None and depth <= MAX_FOLLOW:
            if p.type in _CLASSES:
                name = p.child_by_field_name("name") or p
                return Decl(parsed.text_of(name), name, p, "class", parsed)
            if p.type in _FUNCTIONS and p.type != "arrow_function":
                params = p.child_by_field_name("parameters")
                for param in params.named_children if params is not None else ():
                    pattern = param.child_by_field_name("pattern")
                    if pattern is not None and parsed.text_of(pattern) == "this":
                        return self._type_decl(parsed, param.child_by_field_name("type"), depth + 1)
                holder = p.parent
                if holder is not None and holder.type == "pair":
                    holder = holder.parent  # `{ m: function () { this } }`
                if holder is not None and holder.type == "object":
                    return Decl("{}", holder, holder, "object literal", parsed)
                if p.type != "method_definition":
                    return None  # a plain function's own `this`: unknown here
            p = p.parent
        return None

    def _narrowed(self, parsed: Parsed, ident: Node, depth: int) -> Decl | str | None:
        """The type a condition guarding the code narrows the variable `ident` to: a call
        of a type guard (`isMap(x)`, declared `(x) => x is T`) or `x instanceof C`, in an
        `if`'s then-branch, a `?:`'s true side or the right of `&&`."""
        name = parsed.text_of(ident)
        child, p = ident, ident.parent
        while p is not None and depth <= MAX_FOLLOW:
            cond: Node | None = None
            if p.type in ("if_statement", "ternary_expression") and (
                p.child_by_field_name("consequence") == child
            ):
                cond = p.child_by_field_name("condition")
            elif p.type == "binary_expression" and p.child_by_field_name("right") == child:
                op = p.child_by_field_name("operator")
                if op is not None and op.type == "&&":
                    cond = p.child_by_field_name("left")
            if cond is not None:
                found = self._guarded_type(parsed, cond, name, depth + 1)
                if found is not None:
                    return found
            if p.type in ("statement_block", "program"):
                # `if (!isMap(x)) return`: after it, x is a Map.
                for st in p.named_children:
                    if st == child:
                        break
                    cond = _exit_unless(st)
                    found = self._guarded_type(parsed, cond, name, depth + 1) if cond else None
                    if found is not None:
                        return found
            child, p = p, p.parent
        return None

    def _guarded_type(self, parsed: Parsed, cond: Node, name: str, depth: int) -> Decl | str | None:
        """The type `cond`, when true, proves the variable `name` has."""
        if depth > MAX_FOLLOW:
            return None
        if cond.type == "parenthesized_expression" and cond.named_children:
            return self._guarded_type(parsed, cond.named_children[0], name, depth + 1)
        if cond.type == "binary_expression":
            op = cond.child_by_field_name("operator")
            left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
            if op is None or left is None or right is None:
                return None
            if op.type == "&&":
                return self._guarded_type(parsed, left, name, depth + 1) or self._guarded_type(
                    parsed, right, name, depth + 1
                )
            if (
                op.type == "instanceof"
                and left.type == "identifier"
                and parsed.text_of(left) == name
                and right.type == "identifier"
            ):
                found = self._lookup(parsed, right, parsed.text_of(right))
                return self._follow(found, depth + 1) if found is not None else None
            return None
        if cond.type != "call_expression":
            return None
        args = cond.child_by_field_name("arguments")
        callee = cond.child_by_field_name("function")
        if args is None or callee is None or callee.type != "identifier":
            return None
        index = next(
            (i for i, a in enumerate(args.named_children)
             if a.type == "identifier" and parsed.text_of(a) == name), -1,
        )  # fmt: skip
        if index < 0:
            return None
        found = self._lookup(parsed, callee, parsed.text_of(callee))
        fn = self._follow(found, depth + 1) if found is not None else None
        guard = self._predicate(fn, depth + 1) if isinstance(fn, Decl) else None
        if guard is None:
            return None
        file, params, predicate, env = guard
        names = [
            file.text_of(pt) if (pt := p.child_by_field_name("pattern")) is not None else ""
            for p in _own_params(file, params)
        ]
        subject = predicate.child_by_field_name("name")
        if subject is None or index >= len(names) or names[index] != file.text_of(subject):
            return None
        return self._type_decl(file, predicate.child_by_field_name("type"), depth + 1, env)

    def _predicate(self, fn: Decl, depth: int) -> tuple[Parsed, Node | None, Node, TypeArgs] | None:
        """A type guard's (file, parameters, `x is T` node, type arguments in force): a
        function declared so, a variable whose annotation or `as` cast is such a function
        type, or one made by a generic factory (`make<T>(c: new () => T): (x) => x is T`
        called with a class: T is that class, as the checker infers it)."""
        node = fn.decl
        sig: Node | None = node if node.type in _FUNCTIONS else None
        file = fn.file
        env: TypeArgs = ()
        value = node.child_by_field_name("value") if node.type == "variable_declarator" else None
        if sig is None and value is not None and value.type == "call_expression":
            made = self._factory_guard(file, value, depth + 1)
            if made is not None:
                file, sig, env = made
        if sig is None and node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            typed = self._function_type(file, node.child_by_field_name("type"), depth + 1)
            if typed is None and value is not None and value.type == "as_expression":
                typed = self._function_type(file, value.named_children[-1], depth + 1)
            if typed is None and value is not None and value.type in _FUNCTIONS:
                typed = (file, value)
            if typed is not None:
                file, sig = typed
        if sig is None:
            return None
        returns = sig.child_by_field_name("return_type")
        if returns is not None and returns.type == "type_predicate_annotation":
            returns = returns.named_children[0] if returns.named_children else None
        if returns is None or returns.type != "type_predicate":
            return None
        return file, sig.child_by_field_name("parameters"), returns, env

    def _factory_guard(
        self, parsed: Parsed, call: Node, depth: int
    ) -> tuple[Parsed, Node, TypeArgs] | None:
        """`f(…, C)` where `f<T>(…, c: new (…) => T): (x) => x is T`: the returned function
        type, with T bound to the class argument."""
        callee = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if callee is None or args is None or callee.type != "identifier" or depth > MAX_FOLLOW:
            return None
        found = self._lookup(parsed, callee, parsed.text_of(callee))
        factory = self._follow(found, depth + 1) if found is not None else None
        if not isinstance(factory, Decl) or factory.decl.type not in _FUNCTIONS:
            return None
        returned = self._function_type(
            factory.file, factory.decl.child_by_field_name("return_type"), depth + 1
        )
        if returned is None:
            return None
        tparams = factory.decl.child_by_field_name("type_parameters")
        bound: list[tuple[tuple[str, int], Parsed, Node]] = []
        params = _own_params(factory.file, factory.decl.child_by_field_name("parameters"))
        for i, param in enumerate(params):
            annotation = param.child_by_field_name("type")
            made = (
                annotation.named_children[0] if annotation and annotation.named_children else None
            )
            if made is None or made.type != "constructor_type" or i >= len(args.named_children):
                continue
            instance = made.child_by_field_name("type")
            for tp in tparams.named_children if tparams is not None else ():
                tp_name = tp.child_by_field_name("name")
                if (
                    instance is not None
                    and tp_name is not None
                    and (factory.file.text_of(tp_name) == factory.file.text_of(instance))
                ):
                    bound.append(((factory.file.rel, tp.start_byte), parsed,
                                  args.named_children[i]))  # fmt: skip
        return returned[0], returned[1], tuple(bound)

    def _member_in(self, target: Decl, name: str, depth: int) -> Decl | str | None:
        if target.kind == "module":
            return self._export(target.file, name, depth + 1)
        if target.kind == "class":
            return self._class_member(target.file, target.decl, name, depth + 1)
        if target.kind == "enum":
            return self._enum_member(target, name)
        return None

    def _member_of_type(self, typ: Decl | str | None, name: str, depth: int) -> Decl | str | None:
        """`name` on a value of type `typ` (a class or an interface: its member, as the
        compiler resolves it; an outside type: its full name)."""
        if isinstance(typ, str):
            return f"{typ}.{name}"
        if typ is None or depth > MAX_FOLLOW:
            return None
        if typ.kind in ("class", "interface", "type literal"):
            member = self._class_member(typ.file, typ.decl, name, depth + 1, typ.type_args)
            if isinstance(member, Decl) and typ.type_args:
                # The member's types read the arguments the type was reached through.
                member = replace(member, type_args=typ.type_args + member.type_args)
            return member
        if typ.kind == "object literal":
            for prop in typ.decl.named_children:
                key = (
                    prop
                    if prop.type == "shorthand_property_identifier"
                    else (prop.child_by_field_name("key") or prop.child_by_field_name("name"))
                )
                if key is not None and typ.file.text_of(key) == name:
                    return Decl(name, key, prop, "member", typ.file)
            # `this.x` in a method of `const o: T = {…}`: T's member, as the checker types
            # `this` there (the literal and its contextual type).
            context_type = self._object_context_type(typ.file, typ.decl, depth + 1)
            return self._member_of_type(context_type, name, depth + 1)
        if typ.kind == "union":  # the first part that has the member (`string | {k: T}`)
            for part in _union_parts(typ.decl):
                found = self._member_of_type(self._type_decl(typ.file, part, depth + 1,
                                                             typ.type_args), name,
                                             depth + 1)  # fmt: skip
                if isinstance(found, Decl):
                    return found
        return None

    def _returned_type(
        self, parsed: Parsed, call: Node, depth: int, awaited: bool = False
    ) -> Decl | str | None:
        """The declared return type of a workspace function or method called by `call`
        (`awaited`: what awaiting it gives, the `T` of a `Promise<T>`)."""
        lib = self._lib_accessor(parsed, call, depth + 1)
        if lib is not None:
            return self._type_decl(*lib, depth + 1)
        returned = self._returned_node(parsed, call, depth)
        if returned is None:
            return None
        if isinstance(returned, Decl):
            return returned  # a call of a class (JavaScript factories): its instances
        file, returns, env = returned
        if awaited and returns is not None:
            returns = self._promised(file, returns)
        return self._annotated(file, returns, depth, env)

    def _returned_node(
        self, parsed: Parsed, call: Node, depth: int
    ) -> Decl | tuple[Parsed, Node | None, TypeArgs] | None:
        """The return type node of the workspace function or method `call` calls, with the
        type arguments its receiver was reached through (a class called: the class)."""
        if depth > MAX_FOLLOW:
            return None
        callee = call.child_by_field_name("function")
        named = callee  # `f!(…)`, `(f)(…)`: f
        while named is not None and named.type in ("non_null_expression",
                                                   "parenthesized_expression"):  # fmt: skip
            named = named.named_children[0] if named.named_children else None
        fn: Decl | str | None = None
        if named is not None and named.type == "identifier":
            found = self._lookup(parsed, named, parsed.text_of(named))
            fn = self._follow(found, depth + 1) if found is not None else None
        elif named is not None and named.type == "member_expression":
            obj = named.child_by_field_name("object")
            prop = named.child_by_field_name("property")
            if obj is not None and prop is not None:
                if prop.type == "private_property_identifier":
                    fn = self._private_member(parsed, prop, parsed.text_of(prop))
                else:
                    fn = self._member(parsed, obj, parsed.text_of(prop), depth + 1)
        if callee is not None:
            fn = _overload(fn, callee)  # the signature this call's arity picks
        if not isinstance(fn, Decl):
            return None
        if fn.kind == "class":
            return fn
        node = fn.decl
        if node.type in ("variable_declarator", "public_field_definition"):
            value = node.child_by_field_name("value")
            node = value if value is not None else node  # const f = (…): T => …
        returns = node.child_by_field_name("return_type")
        if returns is None and node.type in _FUNCTIONS:
            # No declared return type: what the checker infers, from the returned expression.
            inferred = self._inferred_return(fn.file, node, depth + 1)
            if isinstance(inferred, Decl):
                return inferred
        if returns is None and fn.kind in ("member", "variable", "param"):
            # A value called: its type's call signature (`f: (x) => T`, `{ (x): T }`).
            annotation = fn.decl.child_by_field_name("type")
            fn_type = self._function_type(fn.file, annotation, depth + 1)
            if fn_type is not None:
                return fn_type[0], fn_type[1].child_by_field_name("return_type"), fn.type_args
            typ = self._declared_type(fn, depth + 1)
            if isinstance(typ, Decl) and typ.kind == "type literal":
                sig = next((c for c in typ.decl.named_children if c.type == "call_signature"), None)
                if sig is not None:
                    return typ.file, sig.child_by_field_name("return_type"), typ.type_args
        return fn.file, returns, fn.type_args

    def _lib_accessor(self, parsed: Parsed, call: Node, depth: int) -> tuple[Parsed, Node] | None:
        """What an element accessor of the lib's collections returns, from the type
        arguments its receiver is declared with: `m.get(k)` of a `Map<K, V>` /
        `WeakMap<K, V>` is a V, `xs.find(…)` / `pop()` / `at(i)` of a `T[]` a T."""
        callee = call.child_by_field_name("function")
        if callee is None or callee.type != "member_expression":
            return None
        obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
        if obj is None or prop is None:
            return None
        method = parsed.text_of(prop)
        if method not in _MAP_GETTERS and method not in _ARRAY_GETTERS:
            return None
        typed = self._type_node_of(parsed, obj, depth + 1)
        if typed is None:
            return None
        file, tnode = typed
        while tnode.type in (
            "type_annotation",
            "parenthesized_type",
            "readonly_type",
            "union_type",
        ):
            if tnode.type == "union_type":
                parts = [c for c in _union_parts(tnode) if not _is_nullish(file, c)]
                if len(parts) != 1:
                    return None
                tnode = parts[0]
            elif tnode.named_children:
                tnode = tnode.named_children[0]
            else:
                return None
        if method in _ARRAY_GETTERS:
            return self._element_type(file, tnode, depth + 1)
        if tnode.type != "generic_type":
            return None
        name = tnode.child_by_field_name("name")
        targs = tnode.child_by_field_name("type_arguments")
        if name is None or targs is None or len(targs.named_children) != 2:
            return None
        type_name = file.text_of(name)
        if type_name not in _MAPS or self._lookup(file, name, type_name) is not None:
            return None  # a workspace type of that name: its own `get` decides
        return file, targs.named_children[1]

    def _inferred_return(self, parsed: Parsed, fn: Node, depth: int) -> Decl | str | None:
        """The type of what a function without a return annotation returns: an arrow's
        expression body, else its first `return` with a value (not one of a nested
        function); typed by the expression's form (`_value_type`)."""
        body = fn.child_by_field_name("body")
        if body is None or depth > MAX_FOLLOW:
            return None
        if body.type != "statement_block":
            return self._value_type(parsed, body, depth + 1)
        todo = list(body.named_children)
        while todo:
            st = todo.pop(0)
            if st.type == "return_statement" and st.named_children:
                return self._value_type(parsed, st.named_children[0], depth + 1)
            if st.type not in _FUNCTIONS and st.type not in _CLASSES:
                todo.extend(st.named_children)
        return None

    def _promised(self, parsed: Parsed, tnode: Node) -> Node:
        """`Promise<T>` (the lib's, not a workspace type of that name): T; else the type."""
        inner = tnode
        while inner.type in ("type_annotation", "parenthesized_type") and inner.named_children:
            inner = inner.named_children[0]
        if inner.type == "generic_type":
            name = inner.child_by_field_name("name")
            targs = inner.child_by_field_name("type_arguments")
            if (
                name is not None
                and targs is not None
                and targs.named_children
                and parsed.text_of(name) in _PROMISES
                and self._lookup(parsed, name, parsed.text_of(name)) is None
            ):
                return targs.named_children[0]
        return tnode

    def _constructed(self, parsed: Parsed, new: Node, depth: int) -> Decl | str | None:
        """`new C(…)` / `new Box<Foo>(…)`: an instance of C, with its type arguments."""
        ctor = new.child_by_field_name("constructor")
        if ctor is None or ctor.type != "identifier":
            return None
        made = self._lookup(parsed, ctor, parsed.text_of(ctor))
        if made is None:
            return f"lib.{parsed.text_of(ctor)}" if parsed.text_of(ctor) in JS_GLOBALS else None
        made_of = self._follow(made, depth + 1)
        targs = new.child_by_field_name("type_arguments")
        if isinstance(made_of, Decl) and targs is not None:
            return _bind(made_of, list(targs.named_children), parsed, ())
        return made_of

    def _contextual_type(self, d: Decl, depth: int) -> Decl | str | None:
        """An unannotated parameter of a callback passed to a workspace function or
        constructor (`new Observable((subscriber) => …)`): the type the callee's parameter
        declares for it, as the compiler types it from context."""
        if depth > MAX_FOLLOW:
            return None
        param = d.decl
        if param.type == "identifier":
            fn, index = param.parent, 0  # `x => …`
        else:
            if param.child_by_field_name("pattern") != d.node:
                return None  # a destructured name
            plist = param.parent
            fn = plist.parent if plist is not None else None
            index = plist.named_children.index(param) if plist is not None else -1
        if fn is None or index < 0:
            return None
        expected = self._expected_function_type(d.file, fn, depth + 1)
        if expected is None:
            return None
        fn_file, fn_type, env = expected
        inner = _own_params(fn_file, fn_type.child_by_field_name("parameters"))
        if index >= len(inner):
            return None
        return self._annotated(fn_file, inner[index].child_by_field_name("type"), depth, env)

    def _expected_function_type(
        self, parsed: Parsed, fn: Node, depth: int
    ) -> tuple[Parsed, Node, TypeArgs] | None:
        """The function type a function expression is checked against, from its context: the
        parameter of the workspace function or constructor it is passed to, the declared
        return type of the function that returns it, the annotated variable it is assigned
        to (through type aliases: `MiddlewareHandler` names a function type), or the member
        of an object literal's contextual type it implements (`{ open(ws) {…} }` typed
        `Handler<T>`: `open`'s declared signature, T bound); with the type arguments in
        force."""
        if depth > MAX_FOLLOW:
            return None
        holder, key = fn.parent, fn.child_by_field_name("name")
        if holder is not None and holder.type == "pair":  # `{ m: (x) => … }`
            key, holder = holder.child_by_field_name("key"), holder.parent
        if holder is not None and holder.type == "object" and key is not None:
            context_type = self._object_context_type(parsed, holder, depth + 1)
            member = self._member_of_type(context_type, parsed.text_of(key), depth + 1)
            if not isinstance(member, Decl):
                return None
            if member.decl.type in ("method_signature", "method_definition"):
                return member.file, member.decl, member.type_args
            typed = self._function_type(
                member.file, member.decl.child_by_field_name("type"), depth + 1
            )
            return (*typed, member.type_args) if typed is not None else None
        found = self._expected_at(parsed, fn, depth)
        return (*found, ()) if found is not None else None

    def _object_context_type(self, parsed: Parsed, obj: Node, depth: int) -> Decl | str | None:
        """The type an object literal is checked against: its variable's annotation, an
        `as` / `satisfies` type, or the declared return type of the function returning it."""
        context = obj.parent
        while context is not None and context.type == "parenthesized_expression":
            context = context.parent
        if context is None or depth > MAX_FOLLOW:
            return None
        if context.type == "variable_declarator" and context.child_by_field_name("value") == obj:
            return self._type_decl(parsed, context.child_by_field_name("type"), depth + 1)
        if context.type in ("as_expression", "satisfies_expression"):
            return self._type_decl(parsed, context.named_children[-1], depth + 1)
        if context.type == "return_statement":
            outer = context.parent
            while outer is not None and outer.type not in _FUNCTIONS:
                outer = outer.parent
            returns = outer.child_by_field_name("return_type") if outer is not None else None
            return self._type_decl(parsed, returns, depth + 1)
        return None

    def _expected_at(self, parsed: Parsed, fn: Node, depth: int) -> tuple[Parsed, Node] | None:
        """`_expected_function_type` from what encloses the function expression."""
        context = fn.parent
        while context is not None and context.type in ("parenthesized_expression",
                                                        "as_expression"):  # fmt: skip
            context = context.parent
        if context is None:
            return None
        if context.type == "return_statement" or (
            context.type == "arrow_function" and context.child_by_field_name("body") == fn
        ):
            outer = context if context.type == "arrow_function" else context.parent
            while outer is not None and outer.type not in _FUNCTIONS:
                outer = outer.parent
            returns = outer.child_by_field_name("return_type") if outer is not None else None
            return self._function_type(parsed, returns, depth + 1)
        if context.type == "variable_declarator" and context.child_by_field_name("value") == fn:
            return self._function_type(parsed, context.child_by_field_name("type"), depth + 1)
        if context.type != "arguments" or context.parent is None:
            return None
        call = context.parent
        arg_index = next((i for i, a in enumerate(context.named_children) if a == fn), -1)
        callee: Decl | str | None = None
        if call.type == "new_expression":
            ctor = call.child_by_field_name("constructor")
            found = self._lookup(parsed, ctor, parsed.text_of(ctor)) if ctor is not None else None
            cls = self._follow(found, depth + 1) if found is not None else None
            if isinstance(cls, Decl) and cls.kind == "class":
                callee = self._class_member(cls.file, cls.decl, "constructor", depth + 1)
        elif call.type == "call_expression":
            f = call.child_by_field_name("function")
            if f is not None and f.type == "identifier":
                found = self._lookup(parsed, f, parsed.text_of(f))
                callee = self._follow(found, depth + 1) if found is not None else None
            elif f is not None and f.type == "member_expression":
                obj, prop = f.child_by_field_name("object"), f.child_by_field_name("property")
                if obj is not None and prop is not None:
                    callee = self._member(parsed, obj, parsed.text_of(prop), depth + 1)
        if not isinstance(callee, Decl):
            return None
        params = callee.decl.child_by_field_name("parameters")
        if params is None and callee.decl.type in (
            "variable_declarator",
            "public_field_definition",
        ):
            value = callee.decl.child_by_field_name("value")
            params = value.child_by_field_name("parameters") if value is not None else None
        declared = _own_params(callee.file, params)
        if not 0 <= arg_index < len(declared):
            return None
        annotation = declared[arg_index].child_by_field_name("type")
        return self._function_type(callee.file, annotation, depth + 1)

    def _function_type(
        self, parsed: Parsed, tnode: Node | None, depth: int
    ) -> tuple[Parsed, Node] | None:
        """A type node as a function type: itself, or what an alias of one names."""
        if tnode is None or depth > MAX_FOLLOW:
            return None
        if tnode.type in ("type_annotation", "parenthesized_type"):
            inner = tnode.named_children[0] if tnode.named_children else None
            return self._function_type(parsed, inner, depth + 1)
        if tnode.type == "function_type":
            return parsed, tnode
        if tnode.type == "lookup_type" and len(tnode.named_children) == 2:
            owner, index = tnode.named_children  # `Config['make']`: that member's type
            key = _string(parsed, index.named_children[0]) if index.named_children else ""
            member = self._member_of_type(self._type_decl(parsed, owner, depth + 1), key,
                                          depth + 1) if key else None  # fmt: skip
            if isinstance(member, Decl):
                return self._function_type(
                    member.file, member.decl.child_by_field_name("type"), depth + 1
                )
            return None
        name = tnode.child_by_field_name("name") if tnode.type == "generic_type" else tnode
        if name is None or name.type != "type_identifier":
            return None
        found = self._lookup(parsed, name, parsed.text_of(name))
        target = self._follow(found, depth + 1) if found is not None else None
        if isinstance(target, Decl) and target.kind == "type_alias":
            value = target.decl.child_by_field_name("value")
            return self._function_type(target.file, value, depth + 1)
        return None

    def _annotated(
        self, parsed: Parsed, annotation: Node | None, depth: int, env: TypeArgs = ()
    ) -> Decl | str | None:
        """The class or interface a type annotation names (`: Foo`, `: Foo<T>`)."""
        return self._type_decl(parsed, annotation, depth, env)

    def _declared_type(self, d: Decl, depth: int) -> Decl | str | None:
        """The class or interface a parameter, variable or field is declared as (its type
        annotation, or `new C(…)` as its value)."""
        annotation = d.decl.child_by_field_name("type")
        if d.kind == "param" and annotation is None:
            return self._contextual_type(d, depth + 1)
        whole = d.decl.child_by_field_name("pattern") or d.decl.child_by_field_name("name")
        if annotation is not None and whole is not None and whole.type == "object_pattern":
            # `({ a }: Opts)`: the annotation types the whole pattern; `a` is `Opts.a`.
            field = self._destructured_key(d)
            typ = self._type_decl(d.file, annotation, depth + 1, d.type_args)
            member = self._member_of_type(typ, field, depth + 1) if field else None
            return self._type_of_member(member, depth + 1)
        if annotation is not None and annotation.named_children:
            return self._type_decl(d.file, annotation, depth + 1, d.type_args)
        loop = d.decl.parent
        if (
            loop is not None
            and loop.type == "for_in_statement"
            and loop.child_by_field_name("left") == d.decl
            and d.decl.type == "identifier"
        ):
            operator = loop.child_by_field_name("operator")
            if operator is None or d.file.text_of(operator) != "of":
                return None  # `for (k in o)`: a key, a string
            # `for (const x of xs)`: the element type of xs (`T[]`, `Array<T>`, …).
            right = loop.child_by_field_name("right")
            env: TypeArgs = ()
            iterated = self._type_node_of(d.file, right, depth + 1)
            if right is not None and right.type == "call_expression":  # `of b.all()`
                returned = self._returned_node(d.file, right, depth + 1)
                if isinstance(returned, tuple) and returned[1] is not None:
                    iterated, env = (returned[0], returned[1]), returned[2]
            element = self._element_type(*iterated, depth + 1) if iterated is not None else None
            return self._type_decl(*element, depth + 1, env) if element is not None else None
        value = d.decl.child_by_field_name("value")
        pattern = d.decl.child_by_field_name("name")
        if value is not None and pattern is not None and pattern.type == "object_pattern":
            return self._destructured_type(d, value, depth + 1)
        return self._value_type(d.file, value, depth + 1)

    def _value_type(self, file: Parsed, value: Node | None, depth: int) -> Decl | str | None:
        """The class, interface or object type an expression has, where its form says it:
        `new C()`, a call of a function with a known return type, an object literal, a cast,
        `this`, a copy of a typed declaration, an element of a typed array."""
        if depth > MAX_FOLLOW:
            return None
        awaited = False
        while value is not None and value.type in ("await_expression", "non_null_expression",
                                                   "parenthesized_expression",
                                                   "assignment_expression"):  # fmt: skip
            awaited = awaited or value.type == "await_expression"
            if value.type == "assignment_expression":  # `x = (a.b = c)`: what c is
                value = value.child_by_field_name("right")
                continue
            value = value.named_children[0] if value.named_children else None
        if value is not None and value.type == "this":  # `const self = this`
            return self._this_type(file, value, depth + 1)
        if value is not None and value.type == "new_expression":
            return self._constructed(file, value, depth + 1)
        if value is not None and value.type == "object":
            # `const state = { done: false }`: the literal's own properties.
            return Decl("{}", value, value, "object literal", file)
        elif value is not None and value.type == "call_expression":
            # `const s = createSubscriber(…)`: the function's declared return type (awaited:
            # the `T` of its `Promise<T>`).
            return self._returned_type(file, value, depth + 1, awaited)
        elif value is not None and value.type in ("as_expression", "satisfies_expression"):
            return self._type_decl(file, value.named_children[-1], depth + 1)
        elif value is not None and value.type in ("identifier", "member_expression"):
            # `const routers = this.#routers`: the type the other declaration carries.
            copied = self._type_node_of(file, value, depth + 1)
            return self._type_decl(*copied, depth + 1) if copied is not None else None
        elif value is not None and value.type == "subscript_expression":
            # `const node = nodes[i]`: the element type of what is indexed.
            indexed = self._type_node_of(file, value.child_by_field_name("object"), depth + 1)
            element = self._element_type(*indexed, depth + 1) if indexed is not None else None
            return self._type_decl(*element, depth + 1) if element is not None else None
        return None

    def _destructured_type(self, d: Decl, value: Node, depth: int) -> Decl | str | None:
        """`const { a } = expr` / `const { a: b } = expr`: the type of `expr.a`."""
        key = self._destructured_key(d)
        if not key or depth > MAX_FOLLOW:
            return None
        return self._type_of_member(self._member(d.file, value, key, depth + 1), depth + 1)

    @staticmethod
    def _destructured_key(d: Decl) -> str:
        """The property a destructured name reads (`{ a }`, `{ a: b }`), "" if none."""
        parent = d.node.parent
        if d.node.type == "shorthand_property_identifier_pattern":
            return d.file.text_of(d.node)
        if (
            parent is not None
            and parent.type == "pair_pattern"
            and parent.child_by_field_name("value") == d.node
        ):
            key_node = parent.child_by_field_name("key")
            return d.file.text_of(key_node) if key_node is not None else ""
        return ""

    def _type_of_member(self, field: Decl | str | None, depth: int) -> Decl | str | None:
        """The type a member holds: a field's declared type, a getter's return type."""
        if isinstance(field, str):
            return field
        if isinstance(field, Decl) and field.kind == "member":
            return self._declared_type(field, depth + 1)
        if isinstance(field, Decl) and _is_getter(field.decl):
            return self._type_decl(field.file, field.decl.child_by_field_name("return_type"),
                                   depth + 1, field.type_args)  # fmt: skip
        return None

    def _enum_member(self, enum: Decl, name: str) -> Decl | None:
        body = enum.decl.child_by_field_name("body")
        for m in body.named_children if body is not None else ():
            key = m.child_by_field_name("name") if m.type == "enum_assignment" else m
            if key is not None and enum.file.text_of(key) == name:
                return Decl(name, key, m, "member", enum.file)
        return None

    def _class_member(
        self, parsed: Parsed, cls: Node, name: str, depth: int, env: TypeArgs = ()
    ) -> Decl | str | None:
        if depth > MAX_FOLLOW:
            return None
        body = cls if cls.type == "object_type" else cls.child_by_field_name("body")
        for m in body.named_children if body is not None else ():
            key = m.child_by_field_name("name")
            if key is not None and parsed.text_of(key) == name and m.type != "method_definition":
                return Decl(name, key, m, "member", parsed)
            if key is not None and parsed.text_of(key) == name:
                return Decl(name, key, m, "method", parsed)
            if (
                m.type == "method_definition"
                and key is not None
                and parsed.text_of(key) == "constructor"
            ):
                params = m.child_by_field_name("parameters")
                for p in params.named_children if params is not None else ():
                    if _is_parameter_property(p):
                        pattern = p.child_by_field_name("pattern")
                        if pattern is not None and parsed.text_of(pattern) == name:
                            return Decl(name, pattern, p, "member", parsed)
        if cls.type == "interface_declaration":
            return self._interface_base_member(parsed, cls, name, depth, env)
        return self._base_member(parsed, cls, name, depth, env)

    def _base_member(
        self, parsed: Parsed, cls: Node, name: str, depth: int, env: TypeArgs = ()
    ) -> Decl | str | None:
        """The member along the class's `extends` chain (what `super.name` names); the
        base's type parameters bound to the arguments of `extends Base<Foo>`."""
        heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
        extends = None
        targs = None
        if heritage is not None:
            clause = next((c for c in heritage.named_children if c.type == "extends_clause"), None)
            extends = clause.child_by_field_name("value") if clause is not None else None
            targs = clause.child_by_field_name("type_arguments") if clause is not None else None
            if extends is None and clause is None and heritage.named_children:
                extends = heritage.named_children[0]  # JavaScript: `extends X` directly
        if extends is None:
            return None
        if extends.type != "identifier":
            return None
        base = self._lookup(parsed, extends, parsed.text_of(extends))
        target = self._follow(base, depth + 1) if base is not None else None
        if isinstance(target, str):
            return f"{target}.{name}"
        if target is None or target.kind != "class":
            if base is None and parsed.text_of(extends) in JS_GLOBALS:
                return f"lib.{parsed.text_of(extends)}.{name}"
            return None
        if targs is not None:
            target = _bind(target, list(targs.named_children), parsed, env)
            return self._member_of_type(target, name, depth + 1)
        return self._class_member(target.file, target.decl, name, depth + 1, env)

    def _interface_base_member(
        self, parsed: Parsed, iface: Node, name: str, depth: int, env: TypeArgs = ()
    ) -> Decl | str | None:
        """`interface A extends B, C`: the member as the first base declaring it."""
        clause = next((c for c in iface.named_children if c.type == "extends_type_clause"), None)
        for base in clause.named_children if clause is not None else ():
            found = self._member_of_type(self._type_decl(parsed, base, depth + 1, env), name, depth)
            if isinstance(found, Decl):
                return found
        return None

    def _private_member(self, parsed: Parsed, node: Node, name: str) -> Decl | None:
        """The `#name` declared by the innermost enclosing class body that declares it."""
        p = node.parent
        while p is not None:
            if p.type in _CLASSES:
                body = p.child_by_field_name("body")
                for m in body.named_children if body is not None else ():
                    key = m.child_by_field_name("name")
                    if key is not None and parsed.text_of(key) == name:
                        kind = "method" if m.type == "method_definition" else "member"
                        return Decl(name, key, m, kind, parsed)
            p = p.parent
        return None

    def _type_decl(
        self, parsed: Parsed, tnode: Node | None, depth: int, env: TypeArgs = ()
    ) -> Decl | str | None:
        """The class, interface or object type a type node names, as the checker reads it:
        through aliases, `T | undefined`, `Partial<T>`-like wrappers of the lib, and type
        literals (`{ a: T }`); a union of several object types is kept as a union. `env`:
        the type arguments in force (a type parameter names its argument; `Box<Foo>` binds
        Box's parameters for its members)."""
        if tnode is None or depth > MAX_FOLLOW:
            return None
        t = tnode.type
        if t in ("type_annotation", "parenthesized_type", "readonly_type"):
            inner = tnode.named_children[0] if tnode.named_children else None
            return self._type_decl(parsed, inner, depth + 1, env)
        if t == "object_type":
            return Decl("{}", tnode, tnode, "type literal", parsed, type_args=env)
        if t == "union_type":
            parts = [c for c in _union_parts(tnode) if not _is_nullish(parsed, c)]
            if len(parts) == 1:
                return self._type_decl(parsed, parts[0], depth + 1, env)
            return Decl("|", tnode, tnode, "union", parsed, type_args=env) if parts else None
        if t == "intersection_type":  # `A & { b: T }`: the members of every part
            return Decl("&", tnode, tnode, "union", parsed, type_args=env)
        if t == "lookup_type" and len(tnode.named_children) == 2:
            # `Config['pool']`: the type the member `pool` of Config is declared with.
            owner, index = tnode.named_children
            key = _string(parsed, index.named_children[0]) if index.named_children else ""
            if not key:
                return None
            member = self._member_of_type(self._type_decl(parsed, owner, depth + 1, env), key,
                                          depth + 1)  # fmt: skip
            return self._type_of_member(member, depth + 1)
        name_node = tnode
        args: list[Node] = []
        if t == "generic_type":
            name_node = tnode.child_by_field_name("name") or tnode
            targs = tnode.child_by_field_name("type_arguments")
            args = list(targs.named_children) if targs is not None else []
        if name_node.type not in ("type_identifier", "identifier"):
            return None
        type_name = parsed.text_of(name_node)
        found = self._lookup(parsed, name_node, type_name)
        if found is None:
            if (type_name in SAME_SHAPE_WRAPPERS or type_name in _SUBSET_WRAPPERS) and args:
                return self._type_decl(parsed, args[0], depth + 1, env)
            return f"lib.{type_name}" if type_name in JS_GLOBALS else None
        target = self._follow(found, depth + 1)
        if isinstance(target, Decl) and target.kind == "type parameter":
            param = (target.file.rel, target.decl.start_byte)
            bound = next(((f, n) for k, f, n in env if k == param), None)
            if bound is not None:
                return self._type_decl(*bound, depth + 1, env)
            # Unbound `T extends Foo`: its members are Foo's, as the checker reads them.
            constraint = target.decl.child_by_field_name("constraint")
            if constraint is not None and constraint.named_children:
                return self._type_decl(target.file, constraint.named_children[0], depth + 1, env)
            return None
        if isinstance(target, Decl) and (args or env):
            target = _bind(target, args, parsed, env)
        if isinstance(target, Decl) and target.kind == "type_alias":
            return self._type_decl(target.file, target.decl.child_by_field_name("value"),
                                   depth + 1, target.type_args)  # fmt: skip
        return target

    def _type_node_of(
        self, parsed: Parsed, expr: Node | None, depth: int
    ) -> tuple[Parsed, Node] | None:
        """The type annotation an expression's declaration carries (a variable, a parameter,
        a field): the node itself, to read an element type from it."""
        if expr is None or depth > MAX_FOLLOW:
            return None
        decl: Decl | str | None = None
        if expr.type in ("non_null_expression", "parenthesized_expression"):
            inner = expr.named_children[0] if expr.named_children else None
            return self._type_node_of(parsed, inner, depth + 1)
        if expr.type == "assignment_expression":  # `(a.b = c)`: what c is
            return self._type_node_of(parsed, expr.child_by_field_name("right"), depth + 1)
        if expr.type == "identifier":
            found = self._lookup(parsed, expr, parsed.text_of(expr))
            decl = self._follow(found, depth + 1) if found is not None else None
        elif expr.type == "member_expression":
            obj, prop = expr.child_by_field_name("object"), expr.child_by_field_name("property")
            if obj is not None and prop is not None:
                if prop.type == "private_property_identifier":
                    decl = self._private_member(parsed, prop, parsed.text_of(prop))
                else:
                    decl = self._member(parsed, obj, parsed.text_of(prop), depth + 1)
        if not isinstance(decl, Decl):
            return None
        annotation = decl.decl.child_by_field_name("type")
        if annotation is not None:
            return decl.file, annotation
        value = decl.decl.child_by_field_name("value")
        if decl.kind == "variable" and value is not None:
            return self._type_node_of(decl.file, value, depth + 1)  # `const xs = this.#xs`
        return None

    def _element_type(self, parsed: Parsed, tnode: Node, depth: int) -> tuple[Parsed, Node] | None:
        """What indexing a value of this type gives: `T[]`, `Array<T>`, `Record<K, T>`,
        `{ [k: string]: T }`, through aliases and `| undefined`."""
        if depth > MAX_FOLLOW:
            return None
        t = tnode.type
        if t in ("type_annotation", "parenthesized_type", "readonly_type"):
            inner = tnode.named_children[0] if tnode.named_children else None
            return self._element_type(parsed, inner, depth + 1) if inner is not None else None
        if t == "array_type" and tnode.named_children:
            return parsed, tnode.named_children[0]
        if t == "union_type":
            parts = [c for c in _union_parts(tnode) if not _is_nullish(parsed, c)]
            return self._element_type(parsed, parts[0], depth + 1) if len(parts) == 1 else None
        if t == "object_type":
            for m in tnode.named_children:
                if m.type == "index_signature":
                    annotation = m.child_by_field_name("type")
                    if annotation is not None:
                        return parsed, annotation
            return None
        if t == "generic_type":
            name = tnode.child_by_field_name("name")
            targs = tnode.child_by_field_name("type_arguments")
            args = list(targs.named_children) if targs is not None else []
            type_name = parsed.text_of(name) if name is not None else ""
            if name is not None and self._lookup(parsed, name, type_name) is None:
                if type_name in ("Array", "ReadonlyArray") and args:
                    return parsed, args[0]
                if type_name == "Record" and len(args) == 2:
                    return parsed, args[1]
                return None
            tnode = name if name is not None else tnode
        if tnode.type == "type_identifier":
            found = self._lookup(parsed, tnode, parsed.text_of(tnode))
            target = self._follow(found, depth + 1) if found is not None else None
            if isinstance(target, Decl) and target.kind == "type_alias":
                value = target.decl.child_by_field_name("value")
                return self._element_type(target.file, value, depth + 1) if value else None
        return None

    # -- results --------------------------------------------------------------------------
    def _result(self, found: Decl | str | None) -> Resolution | None:
        if found is None:
            return None
        if isinstance(found, str):
            return Resolution((), found)
        return Resolution((_target(found),), "")


def _bind(target: Decl, args: list[Node], parsed: Parsed, env: TypeArgs) -> Decl:
    """`target` reached through `Name<args…>` (written in `parsed`, where `env` is in
    force): its type parameters bound to the arguments, or to their defaults."""
    params = target.decl.child_by_field_name("type_parameters")
    bound: list[tuple[tuple[str, int], Parsed, Node]] = []
    for i, tp in enumerate(params.named_children if params is not None else ()):
        key = (target.file.rel, tp.start_byte)
        if i < len(args):
            bound.append((key, parsed, args[i]))
            continue
        default = tp.child_by_field_name("value")
        if default is not None and default.named_children:
            bound.append((key, target.file, default.named_children[0]))
    return replace(target, type_args=(*bound, *env)) if bound or env else target


def _overload(found: Decl | str | None, callee: Node) -> Decl | str | None:
    """Among a function's overload signatures, the first whose arity fits the call (the
    one TypeScript picks for plain calls)."""
    call = callee.parent
    if not isinstance(found, Decl) or call is None or call.type != "call_expression":
        return found
    if call.child_by_field_name("function") != callee:
        return found
    args = call.child_by_field_name("arguments")
    n_args = len(args.named_children) if args is not None else 0
    container = found.decl.parent
    if container is not None and container.type == "export_statement":
        container = container.parent
    if container is None:
        return found
    siblings: list[Node] = []
    for child in container.named_children:
        decl = (
            child.child_by_field_name("declaration") if child.type == "export_statement" else child
        )
        key = decl.child_by_field_name("name") if decl is not None else None
        if decl is not None and key is not None and found.file.text_of(key) == found.name:
            siblings.append(decl)
    for decl in siblings:
        params = decl.child_by_field_name("parameters")
        plist = params.named_children if params is not None else []
        required = sum(1 for p in plist if p.type == "required_parameter" and not _is_rest(p))
        rest = any(_is_rest(p) for p in plist)
        if required <= n_args and (rest or n_args <= len(plist)):
            key = decl.child_by_field_name("name")
            if key is not None:
                return replace(found, node=key, decl=decl)
    return found


_EXPORTED_DECL = (
    r"^[ \t]*export[ \t]+(?:declare[ \t]+)?(?:abstract[ \t]+)?"
    r"(?P<kind>interface|type|class|function|const|let|var|enum|namespace)\*?[ \t]+"
)


def _exported_in_error(module: Parsed, name: str) -> Decl | None:
    """`export interface Name…` inside a region tree-sitter could not parse (newer syntax
    than its grammar): the declaration found by its text, so imports of it still resolve."""
    if not module.tree.root_node.has_error:
        return None
    pattern = re.compile(_EXPORTED_DECL + re.escape(name) + r"\b", re.M)
    text = module.source.decode("utf-8", "replace")
    m = pattern.search(text)
    if m is None:
        return None
    row = text.count("\n", 0, m.start("kind"))
    line = module.line(row)
    node = module.node_at(row, line.find(name, line.find(m.group("kind"))))
    if node is None or module.text_of(node) != name:
        return None
    kind = {"const": "variable", "let": "variable", "var": "variable", "type": "type_alias"}
    return Decl(name, node, node.parent or node, kind.get(m.group("kind"), m.group("kind")), module)


def _exit_unless(st: Node) -> Node | None:
    """`if (!cond) return|throw …` (no else): `cond`, true for the code after it."""
    if st.type != "if_statement" or st.child_by_field_name("alternative") is not None:
        return None
    cond = st.child_by_field_name("condition")
    body = st.child_by_field_name("consequence")
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_children:
        cond = cond.named_children[0]
    if cond is None or body is None or cond.type != "unary_expression":
        return None
    op = cond.child_by_field_name("operator")
    if op is None or op.type != "!":
        return None
    last = (
        body.named_children[-1] if body.type == "statement_block" and body.named_children else body
    )
    if last.type not in ("return_statement", "throw_statement"):
        return None
    return cond.child_by_field_name("argument")


def _is_parameter_property(param: Node) -> bool:
    """`public x: T` / `readonly x` in a constructor's parameters: a class member too."""
    return param.type in ("required_parameter", "optional_parameter") and any(
        c.type in ("accessibility_modifier", "readonly") for c in param.children
    )


def _is_getter(node: Node) -> bool:
    return node.type == "method_definition" and any(c.type == "get" for c in node.children)


def _union_parts(node: Node) -> list[Node]:
    """`A | B | C` or `A & B & C` (nested binary nodes in the tree) as a flat list."""
    out: list[Node] = []
    for c in node.named_children:
        if c.type == "comment":
            continue
        out.extend(_union_parts(c) if c.type == node.type else [c])
    return out


def _is_nullish(parsed: Parsed, node: Node) -> bool:
    return parsed.text_of(node) in ("undefined", "null", "void")


def _own_params(parsed: Parsed, params: Node | None) -> list[Node]:
    """A parameter list without TypeScript's `this:` pseudo-parameter."""
    out = []
    for p in params.named_children if params is not None else ():
        pattern = p.child_by_field_name("pattern")
        if pattern is not None and parsed.text_of(pattern) == "this":
            continue
        out.append(p)
    return out


def _is_rest(param: Node) -> bool:
    pattern = param.child_by_field_name("pattern")
    return pattern is not None and pattern.type == "rest_pattern"


def _target(d: Decl) -> Target:
    f = d.file
    if d.kind == "module":
        return Target(f.rel, 1, 0, d.name, "module", f.module_name, "", "")
    row, col = f.position(d.node)
    local = d.kind == "param" or (d.kind == "variable" and _inside_function(d.decl))
    return Target(
        path=f.rel, line=row + 1, column=col, name=d.name, kind=d.kind,
        full_name=f"{f.module_name}.{d.name}", signature=f.line(row).strip(),
        doc_summary="" if local else f.doc_before(d.decl), local=local,
    )  # fmt: skip


def _inside_function(node: Node) -> bool:
    p = node.parent
    while p is not None:
        if p.type in _FUNCTIONS:
            return True
        p = p.parent
    return False


def _enclosing_class(node: Node) -> Node | None:
    p = node.parent
    while p is not None:
        if p.type in _CLASSES:
            return p
        if p.type in ("function_declaration", "function_expression", "function"):
            return None  # `this` of a plain function is not the class's
        p = p.parent
    return None


def _pattern_names(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        yield node
        return
    if node.type in ("object_pattern", "array_pattern", "pair_pattern", "rest_pattern",
                     "assignment_pattern", "object_assignment_pattern"):  # fmt: skip
        for child in node.named_children:
            if node.type == "pair_pattern" and child == node.child_by_field_name("key"):
                continue
            if node.type in ("assignment_pattern", "object_assignment_pattern") and (
                child == node.child_by_field_name("right")
            ):
                continue
            yield from _pattern_names(child)


def _string(parsed: Parsed, node: Node | None) -> str:
    if node is None:
        return ""
    return parsed.text_of(node).strip("\"'`")
