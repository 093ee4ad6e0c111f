"""One writer thread per engine: every index write happens here, in order, off the request path.

Requests (search, hover, ask) never write and never wait for this thread; they read the last
committed state. Path updates that pile up while a long run is busy are coalesced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    full: set[str] = field(default_factory=set)  # projects needing a whole incremental run
    paths: dict[str, set[str]] = field(default_factory=dict)  # project -> paths to update


class WriterQueue:
    def __init__(
        self,
        run_full: Callable[[str], None],
        run_paths: Callable[[str, set[str]], None],
    ) -> None:
        self._run_full = run_full
        self._run_paths = run_paths
        self._pending = _Pending()
        self._cond = threading.Condition()
        self._busy = False
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="index-writer", daemon=True)
        self._thread.start()

    def submit_full(self, project: str) -> None:
        with self._cond:
            self._pending.full.add(project)
            self._pending.paths.pop(project, None)  # the full run covers them
            self._cond.notify_all()

    def submit_paths(self, project: str, paths: set[str]) -> None:
        with self._cond:
            if project not in self._pending.full:
                self._pending.paths.setdefault(project, set()).update(paths)
            self._cond.notify_all()

    def idle(self) -> bool:
        with self._cond:
            return not self._busy and not self._pending.full and not self._pending.paths

    def wait_idle(self, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._busy and not self._pending.full and not self._pending.paths,
                timeout,
            )

    def stop(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._stopped or self._pending.full or self._pending.paths
                )
                if self._stopped:
                    return
                work, self._pending = self._pending, _Pending()
                self._busy = True
            try:
                for project in sorted(work.full):
                    self._safely(self._run_full, project)
                for project, paths in work.paths.items():
                    self._safely(self._run_paths, project, paths)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    @staticmethod
    def _safely(fn: Callable[..., None], *args: object) -> None:
        try:
            fn(*args)
        except Exception:  # one bad job must not stop later ones
            log.exception("index job %s%s failed", getattr(fn, "__name__", fn), args)
