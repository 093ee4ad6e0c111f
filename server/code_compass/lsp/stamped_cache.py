"""Per-file values (parse trees) kept while the file's version holds, in a small LRU.

A file is read from an open buffer (stamped by its text) or from disk (stamped by mtime and
size); a value built from one version is never served for another. The resolvers of every
language keep their parses here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def text_stamp(text: str) -> tuple[str, int, int]:
    return ("text", len(text), hash(text))


class StampedCache(Generic[T]):
    """Values built from files under one root, each kept with the stamp it was built from."""

    def __init__(self, root: Path, entries: int) -> None:
        self.root = root
        self.entries = entries
        self._cache: OrderedDict[str, tuple[object, T | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rel: str, text: str | None, build: Callable[[str], T | None]) -> T | None:
        """The value for `rel`: built from `text` (an open buffer) or from what is on disk
        (None when the file cannot be read); rebuilt when the version changed."""
        if text is not None:
            stamp: object = text_stamp(text)
        else:
            try:
                st = (self.root / rel).stat()
            except OSError:
                return None
            stamp = ("disk", st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._cache.get(rel)
            if hit is not None and hit[0] == stamp:
                self._cache.move_to_end(rel)
                return hit[1]
        if text is None:
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        value = build(text)
        with self._lock:
            self._cache[rel] = (stamp, value)
            self._cache.move_to_end(rel)
            while len(self._cache) > self.entries:
                self._cache.popitem(last=False)
        return value
