"""Per-file values (parse trees) kept while the file's version holds, in a small LRU.

A file is read from an open buffer (stamped by its text) or from disk (stamped by mtime and
size); a value built from one version is never served for another. The resolvers of every
language keep their parses here.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


# What building costs (a parse and a walk of the tree), per byte of source, on a busy machine:
# a file expected to finish past the deadline is not started.
BUILD_S_PER_BYTE = 1e-6
_limits = threading.local()  # this thread's build deadline, and whether it refused a build
_churn = [0, 0]  # values built, values evicted: by every cache in this process
_churn_lock = threading.Lock()


def churn() -> tuple[int, int]:
    """(values built, values evicted) so far by every cache: what the collection pacer needs
    to know (a build leaves new long-lived objects, an eviction cyclic garbage)."""
    with _churn_lock:
        return _churn[0], _churn[1]


def text_stamp(text: str) -> tuple[str, int, int]:
    return ("text", len(text), hash(text))


def file_stamp(root: Path, rel: str, text: str | None) -> object | None:
    """The version of a file: its buffer's text, else its size and time on disk (None when
    it cannot be read)."""
    if text is not None:
        return text_stamp(text)
    try:
        st = (root / rel).stat()
    except OSError:
        return None
    return ("disk", st.st_mtime_ns, st.st_size)


@contextlib.contextmanager
def build_until(deadline: float | None = None, max_bytes: int | None = None) -> Iterator[None]:
    """Within: a value not cached yet is built only when it can be done by `deadline`
    (perf_counter, estimated from the file's size) and the file has at most `max_bytes`;
    else `get` answers None, as for a file it cannot read, so a request's budget holds (a
    parse cannot be interrupted, and holds the GIL). `refused()` says whether that happened."""
    _limits.deadline, _limits.max_bytes, _limits.refused = deadline, max_bytes, False
    try:
        yield
    finally:
        _limits.deadline = _limits.max_bytes = None


def refused() -> bool:
    """Did a `get` in this thread's `build_until` refuse to build since the last call?"""
    was = bool(getattr(_limits, "refused", False))
    _limits.refused = False
    return was


class StampedCache(Generic[T]):
    """Values built from files under one root, each kept with the stamp it was built from."""

    def __init__(self, root: Path, entries: int) -> None:
        self.root = root
        self.entries = entries
        # rel -> (the versions known to hold this content, the value built from it)
        self._cache: OrderedDict[str, tuple[tuple[object, ...], T | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rel: str, text: str | None, build: Callable[[str], T | None]) -> T | None:
        """The value for `rel`: built from `text` (an open buffer) or from what is on disk
        (None when the file cannot be read); rebuilt when the version changed."""
        stamp = file_stamp(self.root, rel, text)
        if stamp is None:
            return None
        with self._lock:
            hit = self._cache.get(rel)
            if hit is not None and stamp in hit[0]:
                self._cache.move_to_end(rel)
                return hit[1]
        stamps: tuple[object, ...] = (stamp,)
        if text is None and hit is not None:
            # An open buffer's parse, asked for from disk (another file's import reaches
            # it): the same text on disk is the same value; reparsing it each time the
            # editor's and the disk's reads alternate cost a hover 100+ ms.
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            content = text_stamp(text)
            stamps = (stamp, content)
            with self._lock:
                hit = self._cache.get(rel)
                if hit is not None and content in hit[0]:
                    self._cache[rel] = ((*hit[0][-3:], stamp), hit[1])
                    self._cache.move_to_end(rel)
                    return hit[1]
        deadline = getattr(_limits, "deadline", None)
        max_bytes = getattr(_limits, "max_bytes", None)
        if deadline is not None or max_bytes is not None:
            size = len(text) if text is not None else stamp[2]  # type: ignore[index]
            late = deadline is not None and time.perf_counter() + size * BUILD_S_PER_BYTE > deadline
            if late or (max_bytes is not None and size > max_bytes):
                _limits.refused = True
                return None
        if text is None:
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            stamps = (stamp, text_stamp(text))  # an open buffer with this text: same value
        value = build(text)
        evicted = 0
        with self._lock:
            self._cache[rel] = (stamps, value)
            self._cache.move_to_end(rel)
            while len(self._cache) > self.entries:
                self._cache.popitem(last=False)
                evicted += 1
        with _churn_lock:
            _churn[0] += 1
            _churn[1] += evicted
        return value
