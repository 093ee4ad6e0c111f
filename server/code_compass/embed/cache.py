"""Embedding cache: text hash (+ model id) -> vector, in SQLite, shared by every file and branch.

Keyed by the content hash of the exact text embedded, so a renamed file, a branch switch back
and forth or an undo never costs a second embedding. Entries outlive the files they came from;
`gc()` drops entries unused for EMBED_CACHE_KEEP_DAYS and then the least recently used beyond
EMBED_CACHE_MAX_ENTRIES.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from code_compass.constants import EMBED_CACHE_KEEP_DAYS, EMBED_CACHE_MAX_ENTRIES, EMBED_DIMS

_DAY = 86_400
_SQLITE_VARS = 500  # stay under SQLite's host-parameter limit


class EmbeddingCache:
    """Thread-safe; one connection guarded by a lock (lookups are fast, writes batched)."""

    def __init__(self, path: Path, model_id: str, dims: int = EMBED_DIMS) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.model_id = model_id
        self.dims = dims
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors ("
            " model_id TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,"
            " last_used INTEGER NOT NULL, PRIMARY KEY (model_id, hash)) WITHOUT ROWID"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (last_used)")

    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `hashes` (marks them used today)."""
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
                stale = []
                for h, blob, used in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32).copy()
                    if used < today:
                        stale.append(h)
                if stale:  # touch at day granularity: reads stay reads most of the time
                    self._db.executemany(
                        "UPDATE vectors SET last_used = ? WHERE model_id = ? AND hash = ?",
                        [(today, self.model_id, h) for h in stale],
                    )
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        today = _today()
        rows = [
            (self.model_id, h, np.asarray(v, dtype=np.float32).tobytes(), today) for h, v in items
        ]
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def count(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(n)

    def gc(
        self,
        keep_days: int = EMBED_CACHE_KEEP_DAYS,
        max_entries: int = EMBED_CACHE_MAX_ENTRIES,
        now: float | None = None,
    ) -> int:
        """Drop old entries (any model) and bound the size; returns how many were removed."""
        cutoff = _today(now) - keep_days
        with self._lock:
            self._db.execute("BEGIN")
            removed = self._db.execute(
                "DELETE FROM vectors WHERE last_used < ?", (cutoff,)
            ).rowcount
            (n,) = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
            if n > max_entries:
                removed += self._db.execute(
                    "DELETE FROM vectors WHERE (model_id, hash) IN (SELECT model_id, hash"
                    " FROM vectors ORDER BY last_used LIMIT ?)",
                    (n - max_entries,),
                ).rowcount
            self._db.execute("COMMIT")
        return int(removed)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _today(now: float | None = None) -> int:
    return int((time.time() if now is None else now) // _DAY)


def _parts(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _SQLITE_VARS):
        yield items[i : i + _SQLITE_VARS]
