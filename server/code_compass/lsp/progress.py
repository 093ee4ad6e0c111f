"""Indexing progress for the client: `window/workDoneProgress` and `codeCompass/indexState`.

Called from the indexing thread; everything sent to the client is marshalled onto the
event loop (pygls' writer is not thread-safe). Reports are throttled: phase changes go
out at once, the rest at most every INDEX_STATE_INTERVAL_S.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from code_compass.constants import LSP_INDEX_STATE_INTERVAL_S

if TYPE_CHECKING:
    from code_compass.lsp.server import CodeCompassServer

log = logging.getLogger(__name__)

INDEX_STATE = "codeCompass/indexState"
INDEX_STATE_INTERVAL_S = LSP_INDEX_STATE_INTERVAL_S
PROGRESS_CREATE_TIMEOUT_S = 5.0


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


class IndexRun:
    """One indexing run of one project, as the client sees it."""

    def __init__(self, ls: CodeCompassServer, project: str, cancel: threading.Event) -> None:
        self._ls = ls
        self.project = project
        self._cancel = cancel
        self._token: str | None = None
        self._last_sent = 0.0
        self._last_phase: str | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def begin(self) -> None:
        self._token = self._create_token()
        if self._token is not None:
            self._send_progress(
                types.WorkDoneProgressBegin(
                    title=f"Code Compass: indexing {self.project}",
                    message="scanning files",
                    percentage=0,
                    cancellable=True,
                )
            )
        self._ls.send_index_state()

    def progress(self, p: Any) -> None:
        """The engine's progress callback (IndexProgress)."""
        phase = str(_get(p, "phase", ""))
        now = time.monotonic()
        phase_changed = phase != self._last_phase
        if not phase_changed and now - self._last_sent < INDEX_STATE_INTERVAL_S:
            return
        self._last_phase = phase
        self._last_sent = now
        if self._token is not None:
            message, pct = describe(p)
            self._send_progress(types.WorkDoneProgressReport(message=message, percentage=pct))
        self._ls.send_index_state()

    def end(self, message: str) -> None:
        if self._token is not None:
            self._send_progress(types.WorkDoneProgressEnd(message=message))
        self._ls.send_index_state()

    # -- plumbing ----------------------------------------------------------------------
    def _create_token(self) -> str | None:
        if not self._ls.client_supports_progress():
            return None
        token = f"code-compass/index/{self.project}/{uuid.uuid4().hex[:8]}"
        loop = self._ls.loop
        if loop is None or loop.is_closed():
            return None
        try:
            fut = asyncio.run_coroutine_threadsafe(
                self._ls.work_done_progress.create_async(token), loop
            )
            fut.result(timeout=PROGRESS_CREATE_TIMEOUT_S)
        except Exception as exc:  # a client that refuses progress still gets indexState
            log.info("work done progress not available: %s", exc)
            return None
        # Cancelling the progress in the UI stops this run (what is committed stays).
        cancel_future = self._ls.work_done_progress.tokens.get(token)
        if cancel_future is not None:
            cancel_future.add_done_callback(lambda f: self._cancel.set() if f.cancelled() else None)
        return token

    def _send_progress(self, value: Any) -> None:
        token = self._token
        if token is None:
            return
        progress = self._ls.work_done_progress
        send: Callable[[], None]
        if isinstance(value, types.WorkDoneProgressBegin):

            def send() -> None:
                progress.begin(token, value)
        elif isinstance(value, types.WorkDoneProgressEnd):

            def send() -> None:
                progress.end(token, value)
                progress.tokens.pop(token, None)
        else:

            def send() -> None:
                progress.report(token, value)

        self._ls.call_in_loop(send)


def describe(p: Any) -> tuple[str, int | None]:
    """Human progress message and percentage for an IndexProgress."""
    phase = str(_get(p, "phase", ""))
    done = int(_get(p, "files_done", 0) or 0)
    total = int(_get(p, "files_total", 0) or 0)
    if phase == "embedding":
        emb = int(_get(p, "embedded", 0) or 0)
        emb_total = int(_get(p, "embed_total", 0) or 0)
        pct = int(100 * emb / emb_total) if emb_total else None
        return f"embedding {emb}/{emb_total} chunks", pct
    if phase == "scanning":
        return "scanning files", 0
    if phase == "ready":
        return f"{done}/{total} files", 100
    pct = int(100 * done / total) if total else None
    return f"{done}/{total} files", pct
