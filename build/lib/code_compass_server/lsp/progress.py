"""Index progress for the client: `window/workDoneProgress` and `codeCompass/indexState`.

The engine's scheduler calls `IndexProgressReporter` for every job, on its own thread. Full runs
(and watcher batches big enough to notice) get a progress token; everything sent to the client is
marshalled onto the event loop in order (pygls' writer is not thread-safe), and nothing here
waits for the client, so the scheduler never does. Reports are throttled: phase changes go out
at once, the rest at most every INDEX_STATE_INTERVAL_S.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from code_compass_server.constants import LSP_INDEX_STATE_INTERVAL_S
from code_compass_server.index.job_records import FullRun, IndexEvent, IndexJob, WatcherBatch
from code_compass_server.index.summary import IndexProgress

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

log = logging.getLogger(__name__)

INDEX_STATE = "codeCompass/indexState"
INDEX_STATE_INTERVAL_S = LSP_INDEX_STATE_INTERVAL_S
PROGRESS_CREATE_TIMEOUT_S = 5.0
# A watcher batch this big (a branch switch, a generator run) is shown like a full run.
WATCH_PROGRESS_MIN_PATHS = 100


def shows_progress(job: IndexJob) -> bool:
    """Jobs a user notices; buffer updates and small saves pass silently."""
    if isinstance(job, FullRun):
        return True
    return isinstance(job, WatcherBatch) and len(job.paths) >= WATCH_PROGRESS_MIN_PATHS


class IndexProgressReporter:
    """The language server's one subscription to the engine's index jobs."""

    def __init__(self, ls: CodeCompassServer) -> None:
        self._ls = ls
        self._lock = threading.Lock()
        self._runs: dict[int, JobProgress] = {}

    def __call__(self, event: IndexEvent) -> None:
        job = event.job
        if not shows_progress(job):
            return
        run: JobProgress | None
        with self._lock:
            if event.stage == "begin":
                run = self._runs[job.id] = JobProgress(self._ls, job)
            elif event.stage == "end":
                run = self._runs.pop(job.id, None)
            else:
                run = self._runs.get(job.id)
        if run is None:
            return
        if event.stage == "begin":
            run.begin()
        elif event.stage == "end":
            run.end(job.describe())
        elif event.progress is not None:
            run.progress(event.progress)


class JobProgress:
    """One job as the client sees it: a progress token (if the client has them) + indexState."""

    def __init__(self, ls: CodeCompassServer, job: IndexJob) -> None:
        self._ls = ls
        self.job = job
        self._token: str | None = None
        self._order = asyncio.Lock()  # begin, reports, end reach the client in this order
        self._last_sent = 0.0
        self._last_phase: str | None = None

    def title(self) -> str:
        verb = "indexing" if isinstance(self.job, FullRun) else "updating"
        return f"Code Compass: {verb} {self.job.project}"

    # -- from the scheduler's thread ----------------------------------------------------
    def begin(self) -> None:
        if self._ls.client_supports_progress():
            self._in_loop(self._begin())
        self._ls.send_index_state()

    def progress(self, p: IndexProgress) -> None:
        now = time.monotonic()
        if p.phase == self._last_phase and now - self._last_sent < INDEX_STATE_INTERVAL_S:
            return
        self._last_phase, self._last_sent = p.phase, now
        message, pct = describe(p)
        self._in_loop(self._send(types.WorkDoneProgressReport(message=message, percentage=pct)))
        self._ls.send_index_state()

    def end(self, message: str) -> None:
        self._in_loop(self._send(types.WorkDoneProgressEnd(message=message)))
        self._ls.send_index_state()

    # -- on the event loop --------------------------------------------------------------
    def _in_loop(self, coro: Coroutine[Any, Any, None]) -> None:
        loop = self._ls.loop
        if loop is None or loop.is_closed() or self._ls.closed:
            coro.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop is closing: nobody left to tell
            coro.close()

    async def _begin(self) -> None:
        async with self._order:
            token = f"code-compass/index/{self.job.project}/{uuid.uuid4().hex[:8]}"
            progress = self._ls.work_done_progress
            try:
                await asyncio.wait_for(progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
            except Exception as exc:  # a client that refuses progress still gets indexState
                log.info("work done progress not available: %s", exc)
                return
            self._token = token
            # Cancelling the progress in the UI cancels this job (what is committed stays).
            cancelled = progress.tokens.get(token)
            if cancelled is not None:
                cancelled.add_done_callback(lambda f: self._cancel() if f.cancelled() else None)
            progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=self.title(), message="scanning files", percentage=0, cancellable=True
                ),
            )

    async def _send(self, value: types.WorkDoneProgressReport | types.WorkDoneProgressEnd) -> None:
        async with self._order:
            token = self._token
            if token is None:
                return
            progress = self._ls.work_done_progress
            if isinstance(value, types.WorkDoneProgressEnd):
                progress.end(token, value)
                progress.tokens.pop(token, None)
                self._token = None
            else:
                progress.report(token, value)

    def _cancel(self) -> None:
        engine = self._ls.engine
        if engine is not None:
            engine.scheduler.cancel_job(self.job)


def describe(p: IndexProgress) -> tuple[str, int | None]:
    """Human progress message and percentage for an IndexProgress."""
    done, total = p.files_done, p.files_total
    if p.phase == "embedding":
        pct = int(100 * p.embedded / p.embed_total) if p.embed_total else None
        return f"embedding {p.embedded}/{p.embed_total} chunks", pct
    if p.phase == "scanning":
        return "scanning files", 0
    if p.phase == "ready":
        return f"{done}/{total} files", 100
    pct = int(100 * done / total) if total else None
    return f"{done}/{total} files", pct
