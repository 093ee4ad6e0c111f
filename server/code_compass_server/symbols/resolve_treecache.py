"""tree-sitter parses of workspace files for the resolvers, cached per file version."""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node, Tree

from code_compass_server.constants import TREE_PARSE_CACHE_BYTES
from code_compass_server.index.chunk.treesitter import parser_for
from code_compass_server.index.languages import language_for
from code_compass_server.symbols.stamped_cache import StampedCache

# 64 files of a few kB (date-fns: ~10 MB of trees) cover what a navigation session revisits;
# parsing a small file again costs about a millisecond.
TREE_CACHE_FILES = 64
_NEWLINE = re.compile(b"\n")
# A declaration's doc comment sits above these when the declaration is their first part.
_DOC_WRAPPERS = frozenset(
    {"export_statement", "type_declaration", "var_declaration", "const_declaration",
     "lexical_declaration", "variable_declaration"}
)  # fmt: skip


@dataclass(eq=False, slots=True)
class Parsed:
    rel: str
    language: str
    tree: Tree
    source: bytes
    # Where each line starts in `source` (a line's text is decoded when asked for): a list of
    # line strings cost ~10x more, 13 MB for the 256 date-fns files the cache holds.
    starts: array[int]

    @property
    def module_name(self) -> str:
        return self.rel.rsplit(".", 1)[0].replace("/", ".")

    def text_of(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def line(self, row: int) -> str:
        if not 0 <= row < len(self.starts):
            return ""
        end = self.starts[row + 1] - 1 if row + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[row] : end].decode("utf-8", "replace")

    def position(self, node: Node) -> tuple[int, int]:
        """(0-based row, column in str units) of a node's start."""
        row, byte_col = node.start_point
        text = self.line(row)
        if text.isascii():
            return row, byte_col
        return row, len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def doc_before(self, decl: Node) -> str:
        """The doc comment just above a declaration (JSDoc `/** … */`, Go's `//` lines),
        first paragraph on one line; "" when there is none."""
        node = decl
        while (
            node.parent is not None
            and node.parent.type in _DOC_WRAPPERS
            and node.parent.named_children[0].id == node.id
        ):
            node = node.parent
        lines: list[str] = []
        prev = node.prev_sibling
        end_row = node.start_point[0]
        while prev is not None and prev.type == "comment" and prev.end_point[0] >= end_row - 1:
            text = self.text_of(prev)
            if text.startswith("/*") and not text.startswith("/**"):
                break
            lines[:0] = text.split("\n")
            end_row = prev.start_point[0]
            if text.startswith("/**"):
                break
            prev = prev.prev_sibling
        cleaned = [ln.strip().lstrip("/*").strip().rstrip("*/").strip() for ln in lines]
        para: list[str] = []
        for ln in cleaned:
            if not ln:
                if para:
                    break
                continue
            if ln.startswith("@"):
                break
            para.append(ln)
        return " ".join(para)

    def node_at(self, row: int, column: int) -> Node | None:
        """The smallest named node starting at (row, str column)."""
        text = self.line(row)
        byte_col = column if text.isascii() else len(text[:column].encode("utf-8"))
        node = self.tree.root_node.named_descendant_for_point_range(
            (row, byte_col), (row, byte_col + 1)
        )
        return node


class TreeFiles:
    """Parsed files under one root: open buffers by their text, others from disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: StampedCache[Parsed] = StampedCache(
            root, TREE_CACHE_FILES, TREE_PARSE_CACHE_BYTES
        )

    def parse(self, rel: str, language: str, text: str | None) -> Parsed | None:
        """The parsed file: `text` (an open buffer) or, when None, what is on disk."""
        return self._files.get(rel, text, lambda source: _parse(rel, language, source))

    def load(self, rel: str) -> Parsed | None:
        language = language_for(rel)
        if language is None:
            return None
        return self.parse(rel, language, None)

    def siblings(self, rel: str, suffix: str) -> list[str]:
        """Workspace-relative paths of the files beside `rel` ending in `suffix`."""
        folder = (self.root / rel).parent
        try:
            return sorted(
                p.relative_to(self.root).as_posix() for p in folder.iterdir()
                if p.name.endswith(suffix) and p.is_file()
            )  # fmt: skip
        except OSError:
            return []


def _parse(rel: str, language: str, text: str) -> Parsed:
    source = text.encode("utf-8")
    return Parsed(rel, language, parser_for(language).parse(source), source, line_starts(source))


def line_starts(source: bytes) -> array[int]:
    """The offset of each line's first byte (lines end at b"\n", as `str.split("\n")` cuts)."""
    starts = array("L", [0])
    starts.extend(m.end() for m in _NEWLINE.finditer(source))
    return starts
