"""Append-only JSON-lines files that rotate by size: every log the server writes goes here.

At `max_bytes` the file becomes `x.jsonl.1` (the previous `.1` becomes `.2`, and so on) and
at most `backups` old files are kept, so a log never grows without bound. A record is
encoded first and written with one `write` on a file opened for appending, under a lock
shared by every writer of that path in the process: lines are never split or interleaved.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_compass_server.constants import DECISION_LOG_BACKUPS, DECISION_LOG_MAX_BYTES

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(path, threading.Lock())


class RotatingJsonl:
    def __init__(
        self,
        path: Path,
        max_bytes: int = DECISION_LOG_MAX_BYTES,
        backups: int = DECISION_LOG_BACKUPS,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = _lock_for(path.absolute())

    def append(self, record: Mapping[str, Any]) -> None:
        """Write `record` as one line, rotating first if the line would cross `max_bytes`."""
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(data) > self.max_bytes:
                self._rotate()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

    def _rotate(self) -> None:
        """x -> x.1 -> x.2 ... ; the oldest beyond `backups` is dropped."""
        name = self.path.name
        for n in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{name}.{n}")
            if older.exists():
                older.replace(self.path.with_name(f"{name}.{n + 1}"))
        if self.backups > 0:
            self.path.replace(self.path.with_name(f"{name}.1"))
        else:
            self.path.unlink()
