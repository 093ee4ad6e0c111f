"""The indexing thread: one worker, a queue of projects, prompt cancellation.

Indexing never runs on the event loop nor in the request pool, so no request waits on
it: requests read the last committed index while this thread writes the next one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from code_compass.lsp.progress import IndexRun

log = logging.getLogger(__name__)

# (project, cancel event) -> a run reporter; (project, embed, progress, cancel) -> summary
RunFactory = Callable[[str, threading.Event], "IndexRun"]
IndexFn = Callable[[str, Callable[[Any], None], threading.Event], Any]


class Indexer:
    def __init__(self, index: IndexFn, make_run: RunFactory) -> None:
        self._index = index
        self._make_run = make_run
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._running: str | None = None
        self._cancel = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.last_error: dict[str, str] = {}

    # -- requests from the server (event loop or request pool) ------------------------
    def request(self, projects: list[str]) -> list[str]:
        """Queue projects for (incremental) indexing; returns those newly queued."""
        queued: list[str] = []
        with self._cond:
            if self._stopping:
                return []
            for p in projects:
                if p not in self._queue:
                    self._queue.append(p)
                    queued.append(p)
            self._ensure_thread()
            self._cond.notify_all()
        return queued

    def forget(self, project: str, timeout: float = 30.0) -> None:
        """Drop a project from the queue; cancel and wait out its run if it is running."""
        with self._cond:
            if project in self._queue:
                self._queue.remove(project)
            if self._running == project:
                self._cancel.set()
                self._cond.wait_for(lambda: self._running != project, timeout=timeout)

    def pause_for(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Run `fn` with no indexing in progress (the interrupted run is re-queued)."""
        with self._cond:
            running = self._running
            if running is not None:
                self._cancel.set()
                self._queue.insert(0, running)
                self._cond.wait_for(lambda: self._running is None, timeout=timeout)
            try:
                return fn()
            finally:
                self._cond.notify_all()

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._running is not None or bool(self._queue)

    @property
    def running(self) -> str | None:
        return self._running

    def queued(self) -> list[str]:
        with self._cond:
            return list(self._queue)

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: self._running is None and not self._queue, timeout=timeout
            )

    def stop(self, timeout: float = 10.0) -> bool:
        """Cancel the current run, drop the queue, join the thread. True if it ended."""
        with self._cond:
            self._stopping = True
            self._queue.clear()
            self._cancel.set()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # -- the worker --------------------------------------------------------------------
    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._work, name="code-compass-indexer", daemon=True
            )
            self._thread.start()

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopping or bool(self._queue))
                if self._stopping:
                    return
                project = self._queue.pop(0)
                self._running = project
                self._cancel = threading.Event()
                cancel = self._cancel
            message = "done"
            run: IndexRun | None = None
            try:
                run = self._make_run(project, cancel)
                run.begin()
                summary = self._index(project, run.progress, cancel)
                message = "cancelled" if cancel.is_set() else _summary_text(summary)
                self.last_error.pop(project, None)
            except Exception as exc:  # an engine failure must not kill the thread
                log.exception("indexing %s failed", project)
                self.last_error[project] = f"{type(exc).__name__}: {exc}"
                message = f"failed: {exc}"
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()
                if run is not None:
                    try:
                        run.end(message)
                    except Exception:
                        log.exception("progress end failed")


def _summary_text(summary: Any) -> str:
    if isinstance(summary, list):  # Engine.index returns one summary per project
        return "; ".join(_summary_text(s) for s in summary) or "done"

    def get(name: str) -> Any:
        return summary.get(name) if isinstance(summary, dict) else getattr(summary, name, None)

    files, chunks = get("files"), get("chunks")
    if files is None:
        return "done"
    return f"{files} files, {chunks} chunks"
