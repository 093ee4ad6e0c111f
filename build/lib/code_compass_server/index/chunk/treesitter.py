"""tree-sitter grammars and per-language rules for finding definitions.

Only the top level and the bodies of containers (classes, impls, traits, modules,
namespaces) are visited: nested functions stay inside their parent's chunk, and
not walking every node keeps parsing of large repositories fast.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser


def _load(language: str) -> object:
    """The grammar's language pointer; grammars are imported lazily."""
    if language == "python":
        import tree_sitter_python

        return tree_sitter_python.language()
    if language in ("typescript", "tsx"):
        import tree_sitter_typescript

        if language == "tsx":
            return tree_sitter_typescript.language_tsx()
        return tree_sitter_typescript.language_typescript()
    if language == "javascript":
        import tree_sitter_javascript

        return tree_sitter_javascript.language()
    if language == "go":
        import tree_sitter_go

        return tree_sitter_go.language()
    if language == "java":
        import tree_sitter_java

        return tree_sitter_java.language()
    if language == "rust":
        import tree_sitter_rust

        return tree_sitter_rust.language()
    raise KeyError(language)


_languages: dict[str, Language] = {}
_local = threading.local()  # a Parser is not thread-safe: one per thread and language


def parser_for(language: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        lang = _languages.get(language)
        if lang is None:
            lang = _languages[language] = Language(_load(language))
        parser = parsers[language] = Parser(lang)
    return parser


@dataclass(frozen=True, slots=True)
class Found:
    """One definition found under a container's body."""

    kind: str  # function (becomes method inside a container) | class | struct | ...
    decl: Node  # the declaration itself (signature starts here)
    name: str
    name_node: Node | None
    body: Node | None  # where the signature ends
    members: Node | None  # container body to visit for member definitions
    outer: Node | None = None  # range override (e.g. one spec of a Go type group)
    container: str = ""  # container override (a Go method's receiver type)
    # False for values (variables, constants, attributes): a symbol-table entry only, its lines
    # stay in the surrounding window or class header, so chunking and embeddings don't change.
    chunk: bool = True


Finder = Callable[[Node], list[Found]]


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _named(node: Node, kind: str, members: Node | None = None) -> list[Found]:
    name_node = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    return [Found(kind, node, _text(name_node), name_node, body, members)]


# Upper-case names are constants by convention in every language here.
_CONSTANT_NAME = re.compile(r"^_*[A-Z][A-Z0-9_]*$")


def value_kind(name: str, declared_const: bool = False) -> str:
    return "constant" if declared_const or _CONSTANT_NAME.match(name) else "variable"


def _value(kind: str, decl: Node, name_node: Node, outer: Node | None = None) -> Found:
    return Found(kind, decl, _text(name_node), name_node, None, None, outer, chunk=False)


# --- Python -------------------------------------------------------------------

# Calls whose result is a type, not a value: `T = TypeVar("T")`, `UserId = NewType(...)`.
_PY_TYPE_CALLS = frozenset(
    {"TypeVar", "NewType", "ParamSpec", "TypeVarTuple", "NamedTuple", "TypedDict"}
)


def _py_targets(left: Node | None) -> list[Node]:
    if left is None:
        return []
    if left.type == "identifier":
        return [left]
    if left.type in ("pattern_list", "tuple_pattern", "list_pattern"):
        return [c for c in left.named_children if c.type == "identifier"]
    return []  # attributes (`a.b = ...`) and subscripts define nothing new


def _py_assignment(node: Node) -> list[Found]:
    """Module-level and class-level names bound by an assignment (chained ones too)."""
    if node.named_child_count != 1 or node.named_children[0].type != "assignment":
        return []
    out: list[Found] = []
    assignment: Node | None = node.named_children[0]
    while assignment is not None and assignment.type == "assignment":
        annotation = _text(assignment.child_by_field_name("type"))
        right = assignment.child_by_field_name("right")
        callee = right.child_by_field_name("function") if right is not None else None
        is_type = annotation.endswith("TypeAlias") or (
            right is not None
            and right.type == "call"
            and _text(callee).rsplit(".", 1)[-1] in _PY_TYPE_CALLS
        )
        for target in _py_targets(assignment.child_by_field_name("left")):
            kind = "type" if is_type else value_kind(_text(target))
            out.append(_value(kind, node, target))
        assignment = right
    return out


def _python(node: Node) -> list[Found]:
    t = node.type
    if t == "decorated_definition":
        inner = node.child_by_field_name("definition")
        return _python(inner) if inner is not None else []
    if t == "function_definition":
        return _named(node, "function")
    if t == "class_definition":
        return _named(node, "class", node.child_by_field_name("body"))
    if t == "expression_statement":
        return _py_assignment(node)
    if t == "type_alias_statement":  # `type X = ...` (3.12)
        left = node.child_by_field_name("left")
        name_node = left.named_children[0] if left is not None and left.named_children else left
        return [_value("type", node, name_node)] if name_node is not None else []
    return []


# --- TypeScript / JavaScript --------------------------------------------------

_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


def _js(node: Node) -> list[Found]:
    t = node.type
    if t in ("export_statement", "ambient_declaration"):
        decl = node.child_by_field_name("declaration")
        if decl is None:
            decl = next((c for c in node.named_children if c.type not in _JS_SKIP), None)
        return _js(decl) if decl is not None else []
    if t == "expression_statement":
        inner = node.named_children[0] if node.named_child_count else None
        if inner is not None and inner.type in ("internal_module", "module"):
            return _js(inner)
        return []
    if t in ("function_declaration", "generator_function_declaration", "function_signature"):
        return _named(node, "function")
    if t in ("function_expression", "function"):  # reached through `export default`
        return _named(node, "function")
    if t in ("class_declaration", "abstract_class_declaration", "class"):
        found = _named(node, "class", node.child_by_field_name("body"))
        if not found[0].name:
            found = [Found("class", node, "default", None, found[0].body, found[0].members)]
        return found
    if t in (
        "method_definition",
        "method_signature",
        "abstract_method_signature",
    ):
        return _named(node, "method")
    if t in ("public_field_definition", "field_definition"):
        value = node.child_by_field_name("value")
        name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
        if value is None or value.type not in _JS_FUNCTION_VALUES:
            # A field (`protected isStopped = false`, `closed: boolean`) is as nameable as a
            # Python class attribute: a value in the symbol table, its line in the class header.
            if name_node is None or name_node.type not in ("property_identifier", "identifier"):
                return []  # computed and #private names
            return [_value("variable", node, name_node)]
        return [
            Found(
                "method", node, _text(name_node), name_node, value.child_by_field_name("body"), None
            )
        ]
    if t == "interface_declaration":
        return _named(node, "interface")
    if t == "type_alias_declaration":
        return _named(node, "type")
    if t == "enum_declaration":
        return _named(node, "enum")
    if t in ("internal_module", "module"):
        return _named(node, "namespace", node.child_by_field_name("body"))
    if t in ("lexical_declaration", "variable_declaration"):
        out: list[Found] = []
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        for declarator in declarators:
            value = declarator.child_by_field_name("value")
            if value is None:
                continue
            name_node = declarator.child_by_field_name("name")
            if name_node is None or name_node.type != "identifier":
                continue
            outer = node if len(declarators) == 1 else declarator
            if value.type in _JS_FUNCTION_VALUES:
                body = value.child_by_field_name("body")
                out.append(Found("function", node, _text(name_node), name_node, body, None, outer))
            elif value.type == "class":
                members = value.child_by_field_name("body")
                out.append(
                    Found("class", node, _text(name_node), name_node, members, members, outer)
                )
            else:
                const = _text(node).startswith("const")
                out.append(_value(value_kind(_text(name_node), const), node, name_node, outer))
        return out
    return []


_JS_SKIP = frozenset({"decorator", "comment", "string"})


# --- Go -----------------------------------------------------------------------


def _go_receiver_type(node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    stack = [receiver]
    while stack:  # first type_identifier, whatever the pointer/generic wrapping
        n = stack.pop()
        if n.type == "type_identifier":
            return _text(n)
        stack.extend(reversed(n.named_children))
    return ""


_GO_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _go(node: Node) -> list[Found]:
    t = node.type
    if t == "function_declaration":
        return _named(node, "function")
    if t == "method_declaration":
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        receiver = _go_receiver_type(node)
        return [Found("method", node, _text(name_node), name_node, body, None, None, receiver)]
    if t == "type_declaration":
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        out: list[Found] = []
        for spec in specs:
            name_node = spec.child_by_field_name("name")
            type_node = spec.child_by_field_name("type")
            kind = _GO_TYPE_KINDS.get(type_node.type if type_node else "", "type")
            if spec.type == "type_alias":
                kind = "type"
            outer = node if len(specs) == 1 else spec
            out.append(
                Found(
                    kind,
                    node if len(specs) == 1 else spec,
                    _text(name_node),
                    name_node,
                    None,
                    None,
                    outer,
                )
            )
        return out
    if t in ("const_declaration", "var_declaration"):
        return _go_values(node, t == "const_declaration")
    return []


def _go_values(node: Node, const: bool) -> list[Found]:
    """Each name of a `const`/`var` declaration or group (`const ( A = iota; B )`)."""
    specs: list[Node] = []
    for c in node.named_children:
        if c.type in ("const_spec", "var_spec"):
            specs.append(c)
        elif c.type == "var_spec_list":
            specs.extend(s for s in c.named_children if s.type == "var_spec")
    out: list[Found] = []
    for spec in specs:
        names = [n for n in spec.children_by_field_name("name") if n.type == "identifier"]
        outer = node if len(specs) == 1 else spec
        for name_node in names:
            if _text(name_node) == "_":
                continue
            kind = "constant" if const else "variable"
            out.append(_value(kind, node if len(specs) == 1 else spec, name_node, outer))
    return out


# --- Java ---------------------------------------------------------------------

_JAVA_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "annotation_type_declaration": "interface",
}


def _java(node: Node) -> list[Found]:
    t = node.type
    kind = _JAVA_TYPES.get(t)
    if kind is not None:
        return _named(node, kind, node.child_by_field_name("body"))
    if t == "method_declaration":
        return _named(node, "method")
    if t == "constructor_declaration":
        return _named(node, "constructor")
    return []


# --- Rust ---------------------------------------------------------------------

_RUST_SIMPLE = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "type_item": "type",
    "macro_definition": "macro",
}


def _rust_type_name(node: Node | None) -> str:
    while node is not None and node.type in (
        "generic_type",
        "reference_type",
        "scoped_type_identifier",
    ):
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return _text(node)


def _rust(node: Node) -> list[Found]:
    t = node.type
    if t in ("function_item", "function_signature_item"):
        return _named(node, "function")
    kind = _RUST_SIMPLE.get(t)
    if kind is not None:
        return _named(node, kind)
    if t == "trait_item":
        return _named(node, "trait", node.child_by_field_name("body"))
    if t == "mod_item":
        body = node.child_by_field_name("body")
        return _named(node, "module", body) if body is not None else []
    if t == "impl_item":
        type_node = node.child_by_field_name("type")
        body = node.child_by_field_name("body")
        name_node = type_node
        while name_node is not None and name_node.type != "type_identifier":
            name_node = name_node.child_by_field_name("type") or name_node.child_by_field_name(
                "name"
            )
        return [Found("impl", node, _rust_type_name(type_node), name_node, body, body)]
    return []


FINDERS: dict[str, Finder] = {
    "python": _python,
    "typescript": _js,
    "tsx": _js,
    "javascript": _js,
    "go": _go,
    "java": _java,
    "rust": _rust,
}

# Nodes kept with the definition that follows them (doc comments, attributes).
LEADING_TYPES: dict[str, frozenset[str]] = {
    "python": frozenset({"comment"}),
    "typescript": frozenset({"comment"}),
    "tsx": frozenset({"comment"}),
    "javascript": frozenset({"comment"}),
    "go": frozenset({"comment"}),
    "java": frozenset({"line_comment", "block_comment"}),
    "rust": frozenset({"line_comment", "block_comment", "attribute_item"}),
}

# Node types inside a container body (or the module) that hold more members, per language:
# Java enum bodies; Python's top-level and class-level blocks (`if TYPE_CHECKING:`, `try:`
# imports with a fallback, version checks) whose definitions are as nameable as any other.
_PY_GROUPS = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "block",
    }
)
MEMBER_GROUPS: dict[str, frozenset[str]] = {
    "python": _PY_GROUPS,
    "java": frozenset({"enum_body_declarations"}),
}
