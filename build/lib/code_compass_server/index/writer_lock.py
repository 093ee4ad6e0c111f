"""The one-writer-per-project lock: an OS file lock on `<project storage>/writer.lock`.

Whoever holds it may write every store of the project (catalog, Tantivy, vectors) and is the
only one allowed to remove or rewrite files it finds there: stale temp files, orphan segments,
a broken index. Everyone else only reads. The lock is taken lazily, at the first write (an index
run, a repair), so a process that only reads (`status`, a second editor window) never holds it
and never makes the real writer start read-only. The OS drops it when the process dies
(kill -9 included), so a crash never leaves the project locked.

The lock file is never deleted: a rebuild clears the folder around it. A folder where it
cannot be created (a read-only mount, an index shared read-only) is never written: every
process there is a reader.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import IO

WRITER_LOCK_FILE = "writer.lock"


class WriterLock:
    """Non-blocking exclusive lock on one file; held until `release()` or process exit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None
        self._mutex = threading.Lock()

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self) -> bool:
        """Take the lock if nobody (another process, or another handle here) holds it."""
        with self._mutex:
            if self._fh is not None:
                return True
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fh = open(self.path, "a+b")  # noqa: SIM115 - kept open while the lock is held
            except OSError:  # a read-only mount or folder: this process can only ever read
                return False
            if not _try_lock(fh):
                fh.close()
                return False
            with contextlib.suppress(OSError):  # who holds it: for people reading the folder
                fh.truncate(0)
                fh.write(f"{os.getpid()}\n".encode())
                fh.flush()
            self._fh = fh
            return True

    def release(self) -> None:
        with self._mutex:
            fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                _unlock(fh)
            fh.close()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fh: IO[bytes]) -> bool:
        try:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fh: IO[bytes]) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fh: IO[bytes]) -> bool:
        # flock, not fcntl record locks: per open file, so two engines in one process exclude
        # each other as two processes do, and closing another handle never drops it.
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def _unlock(fh: IO[bytes]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
