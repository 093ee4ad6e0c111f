"""TypeScript, JavaScript and Go names resolved from tree-sitter parse trees (placeholder)."""

from __future__ import annotations

from pathlib import Path

from code_compass.lsp.resolve_model import Resolution

TREE_LANGUAGES: frozenset[str] = frozenset()


class TreeScopes:
    def __init__(self, root: Path) -> None:
        self.root = root

    def resolve(
        self, rel: str, language: str, text: str, line: int, column: int
    ) -> Resolution | None:
        return None

    def warm(self, rel: str, language: str, text: str) -> None:
        return None
