"""Per-file values (parse trees) kept while the file's version holds, in a small LRU.

A file is read from an open buffer (stamped by its text) or from disk (stamped by mtime and
size); a value built from one version is never served for another. The resolvers of every
language keep their parses here. The LRU is bounded by entries and by the source bytes its
values were built from (a parse costs memory in proportion: ~50x the source for Python's).

A cyclic value (a `cyclic` cache's: Python scopes point to their parents, bindings to their
module) cannot be freed by reference counting once evicted: it is retired, and
`release_retired` (the collection pacer, between requests) frees it with a check of its own
objects (symbols/evicted.py) instead of a full collection.
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
_churn = [0, 0]  # values built, evictions left to the collector: by every cache here
_churn_lock = threading.Lock()
# Evicted cyclic values waiting to be freed: (value, when retired). A value something still
# holds is tried again at the next release; past RETIRED_MAX_S, or beyond RETIRED_MAX values,
# it is left to the collector (counted as an eviction then).
_retired: list[tuple[object, float]] = []
RETIRED_MAX = 1024
RETIRED_MAX_S = 60.0


def churn() -> tuple[int, int]:
    """(values built, evicted values left to the collector) so far by every cache: what the
    collection pacer needs to know (a build leaves new long-lived objects, an eviction it
    could not free cyclic garbage)."""
    with _churn_lock:
        return _churn[0], _churn[1]


def release_retired() -> tuple[int, int]:
    """Free the retired values nothing holds any more: (freed, still waiting). Call it while no
    request resolves: each check holds the GIL for about a microsecond per object."""
    from code_compass_server.symbols.evicted import free_if_unreachable

    with _churn_lock:
        batch = list(_retired)
        _retired.clear()
    freed = 0
    keep: list[tuple[object, float]] = []
    given_up = 0
    now = time.monotonic()
    while batch:
        value, since = batch.pop()
        if free_if_unreachable(value):
            freed += 1
        elif now - since < RETIRED_MAX_S:
            keep.append((value, since))
        else:
            given_up += 1
        del value
    with _churn_lock:
        _retired[:0] = keep  # older first, as they were
        _churn[1] += given_up
        return freed, len(_retired)


def _retire(values: list[object]) -> None:
    with _churn_lock:
        now = time.monotonic()
        _retired.extend((v, now) for v in values)
        over = len(_retired) - RETIRED_MAX
        if over > 0:
            del _retired[:over]
            _churn[1] += over


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
    """Values built from files under one root, each kept with the stamp it was built from.
    At most `entries` values, and values built from at most `max_bytes` of source (the most
    recent one is kept whatever its size). `cyclic`: evicted values are retired (see the
    module's docstring); else they must be acyclic (tree-sitter parses are), freed when the
    last reference goes."""

    def __init__(
        self, root: Path, entries: int, max_bytes: int | None = None, *, cyclic: bool = False
    ) -> None:
        self.root = root
        self.entries = entries
        self.max_bytes = max_bytes
        self.cyclic = cyclic
        # rel -> (the versions known to hold this content, the value built from it, the
        # source length it was built from)
        self._cache: OrderedDict[str, tuple[tuple[object, ...], T | None, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def size(self) -> tuple[int, int]:
        """(values held, the source bytes they were built from)."""
        with self._lock:
            return len(self._cache), self._bytes

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
                    self._cache[rel] = ((*hit[0][-3:], stamp), hit[1], hit[2])
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
        size = len(text)
        out: list[object] = []
        with self._lock:
            old = self._cache.pop(rel, None)
            if old is not None:  # an older version of the file: evicted as well
                self._bytes -= old[2]
                out.append(old[1])
            self._cache[rel] = (stamps, value, size)
            self._bytes += size
            while len(self._cache) > self.entries or (
                self.max_bytes is not None and self._bytes > self.max_bytes and len(self._cache) > 1
            ):
                _, (_, gone, gone_size) = self._cache.popitem(last=False)
                self._bytes -= gone_size
                out.append(gone)
        evicted = [v for v in out if v is not None]
        del out, old
        with _churn_lock:
            _churn[0] += 1  # an acyclic value evicted is freed by reference counting: no garbage
        if self.cyclic and evicted:
            _retire(evicted)
        return value
