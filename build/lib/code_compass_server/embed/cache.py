"""Embedding cache: text hash (+ model id) -> vector, in SQLite, shared by every file and branch.

Keyed by the content hash of the exact text embedded, so a renamed file, a branch switch back
and forth or an undo never costs a second embedding. Entries outlive the files they came from;
`gc()` drops entries unused for EMBED_CACHE_KEEP_DAYS and then the least recently used beyond
EMBED_CACHE_MAX_ENTRIES. The embedding worker calls `maybe_gc()` after each round, in its own
thread, so the cap holds in a running server without a search ever waiting for a collection.

Several processes (two editor windows) may share the file: WAL lets readers go on during a
write, writers take the lock up front (`BEGIN IMMEDIATE`) and wait up to _BUSY_TIMEOUT_MS for
one another, a collection deletes in small transactions, and the time of the last collection
is kept in the file so that two processes do not both collect within _GC_INTERVAL_S.

The cache is disposable: a file SQLite finds damaged (on open or on any later read or write) is
deleted and created again empty, and `recreated` says why; its vectors are computed again.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from code_compass_server.constants import EMBED_CACHE_KEEP_DAYS, EMBED_CACHE_MAX_ENTRIES, EMBED_DIMS

log = logging.getLogger(__name__)

_DAY = 86_400
_SQLITE_VARS = 500  # stay under SQLite's host-parameter limit
_BUSY_TIMEOUT_MS = 5_000  # another process writing: wait this long before giving up
_GC_INTERVAL_S = 3_600.0  # the age limit is checked this often (by any process sharing the file)
_GC_MARGIN = 0.10  # during a run, collect once the cap is exceeded by this share
_QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024
_UNIT_TOLERANCE = 1e-3  # a cached vector further than this from length 1 is damaged
_GC_STEP = 2_000  # rows deleted per transaction: other writers never wait for a whole collection


class EmbeddingCache:
    """Thread-safe; one connection guarded by a lock (lookups are fast, writes batched).

    `keep_days` and `max_entries` default to EMBED_CACHE_KEEP_DAYS and EMBED_CACHE_MAX_ENTRIES
    as they are when the cache is opened.
    """

    def __init__(
        self,
        path: Path,
        model_id: str,
        dims: int = EMBED_DIMS,
        *,
        keep_days: int | None = None,
        max_entries: int | None = None,
        unit_vectors: bool = False,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The vectors are normalised (the model's are): one that is not was damaged on disk.
        self.unit_vectors = unit_vectors
        self.path = path
        self.model_id = model_id
        self.dims = dims
        self.keep_days = EMBED_CACHE_KEEP_DAYS if keep_days is None else keep_days
        self.max_entries = EMBED_CACHE_MAX_ENTRIES if max_entries is None else max_entries
        self._lock = threading.Lock()
        self._gc_running = threading.Lock()  # one collection at a time per process
        self.recreated = ""  # why the file was found damaged and replaced ("" if never)
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
            self._db = self._replace(exc)
        # Upper bound on the row count without a COUNT(*) per batch: the count at the last
        # collection (or open) plus every row written since (a replaced row counts twice).
        self._estimate = self.count()
        self._next_gc_check = 0.0  # monotonic; 0 = look at the file's last collection time

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            str(self.path),
            check_same_thread=False,
            isolation_level=None,
            timeout=_BUSY_TIMEOUT_MS / 1000,
        )
        try:
            _prepare(db)
            db.execute("SELECT COUNT(*) FROM vectors").fetchone()
            # quick_check reads every page: only while that is cheap; damage in a bigger file
            # is found by the read that meets it (_recover).
            if self.path.stat().st_size <= _QUICK_CHECK_MAX_BYTES:
                (verdict,) = db.execute("PRAGMA quick_check").fetchone()
                if verdict != "ok":
                    raise sqlite3.DatabaseError(f"database disk image is malformed ({verdict})")
        except BaseException:
            db.close()
            raise
        return db

    def _replace(self, exc: BaseException) -> sqlite3.Connection:
        """The file is damaged: delete it (and its journal) and start an empty one."""
        log.warning("embedding cache %s is damaged (%s); starting a new one", self.path, exc)
        self.recreated = f"embedding cache damaged ({exc}); recreated"
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        return self._connect()

    def _recover(self, exc: sqlite3.DatabaseError) -> bool:
        """Replace a cache found damaged while in use; False if the error is not damage.
        The caller holds self._lock."""
        if not _damaged(exc):
            return False
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self._db = self._replace(exc)
        self._estimate = 0
        return True

    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `hashes` (marks them used today); none if the file turns
        out damaged (it is replaced)."""
        try:
            return self._get_many(hashes)
        except sqlite3.DatabaseError as exc:
            with self._lock:
                if not self._recover(exc):
                    raise
            return {}

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors; a damaged file is replaced and the vectors go into the new one."""
        batch = list(items)
        try:
            self._put_many(batch)
        except sqlite3.DatabaseError as exc:
            with self._lock:
                if not self._recover(exc):
                    raise
            self._put_many(batch)

    def _get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        today = _today()
        with self._lock:
            for part in _parts(unique):
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    "SELECT hash, vec, last_used FROM vectors"
                    f" WHERE model_id = ? AND hash IN ({marks})",
                    [self.model_id, *part],
                ).fetchall()
                stale, damaged = [], []
                for h, blob, used in rows:
                    vec = _checked_vector(blob, self.dims, unit=self.unit_vectors)
                    if vec is None:  # damaged in place (SQLite has no checksums): redo it
                        damaged.append(h)
                        continue
                    found[h] = vec
                    if used < today:
                        stale.append(h)
                if damaged:
                    self._drop_damaged(damaged)
                if stale:  # touch at day granularity: reads stay reads most of the time
                    self._db.executemany(
                        "UPDATE vectors SET last_used = ? WHERE model_id = ? AND hash = ?",
                        [(today, self.model_id, h) for h in stale],
                    )
        return found

    def _drop_damaged(self, hashes: list[str]) -> None:
        """Delete rows whose vector is not a unit vector; the caller holds self._lock."""
        log.warning("embedding cache %s: %d damaged entries dropped", self.path, len(hashes))
        self.recreated = f"embedding cache: {len(hashes)} damaged entries dropped"
        with self._write():
            self._db.executemany(
                "DELETE FROM vectors WHERE model_id = ? AND hash = ?",
                [(self.model_id, h) for h in hashes],
            )

    def _put_many(self, items: list[tuple[str, np.ndarray]]) -> None:
        today = _today()
        rows = [
            (self.model_id, h, np.asarray(v, dtype=np.float32).tobytes(), today) for h, v in items
        ]
        if not rows:
            return
        with self._lock, self._write():
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._estimate += len(rows)

    def count(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(n)

    def maybe_gc(self, *, run_finished: bool = False) -> int:
        """Collect when it is due; returns how many entries were removed.

        Due when the cap is exceeded by _GC_MARGIN (or at all once `run_finished`: the worker
        has nothing left to embed), or when no process sharing the file has collected for
        _GC_INTERVAL_S (entries age out even if the cache never grows). Call it from a
        background thread; an error (a database held by another process past the busy
        timeout) is logged and retried at the next call.
        """
        over = self._estimate > self.max_entries * (1 + _GC_MARGIN) or (
            run_finished and self._estimate > self.max_entries
        )
        if not over and time.monotonic() < self._next_gc_check:
            return 0
        try:
            if not over and not self._interval_passed():
                return 0
            return self.gc()
        except sqlite3.Error as exc:
            log.warning("embedding cache collection skipped: %s", exc)
            return 0

    def gc(
        self,
        keep_days: int | None = None,
        max_entries: int | None = None,
        now: float | None = None,
    ) -> int:
        """Drop old entries (any model) and bound the size; returns how many were removed."""
        keep = self.keep_days if keep_days is None else keep_days
        cap = self.max_entries if max_entries is None else max_entries
        cutoff = _today(now) - keep
        with self._gc_running:
            removed = self._delete_steps(
                "SELECT model_id, hash FROM vectors WHERE last_used < ? LIMIT ?", (cutoff,), None
            )
            excess = max(0, self.count() - cap)
            removed += self._delete_steps(
                "SELECT model_id, hash FROM vectors ORDER BY last_used LIMIT ?", (), excess
            )
            with self._lock, self._write():
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('last_gc', ?)",
                    (time.time() if now is None else now,),
                )
                (n,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
                self._estimate = int(n)
            self._next_gc_check = time.monotonic() + _GC_INTERVAL_S
        if removed:
            log.info("embedding cache: %d entries removed, %d kept", removed, self._estimate)
        return removed

    def _delete_steps(self, select: str, args: tuple[int, ...], limit: int | None) -> int:
        """Delete the rows `select` names, _GC_STEP per transaction (all of them if no limit)."""
        removed = 0
        while limit is None or removed < limit:
            step = _GC_STEP if limit is None else min(_GC_STEP, limit - removed)
            with self._lock, self._write():
                n = self._db.execute(
                    f"DELETE FROM vectors WHERE (model_id, hash) IN ({select})", (*args, step)
                ).rowcount
            removed += n
            if n < step:
                break
        return removed

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction, the lock taken up front so the busy timeout applies to it
        (a deferred transaction that turns into a write fails at once when another process
        writes). The caller holds self._lock."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _interval_passed(self) -> bool:
        """True when no process has collected for _GC_INTERVAL_S; else wait until it has."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'last_gc'").fetchone()
        age = time.time() - float(row[0]) if row else _GC_INTERVAL_S
        if age >= _GC_INTERVAL_S:
            return True
        self._next_gc_check = time.monotonic() + (_GC_INTERVAL_S - age)
        return False

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _today(now: float | None = None) -> int:
    return int((time.time() if now is None else now) // _DAY)


def _parts(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _SQLITE_VARS):
        yield items[i : i + _SQLITE_VARS]


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """Damage, as opposed to a busy database (another process writing: retried later)."""
    text = str(exc).lower()
    return not isinstance(exc, sqlite3.OperationalError) or any(
        word in text for word in ("malformed", "not a database", "disk i/o", "no such table")
    )


def _prepare(db: sqlite3.Connection) -> None:
    db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS vectors ("
        " model_id TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,"
        " last_used INTEGER NOT NULL, PRIMARY KEY (model_id, hash)) WITHOUT ROWID"
    )
    db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (last_used)")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value REAL NOT NULL)")


def _checked_vector(blob: bytes, dims: int, *, unit: bool) -> np.ndarray | None:
    """The stored vector, or None unless it is `dims` finite floats (of length ~1 if `unit`:
    random bytes almost never are)."""
    if len(blob) != dims * 4:
        return None
    vec = np.frombuffer(blob, dtype=np.float32).copy()
    if not np.isfinite(vec).all():
        return None
    if unit and abs(float(np.linalg.norm(vec)) - 1.0) > _UNIT_TOLERANCE:
        return None
    return vec
