"""Unsaved editor text: for an open document it is the truth, for indexing and for evidence.

Memory is bounded: one buffer over `max_each` characters, or one that would take all buffers
over `max_total`, is not kept (the disk text stays the truth for that document).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import EDITOR_BUFFER_MAX_CHARS, EDITOR_BUFFERS_MAX_TOTAL_CHARS


def _key(path: Path) -> Path:
    # normpath: `root/../outside/x.py` is outside root, whatever exists on disk
    return Path(os.path.normpath(Path(path).absolute()))


class EditorBuffers:
    """Absolute path -> text of the open editor buffer; safe from any thread."""

    def __init__(
        self,
        max_each: int = EDITOR_BUFFER_MAX_CHARS,
        max_total: int = EDITOR_BUFFERS_MAX_TOTAL_CHARS,
    ) -> None:
        self._lock = threading.Lock()
        self._texts: dict[Path, str] = {}
        self._total = 0
        self.max_each = max_each
        self.max_total = max_total

    def set(self, abs_path: Path, text: str) -> bool:
        """Keep `text` as the buffer of `abs_path`; False (and no buffer) when over a cap."""
        key = _key(abs_path)
        with self._lock:
            old = self._texts.pop(key, None)
            if old is not None:
                self._total -= len(old)
            if len(text) > self.max_each or self._total + len(text) > self.max_total:
                return False
            self._texts[key] = text
            self._total += len(text)
            return True

    def clear(self, abs_path: Path) -> None:
        with self._lock:
            old = self._texts.pop(_key(abs_path), None)
            if old is not None:
                self._total -= len(old)

    def get(self, *paths: Path) -> str | None:
        """The first of these spellings of one file that has a buffer."""
        with self._lock:
            for path in paths:
                text = self._texts.get(path)
                if text is None:
                    text = self._texts.get(_key(path))
                if text is not None:
                    return text
        return None

    def overlay(self, root: Path) -> Callable[[str], str | None]:
        """rel path -> buffer text under `root`, for the indexer."""

        def text_for(rel: str) -> str | None:
            if not self._texts:  # no editor here (a CLI run): skip building the path per file
                return None
            return self.get((root / rel).absolute())

        return text_for
