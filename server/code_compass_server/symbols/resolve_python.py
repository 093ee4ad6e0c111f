"""Python names resolved from the parse tree alone: scopes, imports, classes (the fast path).

Covers what most hovers need, in well under a millisecond once a file is parsed: local
scopes and parameters (LEGB, `global`/`nonlocal`), imports (absolute, relative, aliased,
re-exported through `__init__.py`, `*`), module-level names, `self.x` / `cls.x` / `super().x`
through the workspace's class hierarchy, `module.x` and `Class.x`. Anything it cannot decide
(an attribute of a value of unknown type, a base class outside the workspace that may define
the member) is left to jedi: the answer is `None`, never a guess.

Each file is parsed once per version (`ast`, then one walk that records scopes, bindings and
every identifier occurrence by position) and kept in a small LRU.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from code_compass_server.constants import PYTHON_PARSE_CACHE_BYTES
from code_compass_server.symbols.parse_in_pieces import parse_python
from code_compass_server.symbols.resolve_model import (
    MAX_FOLLOW,
    Resolution,
    Target,
    dedupe,
    doc_summary,
)
from code_compass_server.symbols.stamped_cache import StampedCache

MODULE_CACHE_FILES = 256  # parsed files kept (a few MB each for the largest Django modules)
BUILTIN_NAMES = frozenset(dir(builtins))


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


@dataclass(eq=False, slots=True)
class PyScope:
    kind: str  # module | class | function
    name: str
    qualname: str  # "Flask.run"; "" for the module
    parent: PyScope | None
    node: ast.AST
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    instance_attrs: dict[str, list[Binding]] = field(default_factory=dict)  # classes: self.x =
    bases: list[ast.expr] = field(default_factory=list)  # classes
    star_imports: list[tuple[str, int]] = field(default_factory=list)  # module: (module, level)

    def add(self, b: Binding) -> None:
        self.bindings.setdefault(b.name, []).append(b)


@dataclass(eq=False, slots=True)
class Binding:
    name: str
    line: int  # 1-based
    col: int  # 0-based, str units
    kind: str  # function | class | statement | param | import | module
    scope: PyScope
    info: ModuleInfo
    node: ast.AST | None = None  # the def/class, or the import statement
    module: str = ""  # imports: the module named ("a.b"), with `level` leading dots
    level: int = 0
    attr: str = ""  # `from module import attr`; "" for `import module`
    defines: PyScope | None = None  # classes and functions: their own scope
    blocks: tuple[int, ...] = ()  # the compound statements (if/for/try/...) it sits in
    value: ast.expr | None = None  # `name = value` / `name: annotation`: what types it
    value_scope: PyScope | None = None  # where `value` is read, when not `scope` (self.x = …)
    # Where the name starts to be bound: an assignment binds once its value is computed, so
    # `x = f(x)` reads the previous `x` (None: at the name itself).
    live: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Occurrence:
    kind: str  # name | attr | binding | import_module | keyword
    name: str
    scope: PyScope
    node: ast.AST | None  # attr: the ast.Attribute; name: the ast.Name; keyword: the ast.Call
    binding: Binding | None = None  # binding: the binding this identifier creates
    module: str = ""  # import_module: the dotted module up to and including this name
    level: int = 0
    blocks: tuple[int, ...] = ()  # name: the compound statements the use sits in


@dataclass(eq=False, slots=True)
class ModuleInfo:
    rel: str
    dotted: str  # "flask.app"; "" when the path is not importable
    lines: list[str]
    module: PyScope
    occurrences: dict[tuple[int, int], Occurrence]
    is_package: bool
    doc: str


class _Builder(ast.NodeVisitor):
    """One walk: scopes, bindings in source order, identifier occurrences by position."""

    def __init__(self, info: ModuleInfo) -> None:
        self.info = info
        self.lines = info.lines
        self.scope = info.module
        self.occ = info.occurrences
        self.blocks: tuple[int, ...] = ()
        self.live: tuple[int, int] | None = None  # assignment targets: bound from here

    def _block(self, node: ast.AST) -> None:
        outer = self.blocks
        self.blocks = (*outer, id(node))
        self.generic_visit(node)
        self.blocks = outer

    visit_If = _block
    visit_While = _block
    visit_Try = _block
    visit_With = _block
    visit_AsyncWith = _block
    visit_Match = _block
    visit_IfExp = _block

    # -- positions ------------------------------------------------------------------
    def col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def name_col(self, line: int, start: int, name: str) -> int:
        # A plain scan, not a regular expression per name: a module's parse asks this for
        # every binding, and as many patterns as names would churn `re`'s compile cache.
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        at = text.find(name, start)
        while at >= 0:
            end = at + len(name)
            if not (at and _word_char(text[at - 1])) and not (
                end < len(text) and _word_char(text[end])
            ):
                return at
            at = text.find(name, at + 1)
        return start

    def bind(self, name: str, line: int, col: int, kind: str, **kw: object) -> Binding:
        scope = self.scope
        if name in scope.globals:
            scope = self.info.module
        b = Binding(name, line, col, kind, scope, self.info, blocks=self.blocks, **kw)  # type: ignore[arg-type]
        b.live = self.live
        scope.add(b)
        self.occ[(line, col)] = Occurrence("binding", name, self.scope, None, b)
        return b

    # -- scopes ---------------------------------------------------------------------
    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for d in getattr(node, "decorator_list", []):
            self.visit(d)
        args = node.args
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    self.visit(a.annotation)
            if node.returns is not None:
                self.visit(node.returns)
        outer = self.scope
        if isinstance(node, ast.Lambda):
            name, qual = "<lambda>", outer.qualname
            defines = PyScope("function", name, qual, outer, node)
        else:
            col = self.name_col(node.lineno, self.col(node.lineno, node.col_offset), node.name)
            qual = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
            defines = PyScope("function", node.name, qual, outer, node)
            self.bind(node.name, node.lineno, col, "function", node=node, defines=defines)
        self.scope = defines
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                col = self.col(a.lineno, a.col_offset)
                self.bind(a.arg, a.lineno, col, "param", node=a, value=a.annotation)
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.visit(stmt)
        self.scope = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        for k in node.keywords:
            self.visit(k.value)
        outer = self.scope
        col = self.name_col(node.lineno, self.col(node.lineno, node.col_offset), node.name)
        qual = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
        defines = PyScope("class", node.name, qual, outer, node, bases=list(node.bases))
        self.bind(node.name, node.lineno, col, "class", node=node, defines=defines)
        self.scope = defines
        for stmt in node.body:
            self.visit(stmt)
        self.scope = outer

    def _comprehension(self, node: ast.AST, elts: list[ast.expr]) -> None:
        gens: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(gens[0].iter)  # evaluated in the enclosing scope
        outer = self.scope
        self.scope = PyScope("function", "<comprehension>", outer.qualname, outer, node)
        for i, g in enumerate(gens):
            if i:
                self.visit(g.iter)
            self._target(g.target)
            for cond in g.ifs:
                self.visit(cond)
        for e in elts:
            self.visit(e)
        self.scope = outer

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    # -- bindings -------------------------------------------------------------------
    def _target(self, t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            self.bind(t.id, t.lineno, self.col(t.lineno, t.col_offset), "statement", node=t)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e)
        elif isinstance(t, ast.Starred):
            self._target(t.value)
        else:
            self.visit(t)
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                self._instance_attr(t)

    def _instance_attr(self, t: ast.Attribute) -> None:
        """`self.x = …` inside a method: an attribute of the enclosing class's instances."""
        fn = self.scope
        cls = fn.parent
        if fn.kind != "function" or cls is None or cls.kind != "class":
            return
        node = fn.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        first = [*node.args.posonlyargs, *node.args.args]
        if not first or not isinstance(t.value, ast.Name) or t.value.id != first[0].arg:
            return
        assert t.end_lineno is not None and t.end_col_offset is not None
        line = t.end_lineno
        col = self.col(line, t.end_col_offset) - len(t.attr)
        b = Binding(t.attr, line, col, "statement", cls, self.info, node=t)
        cls.instance_attrs.setdefault(t.attr, []).append(b)

    def _statement_end(self, node: ast.stmt) -> tuple[int, int] | None:
        if node.end_lineno is None or node.end_col_offset is None:
            return None
        return node.end_lineno, self.col(node.end_lineno, node.end_col_offset)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        self.live = self._statement_end(node)
        for t in node.targets:
            self._target(t)
            if isinstance(t, ast.Name):
                self._typed(t, node.value)
            elif isinstance(t, ast.Attribute):
                self._typed_attr(t, node.value)
        self.live = None

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
        self.live = self._statement_end(node)
        self._target(node.target)
        self.live = None
        if isinstance(node.target, ast.Name):
            self._typed(node.target, node.annotation)
        elif isinstance(node.target, ast.Attribute):
            self._typed_attr(node.target, node.annotation)

    def _typed(self, t: ast.Name, value: ast.expr) -> None:
        occ = self.occ.get((t.lineno, self.col(t.lineno, t.col_offset)))
        if occ is not None and occ.binding is not None:
            occ.binding.value = value

    def _typed_attr(self, t: ast.Attribute, value: ast.expr) -> None:
        """`self.x = Cls(…)` / `self.x: T`: what types the instance attribute (a `None`
        placeholder types nothing: another assignment may)."""
        cls = self.scope.parent
        if cls is None or cls.kind != "class":
            return
        if isinstance(value, ast.Constant) and value.value is None:
            return
        for b in cls.instance_attrs.get(t.attr, ()):
            if b.node is t:
                b.value = value
                b.value_scope = self.scope

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.visit(node.target)  # a use of the existing binding
        else:
            self._target(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.name == "<comprehension>" and scope.parent is not None:
            scope = scope.parent
        outer, self.scope = self.scope, scope
        self._target(node.target)
        self.scope = outer

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        outer = self.blocks
        self.blocks = (*outer, id(node))
        self._target(node.target)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.blocks = outer

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        self.visit(node.context_expr)
        if node.optional_vars is not None:
            self._target(node.optional_vars)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            line = node.lineno
            col = self.name_col(line, self.col(line, node.col_offset), node.name)
            if node.type is not None and node.type.end_col_offset is not None:
                end = node.type.end_lineno or line
                col = self.name_col(end, self.col(end, node.type.end_col_offset), node.name)
                line = end
            self.bind(node.name, line, col, "statement", node=node)
        outer = self.blocks
        self.blocks = (*outer, id(node))  # a handler runs instead of its `try` body's rest
        for stmt in node.body:
            self.visit(stmt)
        self.blocks = outer

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocals.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            col = self.col(a.lineno, a.col_offset)
            parts = a.name.split(".")
            pos = col
            for i, part in enumerate(parts):  # each component of `import a.b.c` names a module
                self.occ[(a.lineno, pos)] = Occurrence(
                    "import_module", part, self.scope, node, module=".".join(parts[: i + 1])
                )
                pos += len(part) + 1
            if a.asname:
                c = self.name_col(a.lineno, pos, a.asname)
                self.bind(a.asname, a.lineno, c, "import", node=node, module=a.name)
            else:
                b = Binding(parts[0], a.lineno, col, "import", self.scope, self.info)
                b.node, b.module = node, parts[0]
                self.scope.add(b)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module_occurrences(node, module)
        for a in node.names:
            if a.name == "*":
                self.info.module.star_imports.append((module, node.level))
                continue
            col = self.col(a.lineno, a.col_offset)
            kw = {"node": node, "module": module, "level": node.level, "attr": a.name}
            if a.asname:
                c = self.name_col(a.lineno, col + len(a.name), a.asname)
                self.bind(a.asname, a.lineno, c, "import", **kw)
                self.occ[(a.lineno, col)] = self.occ[(a.lineno, c)]
            else:
                self.bind(a.name, a.lineno, col, "import", **kw)

    def _module_occurrences(self, node: ast.ImportFrom, module: str) -> None:
        """`from .a.b import c`: hovering `a` or `b` names that module."""
        text = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
        m = re.match(r"\s*from\s+(\.*)\s*([\w.]*)", text)
        if not m or m.group(2).replace(" ", "") != module:
            return
        pos = m.start(2)
        parts = module.split(".") if module else []
        for i, part in enumerate(parts):
            self.occ[(node.lineno, pos)] = Occurrence(
                "import_module", part, self.scope, node,
                module=".".join(parts[: i + 1]), level=node.level,
            )  # fmt: skip
            pos += len(part) + 1

    # -- uses -----------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._target(node)
            return
        col = self.col(node.lineno, node.col_offset)
        self.occ[(node.lineno, col)] = Occurrence(
            "name", node.id, self.scope, node, blocks=self.blocks
        )

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        for k in node.keywords:
            if k.arg is not None:
                col = self.col(k.lineno, k.col_offset)
                self.occ[(k.lineno, col)] = Occurrence("keyword", k.arg, self.scope, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        assert node.end_lineno is not None and node.end_col_offset is not None
        line = node.end_lineno
        col = self.col(line, node.end_col_offset) - len(node.attr)
        self.occ[(line, col)] = Occurrence("attr", node.attr, self.scope, node)


def module_name(rel: str, roots: tuple[str, ...]) -> tuple[str, bool]:
    """("flask.app", is_package) for "src/flask/app.py"; "" when not a .py path."""
    if not rel.endswith((".py", ".pyi")):
        return "", False
    parts = rel.rsplit(".", 1)[0].split("/")
    for r in roots:
        if r and parts[: len(r.split("/"))] == r.split("/"):
            parts = parts[len(r.split("/")) :]
            break
    pkg = parts[-1] == "__init__"
    if pkg:
        parts = parts[:-1]
    return ".".join(parts), pkg


def parse_module(rel: str, text: str, roots: tuple[str, ...]) -> ModuleInfo | None:
    try:
        tree = parse_python(text)  # in pieces: the GIL is let go between them
    except (SyntaxError, ValueError, RecursionError):
        return None
    dotted, pkg = module_name(rel, roots)
    scope = PyScope("module", dotted.rsplit(".", 1)[-1], "", None, tree)
    info = ModuleInfo(rel, dotted, text.split("\n"), scope, {}, pkg, ast.get_docstring(tree) or "")
    builder = _Builder(info)
    try:
        for stmt in tree.body:
            builder.visit(stmt)
    except RecursionError:
        return None
    return info


def _reaching(bs: list[Binding], line: int, col: int, blocks: tuple[int, ...]) -> list[Binding]:
    """The bindings of a local that may reach a use: the conditional ones (inside an if/try/
    loop the use is not in) after the last unconditional one, then that one (jedi's order)."""
    before = [b for b in bs if (b.live or (b.line, b.col)) <= (line, col)]
    if not before:
        return [bs[0]]
    conditional: list[Binding] = []
    for b in reversed(before):
        if b.blocks == blocks[: len(b.blocks)]:
            return [*reversed(conditional), b]
        conditional.append(b)
    return list(reversed(conditional))


_LITERALS: dict[type, str] = {
    ast.List: "list", ast.ListComp: "list", ast.Dict: "dict", ast.DictComp: "dict",
    ast.Set: "set", ast.SetComp: "set", ast.Tuple: "tuple", ast.JoinedStr: "str",
}  # fmt: skip


def _positioned_at(expr: ast.expr, b: Binding) -> ast.expr:
    """A string annotation's parsed expression, placed at its binding (for scope lookups)."""
    for node in ast.walk(expr):
        if hasattr(node, "lineno"):
            node.lineno, node.col_offset = b.line, b.col  # type: ignore[attr-defined]
    return expr


NOTHING = Resolution((), "")  # no identifier there that names a symbol


@dataclass(frozen=True, slots=True)
class _Thing:
    """What an expression evaluates to, as far as the fast path can tell."""

    kind: str  # module | class | instance | outside
    info: ModuleInfo | None = None
    scope: PyScope | None = None  # module scope, or the class's scope
    outside: str = ""
    skip_first: bool = False  # super(): the class's own body is not searched


class PythonScopes:
    """The fast path's resolver over one workspace root; thread-safe, parses cached."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.roots = tuple(r for r in ("src", "lib") if (root / r).is_dir())
        self._files: StampedCache[ModuleInfo] = StampedCache(
            root, MODULE_CACHE_FILES, PYTHON_PARSE_CACHE_BYTES, cyclic=True
        )

    # -- files ----------------------------------------------------------------------
    def module(self, rel: str, text: str | None = None) -> ModuleInfo | None:
        """The parsed file: `text` (an open buffer) or what is on disk."""
        return self._files.get(rel, text, lambda source: parse_module(rel, source, self.roots))

    def find_module(self, dotted: str) -> str | None:
        """Workspace-relative path of an importable module, or None (outside the workspace)."""
        if not dotted:
            return None
        base = dotted.replace(".", "/")
        for r in ("", *self.roots):
            prefix = f"{r}/" if r else ""
            for cand in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi"):
                if (self.root / (prefix + cand)).is_file():
                    return prefix + cand
        return None

    def absolute(self, info: ModuleInfo, module: str, level: int) -> str:
        """`from ..a import b` inside `info`: the absolute dotted module name."""
        if level == 0:
            return module
        pkg = info.dotted.split(".") if info.dotted else []
        if not info.is_package:
            pkg = pkg[:-1]
        if level > 1:
            pkg = pkg[: len(pkg) - (level - 1)] if level - 1 <= len(pkg) else []
        return ".".join([*pkg, *([module] if module else [])])

    def warm(self, rel: str, text: str, pause: Callable[[], None] = lambda: None) -> None:
        """Parse a file and the workspace modules it imports (on open: first hovers are fast);
        `pause` runs before each import's parse (to let requests go first)."""
        info = self.module(rel, text)
        if info is None:
            return
        for bs in info.module.bindings.values():
            for b in bs:
                if b.kind == "import":
                    target = self.find_module(self.absolute(info, b.module, b.level))
                    if target is not None:
                        pause()
                        self.module(target)

    # -- resolution -----------------------------------------------------------------
    def resolve(self, rel: str, text: str | None, line: int, column: int) -> Resolution | None:
        """The identifier starting at (0-based line, column); None when undecided."""
        info = self.module(rel, text)
        if info is None:
            return None
        occ = info.occurrences.get((line + 1, column))
        if occ is None:
            return NOTHING  # prose, a string, a comment: no symbol for jedi to find either
        if occ.kind == "binding":
            assert occ.binding is not None
            b = occ.binding
            if b.kind == "import":
                return self._result(self._follow(b, 0))
            return self._result([b])
        if occ.kind == "import_module":
            dotted = self.absolute(info, occ.module, occ.level)
            return self._result(self._module_binding(dotted))
        if occ.kind == "name":
            return self._result(self._name(info, occ.scope, occ.name, line + 1, column, occ.blocks))
        if occ.kind == "keyword":
            assert isinstance(occ.node, ast.Call)
            return self._result(self._keyword(info, occ.scope, occ.node.func, occ.name))
        assert isinstance(occ.node, ast.Attribute)
        thing = self._eval(info, occ.scope, occ.node.value, 0)
        if thing is None:
            return None
        return self._result(self._member(thing, occ.name, 0))

    def _result(self, found: list[Binding] | str | None) -> Resolution | None:
        if found is None:
            return None
        if isinstance(found, str):
            return Resolution((), found)
        if not found:
            return None
        return Resolution(tuple(dedupe([self._target(b) for b in found])), "")

    def _keyword(
        self, info: ModuleInfo, scope: PyScope, func: ast.expr, name: str
    ) -> list[Binding] | str | None:
        """`f(name=…)`: the parameter of the function (or class's `__init__`) called."""
        if isinstance(func, ast.Name):
            found = self._name(info, scope, func.id, func.lineno, func.col_offset)
        elif isinstance(func, ast.Attribute):
            base = self._eval(info, scope, func.value, 0)
            found = self._member(base, func.attr, 0) if base is not None else None
        else:
            return None
        if not isinstance(found, list) or len(found) != 1:
            return f"{found}.{name}" if isinstance(found, str) else None
        b = found[0]
        if b.kind == "class" and b.defines is not None:
            init = self._class_member(b.info, b.defines, "__init__", False, set(), 0)
            if not init:
                return None
            b = init[0]
        if b.kind != "function" or b.defines is None:
            return None
        params = [p for p in b.defines.bindings.get(name, []) if p.kind == "param"]
        return params[:1] or None

    def _name(
        self, info: ModuleInfo, scope: PyScope, name: str, line: int, col: int,
        blocks: tuple[int, ...] = (),
    ) -> list[Binding] | str | None:  # fmt: skip
        bindings = self._lookup(info, scope, name, line, col, blocks)
        if bindings is None:
            if name in BUILTIN_NAMES:
                return f"builtins.{name}"
            return None
        out: list[Binding] = []
        for b in bindings:
            f = self._follow(b, 0)
            if isinstance(f, str):
                return out or f
            if f is None:
                return None
            out.extend(f)
        return out

    def _lookup(
        self, info: ModuleInfo, scope: PyScope, name: str, line: int, col: int,
        blocks: tuple[int, ...] = (),
    ) -> list[Binding] | None:  # fmt: skip
        s: PyScope | None = scope
        innermost = True
        while s is not None:
            if s.kind == "class" and not innermost:
                s = s.parent
                continue
            if name in s.globals:
                s = info.module
            bs = s.bindings.get(name)
            if bs:
                if innermost and s.kind == "function":
                    return _reaching(bs, line, col, blocks)
                return [bs[0]] if s.kind != "module" else self._module_pick(bs, line)
            innermost = False
            s = s.parent
        star = self._star(info, name, 0)
        return star

    @staticmethod
    def _module_pick(bs: list[Binding], line: int) -> list[Binding]:
        """A module-level name: its first binding (jedi lists them in source order). An
        import with a fallback in another block (`try: import x` / `except ImportError:
        x = None`) is undecided: which one binds depends on what is installed, so jedi,
        which knows the environment, answers."""
        first = bs[0]
        if first.kind == "import" and any(b.blocks != first.blocks for b in bs[1:]):
            return []
        return [first]

    def _star(self, info: ModuleInfo, name: str, depth: int) -> list[Binding] | None:
        for module, level in info.module.star_imports:
            target = self.find_module(self.absolute(info, module, level))
            sub = self.module(target) if target else None
            if sub is None or depth > MAX_FOLLOW:
                continue
            bs = sub.module.bindings.get(name)
            if bs and not name.startswith("_"):
                return [bs[0]]
            deeper = self._star(sub, name, depth + 1)
            if deeper:
                return deeper
        return None

    def _follow(self, b: Binding, depth: int) -> list[Binding] | str | None:
        """An import binding followed to the definition it names (or the outside name)."""
        if b.kind != "import":
            return [b]
        if depth > MAX_FOLLOW:
            return None
        dotted = self.absolute(b.info, b.module, b.level)
        if not b.attr:
            return self._module_binding(dotted)
        target = self.find_module(dotted)
        if target is None:
            if b.level or self._is_workspace_package(dotted):
                return None  # a relative import we cannot find: undecided
            return f"{dotted}.{b.attr}"
        sub = self.module(target)
        if sub is None:
            return None
        bs = sub.module.bindings.get(b.attr)
        if bs:
            picked = self._module_pick(bs, 0)
            return self._follow(picked[0], depth + 1) if picked else None
        found = self._star(sub, b.attr, 0)
        if found:
            return self._follow(found[0], depth + 1)
        return self._module_binding(f"{dotted}.{b.attr}")  # a submodule

    def _is_workspace_package(self, dotted: str) -> bool:
        head = dotted.split(".", 1)[0]
        return self.find_module(head) is not None

    def _module_binding(self, dotted: str) -> list[Binding] | str | None:
        target = self.find_module(dotted)
        if target is None:
            return None if self._is_workspace_package(dotted) else dotted
        sub = self.module(target)
        if sub is None:
            return None
        return [Binding(dotted.rsplit(".", 1)[-1], 1, 0, "module", sub.module, sub)]

    # -- attributes -----------------------------------------------------------------
    def _eval(self, info: ModuleInfo, scope: PyScope, expr: ast.expr, depth: int) -> _Thing | None:
        if depth > MAX_FOLLOW:
            return None
        if isinstance(expr, ast.Name):
            self_class = self._self_class(info, scope, expr.id)
            if self_class is not None:
                return self_class
            line, col = expr.lineno, expr.col_offset
            found = self._name(info, scope, expr.id, line, col)
            return self._thing(found, depth)
        if isinstance(expr, ast.Attribute):
            base = self._eval(info, scope, expr.value, depth + 1)
            if base is None:
                return None
            return self._thing(self._member(base, expr.attr, depth + 1), depth)
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "super"
            and not expr.args
        ):
            s: PyScope | None = scope
            while s is not None and s.kind == "function":
                if s.parent is not None and s.parent.kind == "class":
                    return _Thing("instance", info, s.parent, skip_first=True)
                s = s.parent
        if isinstance(expr, ast.Call):
            # `Cls().m`, `make_tag().check`: an instance of the class, or of what the
            # function's return annotation names.
            callee = self._eval(info, scope, expr.func, depth + 1)
            if callee is not None and callee.kind == "class":
                return _Thing("instance", callee.info, callee.scope)
            if callee is None:
                return self._returned(info, scope, expr.func, depth + 1)
        return None

    @staticmethod
    def _self_class(info: ModuleInfo, scope: PyScope, name: str) -> _Thing | None:
        """`self`/`cls` (the first parameter of a method): the enclosing class."""
        s: PyScope | None = scope
        while s is not None and s.kind == "function" and s.name == "<comprehension>":
            s = s.parent
        if s is None or s.kind != "function" or s.parent is None or s.parent.kind != "class":
            return None
        node = s.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        first = [*node.args.posonlyargs, *node.args.args]
        if not first or first[0].arg != name:
            return None
        if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
            return None
        if name in s.bindings and len(s.bindings[name]) > 1:
            return None  # reassigned
        return _Thing("instance", info, s.parent)

    def _thing(self, found: list[Binding] | str | None, depth: int = 0) -> _Thing | None:
        if found is None:
            return None
        if isinstance(found, str):
            return _Thing("outside", outside=found)
        if len(found) != 1:
            return None
        b = found[0]
        if b.kind == "module":
            return _Thing("module", b.info, b.scope)
        if b.kind == "class" and b.defines is not None:
            return _Thing("class", b.info, b.defines)
        if isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(d, ast.Name) and d.id == "property" for d in b.node.decorator_list
        ):
            return _Thing("outside", outside="builtins.property")  # `@name.setter`
        placeholder = (
            b.scope.kind == "class" and isinstance(b.value, ast.Constant) and b.value.value is None
        )
        if b.value is not None and depth < MAX_FOLLOW and not placeholder:
            return self._instance_of(b, depth + 1)
        if (placeholder or isinstance(b.node, ast.Attribute)) and depth < MAX_FOLLOW:
            # `self.x = None` first, `self.x = Cls()` later, or a class-level `x = None`
            # default that a method sets (`self.x = Cls()`): the typed assignment decides.
            typed = next((a for a in b.scope.instance_attrs.get(b.name, ()) if a.value), None)
            if typed is not None:
                return self._instance_of(typed, depth + 1)
        return None

    def _instance_of(self, b: Binding, depth: int) -> _Thing | None:
        """`x = Class(…)`, `x: Class`, `param: "Class"`: an instance of that class (or of a
        builtin type for literals; of something outside for an outside callable's result)."""
        value = b.value
        literal = _LITERALS.get(type(value))
        if literal is not None and b.kind != "param":
            return _Thing("outside", outside=f"builtins.{literal}")
        if isinstance(value, ast.Constant) and b.kind != "param":
            return _Thing("outside", outside=f"builtins.{type(value.value).__name__}")
        if isinstance(value, ast.Call):
            value = value.func
        elif isinstance(value, ast.Constant) and isinstance(value.value, str):
            try:
                value = ast.parse(value.value, mode="eval").body
            except SyntaxError:
                return None
            value = _positioned_at(value, b)
        if not isinstance(value, (ast.Name, ast.Attribute)):
            return None
        scope = b.scope.parent if b.kind == "param" and b.scope.parent else b.scope
        scope = b.value_scope or scope
        cls = self._eval(b.info, scope, value, depth)
        if cls is not None and cls.kind == "outside" and b.kind != "param":
            return cls  # the result of something defined outside the workspace
        if cls is None and isinstance(b.value, ast.Call):
            return self._returned(b.info, scope, b.value.func, depth + 1)
        if cls is None or cls.kind != "class":
            return None
        return _Thing("instance", cls.info, cls.scope)

    def _returned(
        self, info: ModuleInfo, scope: PyScope, func: ast.expr, depth: int
    ) -> _Thing | None:
        """What calling `func` gives: the instance its return annotation names, when it is
        a function or method of the workspace that declares one (`-> Tag`, `-> "Tag"`)."""
        if depth > MAX_FOLLOW:
            return None
        found: list[Binding] | str | None = None
        if isinstance(func, ast.Name):
            found = self._name(info, scope, func.id, func.lineno, func.col_offset)
        elif isinstance(func, ast.Attribute):
            base = self._eval(info, scope, func.value, depth + 1)
            found = self._member(base, func.attr, depth + 1) if base is not None else None
        if not isinstance(found, list) or len(found) != 1:
            return None
        fn = found[0].node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.returns is None:
            return None
        ann = fn.returns
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                parsed = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return None
            ann = ast.copy_location(parsed, ann)
            for node in ast.walk(ann):
                ast.copy_location(node, fn.returns)
        if isinstance(ann, ast.Subscript):
            return None  # Optional[T], list[T]: not one class
        if not isinstance(ann, (ast.Name, ast.Attribute)):
            return None
        owner = found[0].scope
        cls = self._eval(found[0].info, owner, ann, depth + 1)
        if cls is None or cls.kind != "class":
            return None
        return _Thing("instance", cls.info, cls.scope)

    def _member(self, thing: _Thing, name: str, depth: int) -> list[Binding] | str | None:
        if thing.kind == "outside":
            return f"{thing.outside}.{name}"
        if thing.kind == "module":
            assert thing.info is not None and thing.scope is not None
            bs = thing.scope.bindings.get(name)
            if bs:
                return self._follow(bs[0], depth + 1)
            star = self._star(thing.info, name, 0)
            if star:
                return self._follow(star[0], depth + 1)
            if thing.info.is_package and thing.info.dotted:
                return self._module_binding(f"{thing.info.dotted}.{name}")
            return None
        assert thing.scope is not None and thing.info is not None
        return self._class_member_or_object(thing.info, thing.scope, name, thing.skip_first, depth)

    def _class_member(
        self, info: ModuleInfo, cls: PyScope, name: str, skip: bool, seen: set[int], depth: int
    ) -> list[Binding] | None:
        """The member along the workspace's class hierarchy; None when a base we cannot
        see (outside the workspace, or computed) might define it."""
        if id(cls) in seen or depth > MAX_FOLLOW:
            return None
        seen.add(id(cls))
        if not skip:
            bs = cls.bindings.get(name)
            if bs:
                return [bs[0]]
            attrs = cls.instance_attrs.get(name)
            if attrs:
                return [attrs[0]]
        for base in cls.bases:
            parent = self._eval(info, cls.parent or info.module, base, depth + 1)
            if parent is None or parent.kind != "class" or parent.scope is None or not parent.info:
                if isinstance(base, ast.Name) and base.id == "object":
                    continue
                return None  # a base we cannot see may define it
            found = self._class_member(parent.info, parent.scope, name, False, seen, depth + 1)
            if found is None:
                return None
            if found:
                return found
        return []

    def _class_member_or_object(
        self, info: ModuleInfo, cls: PyScope, name: str, skip: bool, depth: int
    ) -> list[Binding] | str | None:
        found = self._class_member(info, cls, name, skip, set(), depth)
        if not found and name.startswith("__") and name.endswith("__"):
            return f"builtins.object.{name}"  # `__dict__`, `__class__`: every object's
        if found is None:
            outside = self._outside_bases(info, cls, name, set(), depth)
            if outside:
                return f"{outside[0]}.{name}"  # only bases outside the workspace can have it
        return found or None

    def _outside_bases(
        self, info: ModuleInfo, cls: PyScope, name: str, seen: set[int], depth: int
    ) -> list[str] | None:
        """The bases from outside the workspace along the hierarchy, when every base is
        known and no workspace class in it defines `name`; None otherwise."""
        if id(cls) in seen or depth > MAX_FOLLOW:
            return None
        seen.add(id(cls))
        if name in cls.bindings or name in cls.instance_attrs:
            return None
        out: list[str] = []
        for base in cls.bases:
            parent = self._eval(info, cls.parent or info.module, base, depth + 1)
            if parent is not None and parent.kind == "outside":
                out.append(parent.outside)
                continue
            if parent is None or parent.kind != "class" or parent.scope is None or not parent.info:
                return None
            deeper = self._outside_bases(parent.info, parent.scope, name, seen, depth + 1)
            if deeper is None:
                return None
            out.extend(deeper)
        return out

    # -- targets --------------------------------------------------------------------
    def _target(self, b: Binding) -> Target:
        info = b.info
        text = info.lines[b.line - 1].strip() if 0 < b.line <= len(info.lines) else ""
        doc = ""
        if b.kind == "module":
            doc = doc_summary(info.doc)
            text = ""
        elif isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = doc_summary(ast.get_docstring(b.node))
        qual = b.scope.qualname
        if b.kind == "module":
            full = info.dotted
        else:
            full = ".".join(p for p in (info.dotted, qual, b.name) if p)
        local = b.scope.kind == "function" and b.kind in ("statement", "param")
        return Target(
            path=info.rel, line=b.line, column=b.col, name=b.name, kind=b.kind,
            full_name=full, signature=text, doc_summary=doc, local=local,
        )  # fmt: skip
