"""Background embedding: pull pending chunks, split, embed what the cache lacks, add to the store.

The caller supplies `fetch(limit) -> pending chunks` (the catalog's chunks with no vectors yet).
Chunks already in the store are skipped, so a `fetch` that returns the same work twice cannot
make the worker loop. The thread lowers its own scheduling priority (Linux) so the editor and
interactive queries win the CPU; with one intra-op thread (the default on two cores) ONNX
Runtime computes in this thread, so the whole embedding work is deprioritised. After each
round the worker lets the shared cache collect when due (size cap, age limit).

The chunks of a round are split and tokenized on a helper thread, one chunk ahead of the
inference (which lets go of the GIL): that work no longer waits for the model nor the model
for it. With the real model, each piece is tokenized once, while it is counted
(split.model_pieces), and its ids go to the session as they are.

A round that fails (the store's folder gone, the cache locked, the model failing) is retried
with back-off, and the error stays in `progress()` until a round succeeds; if the thread itself
dies, `progress().running` says so and `start()` (every `wake` of the links) starts a new one.
A waiter therefore always has a liveness signal: `running`, `failures` and `last_beat`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from code_compass_server.constants import (
    EMBED_WORKER_BATCH,
    EMBED_WORKER_COUNT_SHARE,
    EMBED_WORKER_FLUSH_S,
    EMBED_WORKER_SAVE_SHARE,
)
from code_compass_server.embed.cache import EmbeddingCache
from code_compass_server.embed.split import model_pieces, model_texts
from code_compass_server.embed.vectors import VectorItem, VectorStore
from code_compass_server.errors import resource_exhaustion
from code_compass_server.records import text_hash

log = logging.getLogger(__name__)

_EMBED_GROUP = 8  # pieces per embed() call: the stop flag is checked between groups (~0.3 s)
_IDLE_POLL_S = 5.0  # re-ask `fetch` this often even without wake()
_RATE_SMOOTHING = 0.3  # weight of the latest batch in the rate's moving average
RETRY_S = 1.0  # first wait after a failed round; doubled per consecutive failure
RETRY_MAX_S = 60.0


@dataclass(frozen=True, slots=True)
class PendingChunk:
    chunk_id: str
    project: str
    path: str
    language: str
    text: str
    start_line: int = 1
    symbol: str = ""  # qualified symbol: read by the model as a header line (split.context_header)
    context: str = ""  # records.Chunk.context: read after the symbol, before every piece


@dataclass(frozen=True, slots=True)
class EmbedProgress:
    done: int  # chunks completed since start()
    total: int  # done + still pending (as reported by `pending`, else known so far)
    rate: float  # chunks/s while busy (moving average)
    eta_s: float | None  # None while the rate is unknown
    running: bool
    idle: bool
    error: str | None
    failures: int = 0  # consecutive failed rounds (0: the last round succeeded)
    last_beat: float = 0.0  # time.monotonic() the worker last showed it was alive


class PieceEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def line_token_counts(self, text: str) -> list[int]: ...


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that takes token ids (embed/model.py's): pieces are tokenized once."""

    def line_token_ids(self, text: str) -> list[list[int]]: ...

    def wrap(self, content: Sequence[int]) -> list[int]: ...

    def embed_token_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A chunk's pieces as the model reads them: texts, their hashes (the cache's keys) and,
    with the real model, their token ids (None: `embed` tokenizes the texts)."""

    texts: list[str]
    hashes: list[str]
    ids: list[list[int]] | None


def _lower_priority() -> None:
    with contextlib.suppress(AttributeError, OSError):  # Linux: per-thread niceness
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def paced_interval(floor_s: float, cost_s: float, share: float) -> float:
    """Seconds of other work between two runs of a periodic task that took `cost_s`: at least
    `floor_s`, and long enough that the task takes at most `share` of the time — its cost
    grows with the index (a save rewrites the whole store, a count walks the backlog), the
    work between two runs does not."""
    return max(floor_s, cost_s * (1 - share) / share)


def save_interval(floor_s: float, last_save_s: float) -> float:
    """Seconds of embedding between two saves of a busy worker (EMBED_WORKER_SAVE_SHARE).
    What a kill loses meanwhile is only the store's rows: the vectors are in the embedding
    cache as soon as they are made, so they come back without the model."""
    return paced_interval(floor_s, last_save_s, EMBED_WORKER_SAVE_SHARE)


class EmbeddingWorker:
    def __init__(
        self,
        fetch: Callable[[int], Sequence[PendingChunk]],
        embedder: PieceEmbedder,
        store: VectorStore,
        cache: EmbeddingCache | None = None,
        *,
        pending: Callable[[], int] | None = None,
        on_done: Callable[[list[str]], None] | None = None,
        batch_size: int = EMBED_WORKER_BATCH,
        flush_interval_s: float = EMBED_WORKER_FLUSH_S,
        low_priority: bool = True,
    ) -> None:
        self._fetch = fetch
        self._embedder = embedder
        self._store = store
        self._cache = cache
        self._pending = pending
        self._on_done = on_done
        self._batch_size = batch_size
        self._flush_interval = flush_interval_s
        self._low_priority = low_priority

        self._stop = threading.Event()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._done = 0
        self._known_pending = 0
        self._counted_at = float("-inf")  # when `pending` was last asked
        self._count_s = 0.0  # how long that took
        self._counted_wake = -1  # the wake() it followed: new work is counted at once
        self._rate = 0.0
        self._error: str | None = None
        self._empty: set[str] = set()  # chunks with nothing to embed (blank text)
        self._last_flush = time.monotonic()
        self._last_save_s = 0.0  # how long the latest save that wrote took
        self._wake_seq = 0  # bumped by wake(): idle is only declared if no wake came meanwhile
        self._failures = 0
        self._beat = time.monotonic()
        self._tokens = embedder if isinstance(embedder, TokenEmbedder) else None
        self._helper: ThreadPoolExecutor | None = None  # splits and tokenizes ahead
        self._helper_lock = threading.Lock()

    # --- control --------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._idle.clear()
        self._beat = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="code-compass-embed", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop promptly (within one small embedding group) and save the store."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._helper_lock:
            helper, self._helper = self._helper, None
        if helper is not None:
            helper.shutdown(wait=False, cancel_futures=True)
        self._store.flush()

    def wake(self) -> None:
        """New work may be pending: check now rather than at the next poll."""
        with self._lock:
            self._wake_seq += 1
        self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once the worker has found nothing left to embed."""
        return self._idle.wait(timeout)

    def progress(self) -> EmbedProgress:
        with self._lock:
            done, rate = self._done, self._rate
            remaining = self._known_pending
        running = self._thread is not None and self._thread.is_alive()
        return EmbedProgress(
            done=done,
            total=done + remaining,
            rate=rate,
            eta_s=(remaining / rate) if rate > 0 else (0.0 if remaining == 0 else None),
            running=running,
            idle=self._idle.is_set(),
            error=self._error,
            failures=self._failures,
            last_beat=self._beat,
        )

    # --- work -----------------------------------------------------------------------------

    def process(self, items: Sequence[PendingChunk]) -> int:
        """Embed and store `items` now, in this thread; returns chunks completed."""
        todo = [
            it
            for it in items
            if not self._store.has(it.chunk_id) and it.chunk_id not in self._empty
        ]
        if not todo:
            return 0
        started = time.monotonic()
        ahead = [self._ahead().submit(self._prepare, it) for it in todo]
        vectors: dict[str, np.ndarray] = {}
        fresh: list[tuple[str, np.ndarray]] = []
        hashes: list[list[str]] = []
        try:
            for future in ahead:
                prep = future.result()
                hashes.append(prep.hashes)
                if self._cache is not None:
                    vectors.update(self._cache.get_many(prep.hashes))
                missing = [
                    i for i, h in enumerate(prep.hashes)
                    if h not in vectors and h not in prep.hashes[:i]
                ]  # fmt: skip
                for g in range(0, len(missing), _EMBED_GROUP):
                    if self._stop.is_set():
                        return 0  # what was embedded is cached (below): nothing is lost
                    group = missing[g : g + _EMBED_GROUP]
                    if prep.ids is not None and self._tokens is not None:
                        vecs = self._tokens.embed_token_ids([prep.ids[i] for i in group])
                    else:
                        vecs = self._embedder.embed([prep.texts[i] for i in group])
                    self._beat = time.monotonic()
                    done = [(prep.hashes[i], v) for i, v in zip(group, vecs, strict=True)]
                    fresh.extend(done)
                    vectors.update(done)
        finally:
            for future in ahead:
                future.cancel()
            if self._cache is not None and fresh:
                self._cache.put_many(fresh)

        rows: list[VectorItem] = []
        completed: list[str] = []
        for it, hs in zip(todo, hashes, strict=True):
            if not hs:
                self._empty.add(it.chunk_id)
            rows.extend(
                VectorItem(it.chunk_id, it.project, it.path, it.language, vectors[h]) for h in hs
            )
            completed.append(it.chunk_id)
        self._store.add(rows)
        if self._on_done is not None:
            self._on_done(completed)
        self._record(len(completed), time.monotonic() - started)
        return len(completed)

    def _ahead(self) -> ThreadPoolExecutor:
        """The helper thread that prepares chunks ahead of the inference."""
        with self._helper_lock:
            if self._helper is None:
                self._helper = ThreadPoolExecutor(
                    1,
                    thread_name_prefix="code-compass-embed-prep",
                    initializer=_lower_priority if self._low_priority else None,
                )
            return self._helper

    def _prepare(self, item: PendingChunk) -> _Prepared:
        if self._tokens is not None:
            pieces = model_pieces(
                item.text, item.start_line, item.symbol, item.language, self._tokens,
                item.context,
            )  # fmt: skip
            texts = [p.text for p in pieces]
            return _Prepared(texts, [text_hash(t) for t in texts], [p.ids for p in pieces])
        texts = self.texts_for(item)
        return _Prepared(texts, [text_hash(t) for t in texts], None)

    def texts_for(self, item: PendingChunk) -> list[str]:
        return model_texts(
            item.text, item.start_line, item.symbol, item.language, self._embedder, item.context
        )

    def _record(self, n: int, seconds: float) -> None:
        with self._lock:
            self._done += n
            self._known_pending = max(0, self._known_pending - n)
            if seconds > 0:
                latest = n / seconds
                a = _RATE_SMOOTHING
                self._rate = latest if self._rate == 0 else a * latest + (1 - a) * self._rate

    def _run(self) -> None:
        if self._low_priority:
            _lower_priority()
        try:
            self._loop()
        except BaseException as exc:  # the thread ends: progress() says so, start() restarts
            log.exception("embedding worker died")
            self._error = f"{type(exc).__name__}: {exc}"
            self._failures += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._beat = time.monotonic()
            with self._lock:
                seq = self._wake_seq
            try:
                busy = self._round()
                if self._cache is not None and not self._stop.is_set():
                    # Here, in the worker's thread: the size cap and age limit hold in a
                    # running server, and no search waits for a collection.
                    self._cache.maybe_gc(run_finished=not busy)
                now = time.monotonic()
                if not busy and not self._stop.is_set():
                    # Caught up: (re)build the approximate index if the rows call for it,
                    # before the idle flag, so `index` returns with it saved.
                    self._store.maintain_index()
                due = save_interval(self._flush_interval, self._last_save_s)
                if not busy or now - self._last_flush >= due:
                    if self._store.flush():
                        self._last_save_s = time.monotonic() - now
                    self._last_flush = time.monotonic()
            except Exception as exc:  # keep the server alive; report it, retry with back-off
                self._failures += 1
                cause = resource_exhaustion(exc)
                if cause is None:
                    log.exception("embedding round failed (%d in a row)", self._failures)
                    self._error = f"{type(exc).__name__}: {exc}"
                else:  # the machine, not the code: one line, no traceback (#32)
                    self._error = f"{cause}: {exc}"
                    log.warning(
                        "embedding round failed (%d in a row): %s", self._failures, self._error
                    )
                self._stop.wait(min(RETRY_MAX_S, RETRY_S * 2 ** (self._failures - 1)))
                continue
            if self._failures:
                self._failures, self._error = 0, None
            if self._stop.is_set():
                break
            if not busy:
                with self._lock:
                    if seq == self._wake_seq:
                        self._idle.set()
                self._wake.wait(_IDLE_POLL_S)
                self._wake.clear()

    def _count_due(self) -> bool:
        """Whether to ask `pending` again: after a wake (new work), else paced — `_record`
        subtracts what is done meanwhile."""
        with self._lock:
            woken = self._wake_seq != self._counted_wake
            self._counted_wake = self._wake_seq
        every = paced_interval(self._flush_interval / 3, self._count_s, EMBED_WORKER_COUNT_SHARE)
        return woken or time.monotonic() - self._counted_at >= every

    def _round(self) -> bool:
        """One fetch + process; False when there was nothing to do."""
        if self._pending is not None and self._count_due():
            t0 = time.monotonic()
            remaining = self._pending()
            self._counted_at = time.monotonic()
            self._count_s = self._counted_at - t0
            with self._lock:
                self._known_pending = remaining
        items = self._fetch(self._batch_size)
        if self._pending is None or not items:
            with self._lock:
                self._known_pending = len(items)
        if not items:
            return False
        # Pending but already stored (a kill between the store's save and the flags): flag
        # them now, or `fetch` would hand them back for ever and hide the rest of the backlog.
        held = [it.chunk_id for it in items if self._store.has(it.chunk_id)]
        if held and self._on_done is not None:
            self._on_done(held)
        return self.process(items) > 0 or bool(held and self._on_done is not None)
