"""Source code to chunks and symbols with tree-sitter.

Layout of the chunks of one file (every non-blank line lands in at least one):
- a leaf definition (function, method, struct, ...) is one chunk from its leading
  comments/decorators/attributes to its end, split with overlap when long;
- a container (class, impl, trait, ...) with member definitions gets a header chunk
  (leading comments, signature, docstring, fields up to the first member) and each
  member its own chunk; members' closing braces join the chunk just before them;
- what is left (imports, module-level code, fields between methods) goes in
  overlapping line windows, kind "module" (or the container's kind inside one).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from code_compass_server.constants import (
    CODE_MAX_NESTING,
    CODE_WINDOW_LINES,
    CODE_WINDOW_OVERLAP,
    MAX_SYMBOL_CHUNK_LINES,
    SIGNATURE_MAX_CHARS,
    SYMBOL_DOC_MAX_CHARS,
    SYMBOL_SPLIT_OVERLAP,
)
from code_compass_server.index.chunk.context import (
    MODULE_CONTEXT,
    container_context,
    first_member,
    is_bare_header,
    join_context,
    member_list,
    members_of,
    module_summary,
)
from code_compass_server.index.chunk.lines import (
    is_blank,
    line_windows,
    make_chunk,
    non_blank_windows,
)
from code_compass_server.index.chunk.treesitter import (
    FINDERS,
    LEADING_TYPES,
    MEMBER_GROUPS,
    Found,
    parser_for,
)
from code_compass_server.records import Chunk, ParsedFile, SymbolDef

# Lines that only close something: they join the chunk right before them.
# Containers whose functions stay functions (not methods).
_NAMESPACE_KINDS = frozenset({"module", "namespace"})
_CLOSING_LINE = re.compile(r"^\s*[)\]}>;,]*\s*(?:end)?[)\]}>;,]*\s*$")
_LEADING_DECORATORS = re.compile(r"^(?:@[\w.]+(?:\([^()]*\))?\s*)+")
_PY_STRING_PREFIX = re.compile(r"^[rRuUbBfF]{0,2}(\"\"\"|'''|\"|')")
_COMMENT_MARKERS = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!/)|///?!?|#+!?|--)?\s?")


@dataclass(slots=True)
class _Def:
    kind: str
    name: str
    container: str  # qualified name of the enclosing container, "" at top level
    start: int  # 1-based, leading comments/decorators included
    end: int
    name_line: int
    name_col: int
    signature: str
    doc: str
    parent: int  # index in the defs list, -1 at top level
    first_child_start: int = 0  # 0: no member definitions
    chunk: bool = True  # False: a value, in the symbol table but not a chunk of its own

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


def _end_line(node: Node) -> int:
    """1-based last line; a node ending at column 0 ends on the line before."""
    row, col = node.end_point
    start_row = node.start_point[0]
    if col == 0 and row > start_row:
        return row
    return row + 1


class _FileParser:
    def __init__(self, rel: str, source: bytes, lines: Sequence[str], language: str) -> None:
        self.rel = rel
        self.src = source
        self.lines = lines
        self.language = language
        self.finder = FINDERS[language]
        self.leading = LEADING_TYPES[language]
        self.groups = MEMBER_GROUPS.get(language, frozenset())
        self.defs: list[_Def] = []

    # -- text helpers --------------------------------------------------------

    def _slice(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8", errors="replace")

    def _char_col(self, node: Node) -> int:
        _row, byte_col = node.start_point
        line_start = node.start_byte - byte_col
        return len(self.src[line_start : node.start_byte].decode("utf-8", errors="replace"))

    def _signature(self, found: Found) -> str:
        decl = found.decl
        end = found.body.start_byte if found.body is not None else decl.end_byte
        text = self._slice(decl.start_byte, min(end, decl.start_byte + 4 * SIGNATURE_MAX_CHARS))
        if found.body is None:
            brace = text.find("{")  # Go types, Rust structs: stop at the field list
            if brace > 0:
                text = text[:brace]
        if decl.type in ("type_spec", "type_declaration"):
            text = text if text.startswith("type") else "type " + text
        text = " ".join(text.split())
        text = _LEADING_DECORATORS.sub("", text).rstrip(" :;{=>")
        return text[:SIGNATURE_MAX_CHARS]

    def _python_docstring(self, found: Found) -> str:
        block = found.body
        if block is None or block.named_child_count == 0:
            return ""
        return self._docstring_of(block.named_children[0])

    def module_docstring(self, root: Node) -> str:
        """A Python module's docstring ("" for other languages or none)."""
        if self.language != "python" or root.named_child_count == 0:
            return ""
        return self._docstring_of(root.named_children[0])

    def _docstring_of(self, first: Node) -> str:
        if first.type != "expression_statement" or first.named_child_count == 0:
            return ""
        string = first.named_children[0]
        if string.type != "string":
            return ""
        raw = self._slice(string.start_byte, string.end_byte)
        m = _PY_STRING_PREFIX.match(raw)
        if m is None:
            return ""
        quote = m.group(1)
        body = raw[m.end() :]
        if body.endswith(quote):
            body = body[: -len(quote)]
        return inspect.cleandoc(body)[:SYMBOL_DOC_MAX_CHARS]

    def _comment_doc(self, comments: list[Node]) -> str:
        out: list[str] = []
        for node in comments:
            if node.type == "attribute_item":
                continue
            for line in self._slice(node.start_byte, node.end_byte).split("\n"):
                cleaned = _COMMENT_MARKERS.sub("", line, count=1).rstrip()
                if cleaned.endswith("*/"):
                    cleaned = cleaned[:-2].rstrip()
                out.append(cleaned)
        return "\n".join(out).strip()[:SYMBOL_DOC_MAX_CHARS]

    # -- walking -------------------------------------------------------------

    def walk(self, parent: Node, container: str, parent_index: int, depth: int) -> None:
        children = parent.named_children
        for i, child in enumerate(children):
            if child.type in self.groups:
                self.walk(child, container, parent_index, depth)
                continue
            found_list = self.finder(child)
            if not found_list:
                continue
            # Leading comments/attributes: siblings directly above, no blank line between.
            leading: list[Node] = []
            top_row = child.start_point[0]
            j = i - 1
            while j >= 0 and children[j].type in self.leading:
                candidate = children[j]
                if _end_line(candidate) < top_row:
                    break
                before = children[j - 1] if j > 0 else None
                if (
                    before is not None
                    and before.type not in self.leading
                    and before.end_point[0] == candidate.start_point[0]
                ):
                    break  # a trailing comment of the statement before
                leading.insert(0, candidate)
                top_row = candidate.start_point[0]
                j -= 1
            single = len(found_list) == 1
            for found in found_list:
                self._add(found, child, leading if single else [], container, parent_index, depth)

    def _add(
        self,
        found: Found,
        node: Node,
        leading: list[Node],
        container: str,
        parent_index: int,
        depth: int,
    ) -> None:
        outer = found.outer if found.outer is not None else node
        start_node = leading[0] if leading else outer
        kind = found.kind
        if found.container:
            container = found.container
        in_type = parent_index >= 0 and self.defs[parent_index].kind not in _NAMESPACE_KINDS
        if kind == "function" and in_type:
            kind = "method"
        elif kind in ("variable", "constant") and in_type:
            kind = "attribute"
        name_node = found.name_node or found.decl
        doc = ""
        if self.language == "python":
            doc = self._python_docstring(found)
        if not doc and leading:
            doc = self._comment_doc(leading)
        d = _Def(
            kind=kind,
            name=found.name or ("default" if node.type == "export_statement" else "<anonymous>"),
            container=container,
            start=start_node.start_point[0] + 1,
            end=_end_line(outer),
            name_line=name_node.start_point[0] + 1,
            name_col=self._char_col(name_node),
            signature=self._signature(found),
            doc=doc,
            parent=parent_index,
            chunk=found.chunk,
        )
        index = len(self.defs)
        self.defs.append(d)
        if d.chunk and parent_index >= 0 and self.defs[parent_index].first_child_start == 0:
            self.defs[parent_index].first_child_start = d.start
        if found.members is not None and depth < CODE_MAX_NESTING:
            self.walk(found.members, d.qualified, index, depth + 1)


def _symbol_defs(defs: list[_Def], rel: str, language: str) -> list[SymbolDef]:
    return [
        SymbolDef(
            name=d.name,
            kind=d.kind,
            container=d.container,
            path=rel,
            start_line=d.start,
            end_line=d.end,
            name_line=d.name_line,
            name_col=d.name_col,
            signature=d.signature,
            language=language,
        )
        for d in defs
    ]


@dataclass(slots=True)
class _Item:
    start: int
    end: int
    kind: str
    symbol: str
    signature: str
    doc: str
    context: str = ""


class _ChunkList:
    """Chunks under construction, with the lines they cover."""

    def __init__(self, n_lines: int) -> None:
        self.items: list[_Item] = []
        self.covered = bytearray(n_lines + 2)
        self.ends_at: dict[int, int] = {}  # end line -> index of the chunk ending there

    def add(
        self,
        start: int,
        end: int,
        kind: str,
        symbol: str,
        sig: str = "",
        doc: str = "",
        context: str = "",
    ) -> None:
        self.ends_at[end] = len(self.items)
        self.items.append(_Item(start, end, kind, symbol, sig, doc, context))
        self.covered[start : end + 1] = b"\x01" * (end - start + 1)

    def add_split(
        self, start: int, end: int, kind: str, symbol: str, sig: str, doc: str, context: str = ""
    ) -> None:
        if end - start + 1 <= MAX_SYMBOL_CHUNK_LINES:
            self.add(start, end, kind, symbol, sig, doc, context)
            return
        first = True
        # Every piece after the first repeats the definition's signature (and its class, in
        # `context`): a piece of a long method otherwise reads as code of nowhere.
        rest = join_context(context, sig)
        for s, e in line_windows(start, end, MAX_SYMBOL_CHUNK_LINES, SYMBOL_SPLIT_OVERLAP):
            if first:
                self.add(s, e, kind, symbol, sig, doc, context)
            else:
                self.add(s, e, kind, symbol, "", "", rest)
            first = False

    def extend(self, index: int, new_end: int) -> None:
        item = self.items[index]
        old_end = item.end
        self.ends_at.pop(old_end, None)
        item.end = new_end
        self.ends_at[new_end] = index
        self.covered[old_end + 1 : new_end + 1] = b"\x01" * (new_end - old_end)


def _build_chunks(
    rel: str, lines: Sequence[str], language: str, defs: list[_Def], module_doc: str = ""
) -> list[Chunk]:
    n = len(lines)
    chunks = _ChunkList(n)
    owner = [-1] * (n + 2)  # innermost container per line, for leftover windows
    members = members_of(defs)
    # A bare container header (its signature and nothing else) is no chunk of its own: its
    # lines open the chunk of its first member, which then carries the member list.
    absorbed: dict[int, tuple[int, str]] = {}  # def index -> (start line, member list)
    for index, d in enumerate(defs):
        start, end = max(1, d.start), min(n, d.end)
        if start > end or not d.chunk:
            continue
        outer = defs[d.parent] if d.parent >= 0 else None
        context = container_context(outer, module_doc)
        taken = absorbed.pop(index, None)
        if taken is not None:
            start = min(start, taken[0])
            context = join_context(context, taken[1])
        if d.first_child_start:
            owner[start : end + 1] = [index] * (end - start + 1)
            header_end = min(end, d.first_child_start - 1)
            listing = member_list(defs, members.get(index, []))
            first = first_member(defs, members.get(index, []))
            if header_end >= start and is_bare_header(lines, start, header_end, d.doc) and first:
                absorbed[first] = (start, join_context(context, listing))
            elif header_end >= start:
                chunks.add_split(
                    start,
                    header_end,
                    d.kind,
                    d.qualified,
                    d.signature,
                    d.doc,
                    join_context(context, listing),
                )
            continue
        if all(chunks.covered[start : end + 1]):
            continue  # several definitions on one line
        chunks.add_split(start, end, d.kind, d.qualified, d.signature, d.doc, context)

    # Leftovers: runs of uncovered lines with the same owner.
    line = 1
    while line <= n:
        if chunks.covered[line]:
            line += 1
            continue
        run_owner = owner[line]
        run_end = line
        while (
            run_end + 1 <= n and not chunks.covered[run_end + 1] and owner[run_end + 1] == run_owner
        ):
            run_end += 1
        _leftover(chunks, lines, line, run_end, run_owner, defs)
        line = run_end + 1

    items = sorted(chunks.items, key=lambda it: (it.start, it.end))
    return [
        make_chunk(
            rel,
            lines,
            it.start,
            it.end,
            language,
            it.kind,
            it.symbol,
            it.signature,
            it.doc,
            it.context,
        )
        for it in items
    ]


def _leftover(
    chunks: _ChunkList, lines: Sequence[str], start: int, end: int, owner: int, defs: list[_Def]
) -> None:
    last = end
    while last >= start and is_blank(lines[last - 1]):
        last -= 1
    if last < start:
        return  # blank lines only
    before = chunks.ends_at.get(start - 1)
    if before is not None and all(
        _CLOSING_LINE.match(lines[i - 1]) for i in range(start, last + 1)
    ):
        chunks.extend(before, last)  # closing braces of the definition just above
        return
    kind, symbol = ("module", "") if owner < 0 else (defs[owner].kind, defs[owner].qualified)
    for s, e in non_blank_windows(lines, start, end, CODE_WINDOW_LINES, CODE_WINDOW_OVERLAP):
        chunks.add(s, e, kind, symbol)


def parse_code(rel: str, text: str, lines: Sequence[str], language: str) -> ParsedFile:
    """Chunks and symbols of a source file in one of the tree-sitter languages."""
    source = text.encode("utf-8", errors="surrogatepass")
    tree = parser_for(language).parse(source)
    parser = _FileParser(rel, source, lines, language)
    parser.walk(tree.root_node, "", -1, 0)
    defs = parser.defs
    module_doc = module_summary(parser.module_docstring(tree.root_node)) if MODULE_CONTEXT else ""
    return ParsedFile(
        chunks=_build_chunks(rel, lines, language, defs, module_doc),
        symbols=_symbol_defs(defs, rel, language),
    )
