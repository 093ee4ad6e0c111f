"""The fast path for tree-sitter languages: TypeScript/JavaScript and Go, one parse cache."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.symbols.resolve_model import Resolution
from code_compass_server.symbols.resolve_treecache import TreeFiles
from code_compass_server.symbols.resolve_ts import TypeScriptScopes

TS_LANGUAGES = frozenset({"typescript", "tsx", "javascript"})
TREE_LANGUAGES = TS_LANGUAGES | {"go"}


class TreeScopes:
    """Resolves positions in TypeScript, JavaScript and Go files under one root."""

    def __init__(self, root: Path) -> None:
        self.files = TreeFiles(root)
        self.ts = TypeScriptScopes(self.files)
        self.go: object | None = None

    def resolve(
        self, rel: str, language: str, text: str | None, line: int, column: int
    ) -> Resolution | None:
        if language in TS_LANGUAGES:
            return self.ts.resolve(rel, language, text, line, column)
        if language == "go":
            from code_compass_server.symbols.resolve_go import GoScopes

            if not isinstance(self.go, GoScopes):
                self.go = GoScopes(self.files)
            return self.go.resolve(rel, text, line, column)
        return None

    def warm(self, rel: str, language: str, text: str) -> None:
        self.files.parse(rel, language, text)
