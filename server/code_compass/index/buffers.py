"""Unsaved editor text: for an open document it is the truth, for indexing and for evidence."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path


class EditorBuffers:
    """Absolute path -> text of the open editor buffer; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[Path, str] = {}

    def set(self, abs_path: Path, text: str) -> None:
        with self._lock:
            self._texts[Path(abs_path).absolute()] = text

    def clear(self, abs_path: Path) -> None:
        with self._lock:
            self._texts.pop(Path(abs_path).absolute(), None)

    def get(self, *paths: Path) -> str | None:
        """The first of these spellings of one file that has a buffer."""
        with self._lock:
            for path in paths:
                text = self._texts.get(path)
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
