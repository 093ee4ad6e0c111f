"""Go names resolved from tree-sitter trees (the fast path).

Block scopes (`:=`, `var`, `const`, range and if/switch initializers), parameters, results
and receivers; the package's declarations across the files of its folder; method sets and
struct fields through embedded structs, with the operand's type read from declarations
(parameters, `var x T`, `x := T{…}` / `&T{…}` / `new(T)` / `NewT()`, fields, range over a
slice). Imported packages and builtins are outside the workspace. Undecided: `None`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from code_compass_server.symbols.resolve_model import MAX_FOLLOW, Resolution, Target
from code_compass_server.symbols.resolve_treecache import Parsed, TreeFiles

GO_BUILTINS = frozenset(
    [
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
        "true",
        "false",
        "iota",
        "nil",
    ]
)
_COMMA_OK_VALUES = frozenset({"call_expression", "type_assertion_expression", "index_expression"})
_FUNCS = frozenset({"function_declaration", "method_declaration", "func_literal"})


@dataclass(frozen=True, slots=True)
class GoDecl:
    name: str
    node: Node  # the name
    decl: Node  # the declaring node (spec, parameter, function, field, ...)
    kind: str  # function | method | type | var | const | param | field | import
    file: Parsed
    type: Node | None = None  # its declared type or the expression that types it
    container: str = ""  # methods and fields: the type's name


@dataclass(eq=False, slots=True)
class _Package:
    stamp: tuple[int, ...]
    folder: str = ""
    names: dict[str, GoDecl] = field(default_factory=dict)  # functions, types, vars, consts
    methods: dict[tuple[str, str], GoDecl] = field(default_factory=dict)
    name: str = ""  # its package clause's name (`package chi`)


class GoScopes:
    def __init__(self, files: TreeFiles) -> None:
        self.files = files
        self._packages: dict[str, _Package] = {}
        self._modules: dict[str, tuple[str, str] | None] = {}  # folder -> (module path, its dir)
        self._gopath: dict[str, tuple[str, str] | None] = {}  # import path -> its module, no go.mod
        # import path -> (its folder's mtime, the package clause's name): `_import` asks for
        # every import of a file on each lookup; a folder's listing changes its mtime.
        self._clause_names: dict[str, tuple[int, str]] = {}

    # -- the package ---------------------------------------------------------------------
    def package(self, rel: str, current: Parsed) -> _Package:
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        parsed = [current]
        for sib in self.files.siblings(rel, ".go"):
            if sib != rel:
                p = self.files.load(sib)
                if p is not None:
                    parsed.append(p)
        stamp = tuple(sorted(id(p) for p in parsed))
        pkg = self._packages.get(folder)
        if pkg is not None and pkg.stamp == stamp:
            return pkg
        pkg = _Package(stamp, folder)
        # Files the default build leaves out (`//go:build purego`, `_windows.go`) come last:
        # a name declared in both is the built file's, as go/types sees the package.
        parsed.sort(key=lambda p: not in_default_build(p))
        for p in parsed:
            for top in p.tree.root_node.named_children:
                self._top_level(p, top, pkg)
                if top.type == "package_clause" and top.named_children:
                    declared = p.text_of(top.named_children[0])
                    if not pkg.name or pkg.name.endswith("_test"):
                        pkg.name = declared  # an external test package's name only if alone
        self._packages[folder] = pkg
        return pkg

    def _pkg_for(self, p: Parsed, pkg: _Package) -> _Package:
        """The package of the file `p` (`pkg` when it is that one): a type declared in another
        package of the module has its methods and names there."""
        folder = p.rel.rsplit("/", 1)[0] if "/" in p.rel else ""
        return pkg if folder == pkg.folder else self.package(p.rel, p)

    def _module(self, folder: str) -> tuple[str, str] | None:
        """(module path, the module's folder) from the nearest go.mod at or above `folder`."""
        if folder in self._modules:
            return self._modules[folder]
        found: tuple[str, str] | None = None
        try:
            text = (self.files.root / folder / "go.mod").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text is not None:
            for line in text.splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "module":
                    found = (parts[1].strip('"'), folder)
                    break
        elif folder:
            found = self._module(folder.rsplit("/", 1)[0] if "/" in folder else "")
        self._modules[folder] = found
        return found

    def _module_for(self, folder: str, path: str) -> tuple[str, str] | None:
        """The module an import of `path` from `folder` is resolved in: the nearest go.mod's,
        else (GOPATH-style source: a package tree copied out of `…/src/`, as Debian ships Go
        libraries, with no go.mod) the workspace folder the import path ends with."""
        return self._module(folder) or self._gopath_module(path)

    def _gopath_module(self, path: str) -> tuple[str, str] | None:
        """(`github.com/owner/repo`, "") when `github.com/owner/repo/sub/pkg` ends with a
        workspace folder `sub/pkg` holding Go files; the longest such ending wins. Only paths
        under a host with at least an owner (the standard library's have no dot), so
        `encoding/json` never lands on a workspace folder named `json`."""
        if path in self._gopath:
            return self._gopath[path]
        found: tuple[str, str] | None = None
        parts = path.split("/")
        for k in range(2, len(parts)) if "." in parts[0] else ():
            folder = self.files.root / "/".join(parts[k:])
            try:
                if any(f.suffix == ".go" for f in folder.iterdir()):
                    found = "/".join(parts[:k]), ""
                    break
            except OSError:
                continue
        self._gopath[path] = found
        return found

    def _imported(self, p: Parsed, path: str) -> _Package | None:
        """The workspace package an import path names (inside this file's module), or None
        for a package from outside the workspace."""
        folder = p.rel.rsplit("/", 1)[0] if "/" in p.rel else ""
        module = self._module_for(folder, path)
        if module is None:
            return None
        mod_path, mod_dir = module
        if path != mod_path and not path.startswith(mod_path + "/"):
            return None
        sub = path[len(mod_path) :].strip("/")
        target = "/".join(x for x in (mod_dir, sub) if x)
        try:
            files = sorted(
                f.name for f in (self.files.root / target).iterdir()
                if f.name.endswith(".go") and not f.name.endswith("_test.go") and f.is_file()
            )  # fmt: skip
        except OSError:
            return None
        for name in files:
            rel = f"{target}/{name}" if target else name
            first = self.files.load(rel)
            if first is not None:
                return self.package(rel, first)
        return None

    def _qualified(self, p: Parsed, imp: str, name: str) -> GoDecl | str | None:
        """`pkg.Name` for an imported package: the workspace declaration when the package is
        in this module, else the outside name."""
        other = self._imported(p, imp)
        if other is None:
            return f"{imp}.{name}"
        return other.names.get(name)

    def _top_level(self, p: Parsed, top: Node, pkg: _Package) -> None:
        t = top.type
        if t == "function_declaration":
            name = top.child_by_field_name("name")
            if name is not None:
                pkg.names.setdefault(
                    p.text_of(name),
                    GoDecl(
                        p.text_of(name), name, top, "function", p, top.child_by_field_name("result")
                    ),
                )
        elif t == "method_declaration":
            name = top.child_by_field_name("name")
            recv = _receiver_type(p, top)
            if name is not None and recv:
                key = (recv, p.text_of(name))
                pkg.methods.setdefault(
                    key,
                    GoDecl(key[1], name, top, "method", p, top.child_by_field_name("result"), recv),
                )
        elif t == "type_declaration":
            for spec in top.named_children:
                if spec.type in ("type_spec", "type_alias"):
                    name = spec.child_by_field_name("name")
                    if name is not None:
                        pkg.names.setdefault(
                            p.text_of(name),
                            GoDecl(
                                p.text_of(name),
                                name,
                                spec,
                                "type",
                                p,
                                spec.child_by_field_name("type"),
                            ),
                        )
        elif t in ("var_declaration", "const_declaration"):
            for d in _specs(p, top, "var" if t == "var_declaration" else "const"):
                pkg.names.setdefault(d.name, d)

    # -- resolution ----------------------------------------------------------------------
    def resolve(self, rel: str, text: str | None, line: int, column: int) -> Resolution | None:
        parsed = self.files.parse(rel, "go", text)
        if parsed is None:
            return None
        node = parsed.node_at(line, column)
        if node is None or "identifier" not in node.type:
            return None
        pkg = self.package(rel, parsed)
        name = parsed.text_of(node)
        parent = node.parent
        if node.type == "field_identifier" and parent is not None:
            if parent.type == "selector_expression":
                operand = parent.child_by_field_name("operand")
                return self._result(
                    self._selector(parsed, pkg, operand, name, 0) if operand else None
                )
            if parent.type == "method_declaration":
                recv = _receiver_type(parsed, parent)
                return self._result(pkg.methods.get((recv, name)))
            if parent.type in ("field_declaration", "method_elem", "method_spec"):
                return self._result(GoDecl(name, node, parent, "field", parsed))
            return None
        if node.type == "package_identifier":
            imp = self._import(parsed, name)
            return self._result(imp if imp is not None else None)
        if (
            parent is not None
            and parent.type == "qualified_type"
            and node.type == "type_identifier"
        ):
            pkg_node = parent.child_by_field_name("package")
            if pkg_node is not None:
                imp = self._import(parsed, parsed.text_of(pkg_node))
                return self._result(
                    self._qualified(parsed, imp, name) if isinstance(imp, str) else None
                )
        if parent is not None and parent.type == "literal_element":
            keyed = parent.parent
            if (
                keyed is not None
                and keyed.type == "keyed_element"
                and keyed.named_children[0] == parent
            ):
                return self._result(self._literal_field(parsed, pkg, keyed, name))
        found = self._lookup(parsed, pkg, node, name)
        return self._result(found)

    def _literal_field(
        self, p: Parsed, pkg: _Package, keyed: Node, name: str
    ) -> GoDecl | str | None:
        """`T{name: v}`: the key names a field of the literal's struct type (a nested
        literal with its type elided takes the element type of the one around it)."""
        body = keyed.parent  # literal_value
        owner = body.parent if body is not None else None
        if owner is None:
            return None
        typ: GoDecl | str | None = None
        if owner.type == "composite_literal":
            literal_type = owner.child_by_field_name("type")
            if literal_type is not None and literal_type.type == "map_type":
                return self._lookup(p, pkg, keyed, name)  # a map key is a value
            typ = self._type_expr(p, pkg, literal_type, 0)
        elif owner.type == "literal_element":  # `[]T{{name: v}}`: elided T
            outer_body = owner.parent
            if outer_body is not None and outer_body.type == "keyed_element":
                outer_body = outer_body.parent
            outer = outer_body.parent if outer_body is not None else None
            if outer is None or outer.type != "composite_literal":
                return None
            container = outer.child_by_field_name("type")
            for _ in range(MAX_FOLLOW):
                if container is None or container.type not in ("type_identifier",):
                    break
                named = self._type_expr(p, pkg, container, 0)
                container = named.type if isinstance(named, GoDecl) else None
            if container is not None and container.type in ("slice_type", "array_type"):
                typ = self._type_expr(p, pkg, container.child_by_field_name("element"), 0)
            elif container is not None and container.type == "map_type":
                typ = self._type_expr(p, pkg, container.child_by_field_name("value"), 0)
        if isinstance(typ, GoDecl):
            return self._member(pkg, typ, name, 1)
        return None

    def _lookup(self, parsed: Parsed, pkg: _Package, node: Node, name: str) -> GoDecl | str | None:
        local = self._local(parsed, node, name)
        if local is not None:
            return local
        top = pkg.names.get(name)
        if top is not None:
            return top
        imp = self._import(parsed, name)
        if imp is not None:
            return imp
        if name in GO_BUILTINS:
            return f"builtin.{name}"
        return None

    def _import(self, parsed: Parsed, name: str) -> str | None:
        for top in parsed.tree.root_node.named_children:
            if top.type != "import_declaration":
                continue
            for spec in _import_specs(top):
                path_node = spec.child_by_field_name("path")
                alias = spec.child_by_field_name("name")
                path = parsed.text_of(path_node).strip('"`') if path_node is not None else ""
                local = (
                    parsed.text_of(alias) if alias is not None else self._package_name(parsed, path)
                )
                if local == name:
                    return path
        return None

    def _package_name(self, parsed: Parsed, path: str) -> str:
        """The name an unaliased import binds: the imported package's own `package` clause
        for a package of this module (`…/chi/v5` declares `package chi`), else the name go
        tools assume from the path (a `/vN` suffix and a `go-` prefix dropped)."""
        folder = parsed.rel.rsplit("/", 1)[0] if "/" in parsed.rel else ""
        module = self._module_for(folder, path)
        if module is not None and (path == module[0] or path.startswith(module[0] + "/")):
            mod_path, mod_dir = module
            target = "/".join(x for x in (mod_dir, path[len(mod_path) :].strip("/")) if x)
            try:
                mtime = (self.files.root / target).stat().st_mtime_ns
            except OSError:
                mtime = -1
            known = self._clause_names.get(path)
            if known is not None and known[0] == mtime:
                return known[1]
            other = self._imported(parsed, path)
            if other is not None and other.name:
                self._clause_names[path] = (mtime, other.name)
                return other.name
        return assumed_package_name(path)

    def _local(self, parsed: Parsed, node: Node, name: str) -> GoDecl | None:
        pos = node.start_byte
        scope = node.parent
        while scope is not None and scope.type != "source_file":
            for d in self._scope_decls(parsed, scope, pos):
                if d.name == name:
                    return d
            scope = scope.parent
        return None

    def _scope_decls(self, p: Parsed, scope: Node, pos: int) -> list[GoDecl]:
        out: list[GoDecl] = []
        t = scope.type
        if t in _FUNCS:
            for fld in ("receiver", "parameters", "result"):
                plist = scope.child_by_field_name(fld)
                if plist is None or plist.type != "parameter_list":
                    continue
                for param in plist.named_children:
                    typ = param.child_by_field_name("type")
                    for n in param.children_by_field_name("name"):
                        out.append(GoDecl(p.text_of(n), n, param, "param", p, typ))
        elif t in ("block", "statement_list"):
            for st in scope.named_children:
                if st.start_byte > pos:
                    break
                out.extend(_in_scope(self._statement_decls(p, st), st, pos))
        elif t in ("for_statement", "if_statement", "expression_switch_statement",
                   "type_switch_statement"):  # fmt: skip
            for child in scope.named_children:
                if child.type == "range_clause":
                    out.extend(_in_scope(self._range_decls(p, child), child, pos))
                elif child.type == "for_clause":
                    init = child.child_by_field_name("initializer")
                    if init is not None:
                        out.extend(_in_scope(self._statement_decls(p, init), init, pos))
            init = scope.child_by_field_name("initializer")
            if init is not None:
                out.extend(_in_scope(self._statement_decls(p, init), init, pos))
            alias = scope.child_by_field_name("alias")
            for n in [alias] if alias is not None else []:
                for ident in n.named_children if n.type == "expression_list" else [n]:
                    out.append(GoDecl(p.text_of(ident), ident, scope, "var", p))
        return out

    def _statement_decls(self, p: Parsed, st: Node) -> list[GoDecl]:
        out: list[GoDecl] = []
        if st.type == "short_var_declaration":
            left = st.child_by_field_name("left")
            right = st.child_by_field_name("right")
            values = right.named_children if right is not None else []
            idents = left.named_children if left is not None else []
            for i, ident in enumerate(idents):
                value = values[i] if len(values) == len(idents) else None
                if i == 0 and len(values) == 1 and values[0].type in _COMMA_OK_VALUES:
                    # `x, err := f()`: x is f's first result; `n, ok := v.(*T)`: a T;
                    # `v, ok := m[k]`: the map's value type.
                    value = values[0]
                out.append(GoDecl(p.text_of(ident), ident, st, "var", p, value))
        elif st.type in ("var_declaration", "const_declaration"):
            out.extend(_specs(p, st, "var" if st.type == "var_declaration" else "const"))
        elif st.type == "type_declaration":  # a type declared inside a function
            for spec in st.named_children:
                name = spec.child_by_field_name("name")
                if spec.type in ("type_spec", "type_alias") and name is not None:
                    typ = spec.child_by_field_name("type")
                    out.append(GoDecl(p.text_of(name), name, spec, "type", p, typ))
        return out

    def _range_decls(self, p: Parsed, clause: Node) -> list[GoDecl]:
        left = clause.child_by_field_name("left")
        idents = left.named_children if left is not None else []
        right = clause.child_by_field_name("right")
        out = []
        for i, ident in enumerate(idents):
            out.append(GoDecl(p.text_of(ident), ident, clause, "var", p, right if i == 1 else None))
        return out

    # -- types and members ---------------------------------------------------------------
    def _selector(
        self, p: Parsed, pkg: _Package, operand: Node, name: str, depth: int
    ) -> GoDecl | str | None:
        if operand.type == "identifier":
            imp = (
                None
                if self._local(p, operand, p.text_of(operand))
                else self._import(p, p.text_of(operand))
            )
            if imp is not None and p.text_of(operand) not in pkg.names:
                return self._qualified(p, imp, name)
        typ = self._type_of(p, pkg, operand, depth + 1)
        if typ is None:
            return None
        if isinstance(typ, str):
            return f"{typ}.{name}"
        return self._member(pkg, typ, name, depth + 1)

    def _type_of(self, p: Parsed, pkg: _Package, expr: Node, depth: int) -> str | GoDecl | None:
        """The named type of an expression: a workspace type's declaration, an outside name,
        or None when unknown."""
        if depth > MAX_FOLLOW:
            return None
        pkg = self._pkg_for(p, pkg)
        t = expr.type
        if t == "parenthesized_expression" and expr.named_children:
            return self._type_of(p, pkg, expr.named_children[0], depth + 1)
        if t == "identifier":
            d = self._lookup(p, pkg, expr, p.text_of(expr))
            if not isinstance(d, GoDecl) or d.kind in ("function", "type"):
                return None
            if d.type is None:
                return None
            if d.decl.type == "range_clause":
                return self._element_type(d.file, pkg, d.type, depth + 1)
            return self._type_expr(d.file, pkg, d.type, depth + 1)
        if t == "selector_expression":
            operand = expr.child_by_field_name("operand")
            fld = expr.child_by_field_name("field")
            if operand is None or fld is None:
                return None
            member = self._selector(p, pkg, operand, p.text_of(fld), depth + 1)
            if (
                isinstance(member, GoDecl)
                and member.kind in ("field", "var", "const")
                and member.type is not None
            ):
                return self._type_expr(member.file, pkg, member.type, depth + 1)
            if isinstance(member, GoDecl) and member.kind == "method":
                return (
                    self._type_expr(member.file, pkg, member.type, depth + 1)
                    if member.type
                    else None
                )
            return None
        if t in ("unary_expression", "composite_literal", "call_expression"):
            return self._type_expr(p, pkg, expr, depth + 1)
        if t == "type_assertion_expression":  # `x.(T)` has type T
            return self._type_expr(p, pkg, expr.child_by_field_name("type"), depth + 1)
        if t == "index_expression":  # `xs[i]`, `m[k]`: the element type
            operand = expr.child_by_field_name("operand")
            return self._element_type(p, pkg, operand, depth + 1) if operand else None
        return None

    def _type_expr(
        self, p: Parsed, pkg: _Package, node: Node | None, depth: int
    ) -> str | GoDecl | None:
        """A type (or a value expression whose type is written in it) to its named type."""
        if node is None or depth > MAX_FOLLOW:
            return None
        pkg = self._pkg_for(p, pkg)
        t = node.type
        if t in ("identifier", "selector_expression"):  # `*r`, `&x.f`: the value's own type
            return self._type_of(p, pkg, node, depth + 1)
        if t in ("pointer_type", "unary_expression", "parenthesized_type", "parameter_list"):
            inner = node.child_by_field_name("operand") or (
                node.named_children[-1] if node.named_children else None
            )
            if t == "parameter_list":  # `(x *T, err error)` results: the first
                first = node.named_children[0] if node.named_children else None
                inner = first.child_by_field_name("type") if first is not None else None
            return self._type_expr(p, pkg, inner, depth + 1)
        if t == "composite_literal":
            return self._type_expr(p, pkg, node.child_by_field_name("type"), depth + 1)
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and p.text_of(fn) == "new":
                args = node.child_by_field_name("arguments")
                return (
                    self._type_expr(p, pkg, args.named_children[0], depth + 1)
                    if args and args.named_children
                    else None
                )
            if fn is not None and fn.type == "selector_expression":
                operand = fn.child_by_field_name("operand")
                fld = fn.child_by_field_name("field")
                if operand is not None and fld is not None and operand.type == "identifier":
                    local = self._local(p, operand, p.text_of(operand))
                    imp = None if local else self._import(p, p.text_of(operand))
                    other = self._imported(p, imp) if imp is not None else None
                    if other is not None:  # a function of another package of the module
                        d = other.names.get(p.text_of(fld))
                        if d is not None and d.kind == "function":
                            return self._type_expr(d.file, other, d.type, depth + 1)
                        return d if d is not None and d.kind == "type" else None
                    if imp is not None:
                        return f"{imp}.{p.text_of(fld)}(…)"  # an outside function's result
                if operand is not None and fld is not None:
                    # `r.With(mw).Get(…)`: the method's declared result.
                    method = self._selector(p, pkg, operand, p.text_of(fld), depth + 1)
                    if isinstance(method, GoDecl) and method.kind == "method":
                        return self._type_expr(method.file, pkg, method.type, depth + 1)
            if fn is not None and fn.type == "identifier":
                d = pkg.names.get(p.text_of(fn))
                if d is not None and d.kind == "function":
                    return self._type_expr(d.file, pkg, d.type, depth + 1)
                if d is not None and d.kind == "type":  # a conversion T(x)
                    return d
            return None
        if t == "type_identifier":
            name = p.text_of(node)
            local = self._local(p, node, name)
            d = local if local is not None and local.kind == "type" else pkg.names.get(name)
            if d is not None and d.kind == "type":
                return d
            return f"builtin.{name}" if name in GO_BUILTINS else None
        if t == "qualified_type":
            pkg_node = node.child_by_field_name("package")
            name_node = node.child_by_field_name("name")
            imp = self._import(p, p.text_of(pkg_node)) if pkg_node is not None else None
            if not imp or name_node is None:
                return None
            return self._qualified(p, imp, p.text_of(name_node))
        if t == "generic_type":
            return self._type_expr(p, pkg, node.child_by_field_name("type"), depth + 1)
        if t == "type_assertion_expression":
            return self._type_expr(p, pkg, node.child_by_field_name("type"), depth + 1)
        if t == "index_expression":  # `v := xs[i]`: the element type
            return self._type_of(p, pkg, node, depth + 1)
        if t in ("struct_type", "interface_type"):  # an anonymous type: its own members
            return GoDecl("", node, node, "type", p, node)
        return None

    def _element_type(
        self, p: Parsed, pkg: _Package, ranged: Node, depth: int
    ) -> str | GoDecl | None:
        """`for _, v := range xs`: the element type of xs's slice, array or map type."""
        container = self._container_type(p, pkg, ranged, depth + 1)
        if container is None:
            return None
        cp, ctype = container
        for _ in range(MAX_FOLLOW):  # `type Constraints []*Constraint`: its underlying type
            if ctype.type == "pointer_type" and ctype.named_children:
                ctype = ctype.named_children[-1]
                continue
            if ctype.type not in ("type_identifier", "qualified_type"):
                break
            named = self._type_expr(cp, pkg, ctype, depth + 1)
            if not isinstance(named, GoDecl) or named.type is None:
                return None
            cp, ctype = named.file, named.type
        if ctype.type in ("slice_type", "array_type"):
            return self._type_expr(cp, pkg, ctype.child_by_field_name("element"), depth + 1)
        if ctype.type == "map_type":
            return self._type_expr(cp, pkg, ctype.child_by_field_name("value"), depth + 1)
        return None

    def _container_type(
        self, p: Parsed, pkg: _Package, expr: Node, depth: int
    ) -> tuple[Parsed, Node] | None:
        if depth > MAX_FOLLOW:
            return None
        if expr.type == "identifier":
            d = self._lookup(p, pkg, expr, p.text_of(expr))
            if not isinstance(d, GoDecl) or d.type is None:
                return None
            if d.decl.type == "short_var_declaration" and d.type.type in (
                "slice_expression",
                "identifier",
                "selector_expression",
            ):
                # `xs := ys[1:]`, `orig := ys`: the same slice type as ys.
                return self._container_type(d.file, pkg, d.type, depth + 1)
            if d.decl.type == "short_var_declaration" or (
                d.kind in ("var", "const") and d.type.type == "composite_literal"
            ):
                # `tests := []struct{…}{…}`: the literal's type; `make([]T, n)`: T
                if d.type.type == "call_expression":
                    fn = d.type.child_by_field_name("function")
                    args = d.type.child_by_field_name("arguments")
                    if fn is not None and d.file.text_of(fn) == "make" and args is not None:
                        return (d.file, args.named_children[0]) if args.named_children else None
                    return None
                if d.type.type != "composite_literal":
                    return None
                literal_type = d.type.child_by_field_name("type")
                return (d.file, literal_type) if literal_type is not None else None
            return d.file, d.type
        if expr.type == "selector_expression":
            operand = expr.child_by_field_name("operand")
            fld = expr.child_by_field_name("field")
            if operand is None or fld is None:
                return None
            member = self._selector(p, pkg, operand, p.text_of(fld), depth + 1)
            if isinstance(member, GoDecl) and member.kind == "field" and member.type is not None:
                return member.file, member.type
        if expr.type in ("slice_expression", "parenthesized_expression"):
            inner = expr.child_by_field_name("operand") or (
                expr.named_children[0] if expr.named_children else None
            )
            return self._container_type(p, pkg, inner, depth + 1) if inner is not None else None
        return None

    def _member(self, pkg: _Package, typ: GoDecl, name: str, depth: int) -> GoDecl | str | None:
        """A method or field of a workspace type, through embedded fields."""
        if depth > MAX_FOLLOW:
            return None
        pkg = self._pkg_for(typ.file, pkg)
        method = pkg.methods.get((typ.name, name))
        if method is not None:
            return method
        body = typ.type
        if body is not None and body.type == "struct_type":
            fields = next(
                (c for c in body.named_children if c.type == "field_declaration_list"), None
            )
            embedded: list[Node] = []
            for fd in fields.named_children if fields is not None else ():
                if fd.type != "field_declaration":
                    continue
                names = fd.children_by_field_name("name")
                for n in names:
                    if typ.file.text_of(n) == name:
                        return GoDecl(
                            name, n, fd, "field", typ.file, fd.child_by_field_name("type"), typ.name
                        )
                if not names:
                    embedded.append(fd)
            for fd in embedded:
                etype = self._type_expr(typ.file, pkg, fd.child_by_field_name("type"), depth + 1)
                if isinstance(etype, GoDecl):
                    if etype.name == name:  # the embedded field itself
                        return etype
                    found = self._member(pkg, etype, name, depth + 1)
                    if found is not None:
                        return found
                elif isinstance(etype, str) and etype.rsplit(".", 1)[-1] == name:
                    return etype
            return None
        if body is not None and body.type == "interface_type":
            embedded_ifaces: list[Node] = []
            for elem in body.named_children:
                key = elem.child_by_field_name("name")
                if key is not None and typ.file.text_of(key) == name:
                    result = elem.child_by_field_name("result")
                    return GoDecl(name, key, elem, "method", typ.file, result, typ.name)
                if elem.type == "type_elem" and len(elem.named_children) == 1:
                    embedded_ifaces.append(elem.named_children[0])
            # `type BlockReader interface { Reader; … }`: the embedded interface's methods
            # are in the method set (go/types reports the embedded interface's declaration).
            outside: list[str] = []
            for etype_node in embedded_ifaces:
                etype = self._type_expr(typ.file, pkg, etype_node, depth + 1)
                if isinstance(etype, GoDecl):
                    found = self._member(pkg, etype, name, depth + 1)
                    if found is not None:
                        return found
                elif isinstance(etype, str):
                    outside.append(etype)
            if len(outside) == 1:
                return f"{outside[0]}.{name}"  # only an outside interface (`io.Closer`) left
        return None

    # -- results -------------------------------------------------------------------------
    def _result(self, found: GoDecl | str | None) -> Resolution | None:
        if found is None:
            return None
        if isinstance(found, str):
            return Resolution((), found)
        f = found.file
        row, col = f.position(found.node)
        package = f.rel.rsplit("/", 1)[0].replace("/", ".") if "/" in f.rel else ""
        full = ".".join(x for x in (package, found.container, found.name) if x)
        local = found.kind == "param" or (
            found.kind in ("var", "type") and _in_function(found.decl)
        )
        sig = f.line(row).strip()
        doc = "" if local else f.doc_before(found.decl)
        target = Target(f.rel, row + 1, col, found.name, found.kind, full, sig, doc, local)
        return Resolution((target,), "")


# The default build the resolver assumes (what gopls and go/types use on a Linux machine):
# these tags hold, as do `go1.N` release tags; any other tag (`purego`, `ignore`) does not.
_DEFAULT_TAGS = frozenset({"linux", "amd64", "unix", "gc", "cgo"})
_GOOS = frozenset(
    {"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
     "linux", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"}
)  # fmt: skip
_GOARCH = frozenset(
    {"386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le",
     "ppc64", "ppc64le", "riscv64", "s390x", "wasm"}
)  # fmt: skip
_BUILD_TOKEN = re.compile(r"\s*(\(|\)|!|&&|\|\||[\w.]+)")


def in_default_build(p: Parsed) -> bool:
    """Does the default build compile this file? Its `//go:build` line (before the package
    clause) and its name's `_GOOS` / `_GOARCH` suffixes decide (`go help buildconstraint`)."""
    stem = p.rel.rsplit("/", 1)[-1].removesuffix(".go").removesuffix("_test")
    parts = stem.split("_")[1:]
    if parts and parts[-1] in _GOARCH and parts[-1] not in _DEFAULT_TAGS:
        return False
    if parts and parts[-1] in _GOARCH:
        parts = parts[:-1]
    if parts and parts[-1] in _GOOS and parts[-1] not in _DEFAULT_TAGS:
        return False
    for top in p.tree.root_node.named_children:
        if top.type == "package_clause":
            break
        text = p.text_of(top)
        if top.type == "comment" and text.startswith("//go:build "):
            return _build_expr(text.removeprefix("//go:build "))
    return True


def _build_expr(expr: str) -> bool:
    """A build constraint's value under the default tags; an unreadable one holds."""
    tokens: list[str] = []
    at = 0
    while at < len(expr.rstrip()):
        m = _BUILD_TOKEN.match(expr, at)
        if m is None:
            return True
        tokens.append(m.group(1))
        at = m.end()
    pos = 0

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    def either() -> bool:  # a || b
        nonlocal pos
        value = both()
        while peek() == "||":
            pos += 1
            value = both() or value
        return value

    def both() -> bool:  # a && b
        nonlocal pos
        value = one()
        while peek() == "&&":
            pos += 1
            value = one() and value
        return value

    def one() -> bool:  # !a, (…), a tag
        nonlocal pos
        token = peek()
        pos += 1
        if token == "!":
            return not one()
        if token == "(":
            value = either()
            pos += 1  # ")"
            return value
        return token in _DEFAULT_TAGS or re.fullmatch(r"go1\.\d+", token) is not None

    value = either()
    return value if pos == len(tokens) else True


def go_tool_ignores(rel: str) -> bool:
    """A file the go tool does not build as part of the module: in a directory whose name
    starts with `_` or `.`, or one named `testdata` (`go help packages`)."""
    folders = rel.split("/")[:-1]
    return any(f.startswith(("_", ".")) or f == "testdata" for f in folders)


def assumed_package_name(path: str) -> str:
    """The package name of an import path from outside the workspace, as go tools guess it:
    the last element, the one before it for a major-version suffix (`yaml.v3` / `v5`), with
    a `go-` prefix and anything after a `.` or `-` dropped (`go-version` -> `version`)."""
    parts = [x for x in path.split("/") if x]
    if not parts:
        return ""
    last = parts[-1]
    if len(parts) > 1 and last.startswith("v") and last[1:].isdigit():
        last = parts[-2]
    if last.startswith("go-"):
        last = last[3:]
    for sep in (".", "-"):
        last = last.split(sep, 1)[0]
    return last


def _in_scope(decls: list[GoDecl], st: Node, pos: int) -> list[GoDecl]:
    """A local's scope begins at the end of its declaration (the Go spec): inside
    `x := x.f()` the right side's `x` is the outer one; only the declared names themselves
    are theirs."""
    if st.end_byte <= pos:
        return decls
    return [d for d in decls if d.node.start_byte == pos]


def _in_function(node: Node) -> bool:
    p = node.parent
    while p is not None:
        if p.type in _FUNCS:
            return True
        p = p.parent
    return False


def _receiver_type(p: Parsed, method: Node) -> str:
    recv = method.child_by_field_name("receiver")
    if recv is None:
        return ""
    for param in recv.named_children:
        typ = param.child_by_field_name("type")
        while typ is not None and typ.type in ("pointer_type", "generic_type"):
            typ = (
                typ.named_children[-1]
                if typ.type == "pointer_type"
                else typ.child_by_field_name("type")
            )
        if typ is not None:
            return p.text_of(typ)
    return ""


def _specs(p: Parsed, decl: Node, kind: str) -> list[GoDecl]:
    out = []
    specs = [decl]
    while specs:
        node = specs.pop(0)
        for spec in node.named_children:
            if spec.type in ("var_spec_list", "const_spec_list"):
                specs.append(spec)
            elif spec.type in ("var_spec", "const_spec"):
                typ = spec.child_by_field_name("type")
                value = spec.child_by_field_name("value")
                for n in spec.children_by_field_name("name"):
                    v = (
                        typ
                        if typ is not None
                        else (
                            value.named_children[0]
                            if value is not None and value.named_children
                            else None
                        )
                    )
                    out.append(GoDecl(p.text_of(n), n, spec, kind, p, v))
    return out


def _import_specs(decl: Node) -> list[Node]:
    out = []
    for child in decl.named_children:
        if child.type == "import_spec":
            out.append(child)
        elif child.type == "import_spec_list":
            out.extend(c for c in child.named_children if c.type == "import_spec")
    return out
