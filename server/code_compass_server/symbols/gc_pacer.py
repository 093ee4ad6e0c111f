"""When the cyclic garbage collector walks the parse caches: only while the server is idle.

The resolvers' parse caches hold hundreds of thousands of objects (ast nodes, scopes,
bindings). A full collection walks every one of them (hundreds of ms on a busy machine) and
holds the GIL meanwhile, so whichever request comes next waits for it. Hence what is alive
once a cache has built a parse is frozen (`gc.freeze`, a cheap list splice): automatic
collections skip it from then on and cost only what was allocated since.

Frozen objects are still freed by reference counting, but an evicted parse is cyclic (scopes
point to their parents, bindings to their module). Each tick while no request resolves, the
evicted parses nothing holds any more are freed by a check of their own objects
(`stamped_cache.release_retired`, symbols/evicted.py: milliseconds, not a walk of the heap),
and the heap's free pages go back to the system (`malloc_trim`, at most every
`_TRIM_EVERY_S`). What that cannot free waits for a reclaim: unfreeze, collect, freeze
again. That runs once no request has resolved and no parse was cached for
`idle_s` (at most every `_IDLE_EVERY_S`: it walks the whole heap); and, so memory
stays bounded when requests never pause, between two requests once the caches have evicted
`max_evicted` parses since the last reclaim (a cache's worth), or the heap (pymalloc's blocks
in use) has grown `growth` times past its size after the last reclaim (garbage from
elsewhere). Never while a request is resolving.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
from collections.abc import Callable

from code_compass_server.index.heap import trim_heap
from code_compass_server.symbols.stamped_cache import churn, release_retired

log = logging.getLogger(__name__)

IDLE_S = 3.0  # no request nor parse for this long: the server is idle, a reclaim may run
GROWTH = 4.0  # the heap this many times its size after the last reclaim forces one
_TICK_S = 0.25  # how often the idle check runs
_SIZE_EVERY_S = 10.0  # how often the heap's size is looked at
_IDLE_EVERY_S = 30.0  # idle reclaims at most this often (a request may come meanwhile)
_TRIM_EVERY_S = 10.0  # free heap pages are given back to the system at most this often


class CollectionPacer:
    """Freezes the heap after parses are cached; reclaims the frozen garbage when idle.
    `busy()`: is a request resolving now."""

    def __init__(
        self,
        busy: Callable[[], bool],
        max_evicted: int,  # parses evicted since the last reclaim that force one
        idle_s: float = IDLE_S,
        growth: float = GROWTH,
    ) -> None:
        self._busy = busy
        self.idle_s = idle_s
        self.max_evicted = max_evicted
        self.growth = growth
        self.reclaims = 0  # how many ran (tests, logs)
        self._lock = threading.Lock()
        self._last_activity = time.monotonic()
        self._reclaimed_at = float("-inf")
        self._built = self._evicted = 0  # the caches' churn when last frozen / reclaimed
        self._dirty = False  # frozen since the last reclaim: garbage may be held
        self._after_reclaim = 0  # allocated blocks after the last reclaim (0: none yet)
        self._sized_at = 0.0
        self.released = 0  # evicted parses freed without a collection (tests, logs)
        self._freed_since_trim = 0
        self._trimmed_at = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """A request is resolving: the server is not idle."""
        self._last_activity = time.monotonic()

    def settle(self) -> None:
        """After work that may have cached parses: freeze them out of the collector's walks."""
        built, _ = churn()
        if built == self._built:
            return
        # A reclaim running now freezes at its end; what it misses, the next settle freezes.
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._stop.is_set():
                return
            gc.freeze()
            self._built = built
            self._dirty = True
            self._last_activity = time.monotonic()  # parses come in bursts: not idle yet
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cc-gc-pacer", daemon=True)
                self._thread.start()
        finally:
            self._lock.release()

    def reclaim(self, why: str = "asked") -> None:
        """Collect the frozen heap's garbage (evicted parses), then freeze what survives."""
        with self._lock:
            t0 = time.perf_counter()
            _, self._evicted = churn()
            gc.unfreeze()
            found = gc.collect()
            gc.freeze()
            self._after_reclaim = sys.getallocatedblocks()
            self._dirty = False
            self._reclaimed_at = time.monotonic()
            self.reclaims += 1
            self._freed_since_trim += found
        log.debug(
            "gc reclaim %d (%s): %d unreachable, %d blocks allocated, %.0f ms",
            self.reclaims, why, found, self._after_reclaim, (time.perf_counter() - t0) * 1000,
        )  # fmt: skip

    def close(self) -> None:
        """Stop the thread; a reclaim it is running finishes first."""
        self._stop.set()
        with self._lock:  # settle() creates and starts the thread under it: never half-started
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    def _due(self) -> str:
        """Why a reclaim should run now ("" when it should not). Never while a request is
        resolving: a reclaim walks the whole heap, and the request would wait for it."""
        if not self._dirty or self._busy():
            return ""
        now = time.monotonic()
        # Idle: only when evictions were left to the collector (retired parses are freed
        # without it) or at the first idle moment (what the heap held before).
        left = churn()[1] > self._evicted or self.reclaims == 0
        idle = now - self._last_activity >= self.idle_s
        if left and idle and now - self._reclaimed_at >= _IDLE_EVERY_S:
            return "idle"
        if churn()[1] - self._evicted >= self.max_evicted:
            return "evictions"
        if now - self._sized_at < _SIZE_EVERY_S:
            return ""
        self._sized_at = now
        # The heap's size by pymalloc's count of blocks in use (a counter: counting the
        # frozen objects walks a list of a million, ~25 ms holding the GIL).
        if not self._after_reclaim:
            self._after_reclaim = sys.getallocatedblocks()  # at the first freeze
            return ""
        return "growth" if sys.getallocatedblocks() > self.growth * self._after_reclaim else ""

    def release(self) -> int:
        """Free the evicted parses nothing holds (never while a request resolves); then, when
        something was freed or requests were served, at most every _TRIM_EVERY_S, give the
        heap's free pages back. How many were freed."""
        if self._busy():
            return 0
        freed, waiting = release_retired()
        self.released += freed
        if freed:
            log.debug("%d evicted parses freed (%d in all), %d held", freed, self.released, waiting)
        self._freed_since_trim += freed
        now = time.monotonic()
        # Requests free memory too (answers, searches, acyclic parses evicted): the pages are
        # given back while they come, not only after parses were freed (~1 ms a trim).
        worked = self._last_activity > self._trimmed_at
        if (self._freed_since_trim or worked) and now - self._trimmed_at >= _TRIM_EVERY_S:
            self._trimmed_at = now
            self._freed_since_trim = 0
            trim_heap()
        return freed

    def _run(self) -> None:
        while not self._stop.wait(_TICK_S):
            try:
                self.release()
                why = self._due()
                if why:
                    self.reclaim(why)
            except Exception:  # the pacer must not die: memory would grow unchecked
                log.exception("gc reclaim failed")
