"""Which open documents the server keeps in memory: bounded, and only workspace files.

pygls would keep every `didOpen`ed text for ever. The server keeps a document only when it is
a `file:` URI inside a workspace folder, at most `EDITOR_BUFFER_MAX_CHARS` long, and while all
kept documents stay under `EDITOR_BUFFERS_MAX_TOTAL_CHARS`. Any other document is ignored: it
is never indexed, never published, never in the catalog; for a workspace file over a cap the
disk text stays the truth. A document that grows past a cap is let go the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import EDITOR_BUFFER_MAX_CHARS, EDITOR_BUFFERS_MAX_TOTAL_CHARS
from code_compass_server.lsp.features.documents import document_path


class OpenDocuments:
    """Characters held per open document URI; safe from any thread."""

    def __init__(
        self,
        in_workspace: Callable[[Path], bool],
        max_each: int = EDITOR_BUFFER_MAX_CHARS,
        max_total: int = EDITOR_BUFFERS_MAX_TOTAL_CHARS,
    ) -> None:
        self._in_workspace = in_workspace
        self.max_each = max_each
        self.max_total = max_total
        self._lock = threading.Lock()
        self._sizes: dict[str, int] = {}
        self._total = 0

    def refusal(self, uri: str, size: int) -> str | None:
        """Why a document of `size` characters is not kept (None: keep it, and count it)."""
        path = document_path(uri)
        if path is None:
            return "not a file: URI"
        if not self._in_workspace(path):
            return "outside every workspace folder"
        return self.resize(uri, size)

    def resize(self, uri: str, size: int) -> str | None:
        """Count a kept document's new size; a reason (and it is let go) when over a cap."""
        with self._lock:
            self._total -= self._sizes.pop(uri, 0)
            if size > self.max_each:
                return f"{size:,} characters, over the {self.max_each:,} kept per document"
            if self._total + size > self.max_total:
                return f"open documents would hold over {self.max_total:,} characters"
            self._sizes[uri] = size
            self._total += size
            return None

    def release(self, uri: str) -> None:
        with self._lock:
            self._total -= self._sizes.pop(uri, 0)

    def kept(self, uri: str) -> bool:
        with self._lock:
            return uri in self._sizes
