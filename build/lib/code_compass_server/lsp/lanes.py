"""Two lanes for blocking engine work, so a burst of bulk requests never delays the editor.

- interactive: hover, code lens (+ resolve), status — what the user waits for while typing;
- bulk: search, ask, reindex, workspace changes — each may take seconds, and a client may
  pipeline hundreds of them.

Each lane is its own thread pool: a hover never queues behind a search. Bulk work about to
start first lets the interactive work already queued or running finish (for at most
`LSP_BULK_YIELD_MAX_S`): the hover then shares the interpreter only with the searches already
running, not with the next hundred. It waits for those hovers only, not for the lane to be
idle, so a stream of hovers cannot starve searches (#32). A hover superseded by a newer one
before it started is dropped with ContentModified (-32801), not served late. The bulk queue is
bounded; past it a request is refused at once (-32803, "retry later") instead of waiting
minutes. Every call carries a cancel token (`cancellation.py`): work still queued is
dropped when its request is cancelled, work running stops at its next checkpoint.
"""

from __future__ import annotations

import asyncio
import enum
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException

from code_compass_server.cancellation import CancelToken, cancel_scope
from code_compass_server.constants import (
    LSP_BULK_QUEUE_MAX,
    LSP_BULK_WORKERS,
    LSP_BULK_YIELD_MAX_S,
    LSP_INTERACTIVE_WORKERS,
)

T = TypeVar("T")

REQUEST_FAILED = -32803  # LSP RequestFailed: a valid request the server cannot serve now
CONTENT_MODIFIED = -32801  # LSP ContentModified: the answer would be out of date


class Lane(enum.Enum):
    INTERACTIVE = "interactive"
    BULK = "bulk"


class ServerBusy(JsonRpcException):
    CODE = REQUEST_FAILED


class Superseded(JsonRpcException):
    CODE = CONTENT_MODIFIED


class Lanes:
    def __init__(self, bulk_queue_max: int = LSP_BULK_QUEUE_MAX) -> None:
        self.bulk_queue_max = bulk_queue_max
        self._pools = {
            Lane.INTERACTIVE: ThreadPoolExecutor(
                LSP_INTERACTIVE_WORKERS, thread_name_prefix="cc-interactive"
            ),
            Lane.BULK: ThreadPoolExecutor(LSP_BULK_WORKERS, thread_name_prefix="cc-bulk"),
        }
        self._lock = threading.Lock()
        self._no_interactive = threading.Condition(self._lock)
        self._bulk_pending = 0
        self._next_seq = 0
        self._interactive: set[int] = set()  # sequence numbers queued or running
        self._latest: dict[str, int] = {}  # supersede key -> newest sequence number

    async def run(
        self, lane: Lane, fn: Callable[..., T], *args: Any, supersede: str | None = None
    ) -> T:
        """Run `fn(*args)` on `lane` under a fresh cancel token; cancelling the awaiting task
        (pygls does on `$/cancelRequest`) drops queued work and cancels the token. Interactive
        work with a `supersede` key is dropped (Superseded) if a newer call with the same key
        arrived before it started."""
        token = CancelToken()
        seq = -1
        if lane is Lane.BULK:
            with self._lock:
                if self._bulk_pending >= self.bulk_queue_max:
                    raise ServerBusy(
                        f"the server has {self._bulk_pending} searches and questions queued; "
                        "retry when some have been answered"
                    )
                self._bulk_pending += 1
        else:
            with self._lock:
                seq = self._next_seq
                self._next_seq += 1
                self._interactive.add(seq)
                if supersede is not None:
                    self._latest[supersede] = seq

        def call() -> T:
            if lane is Lane.BULK:
                with self._no_interactive:
                    before = self._next_seq  # only what is there now, not what comes later
                    self._no_interactive.wait_for(
                        lambda: not self._interactive or min(self._interactive) >= before,
                        LSP_BULK_YIELD_MAX_S,
                    )
            elif supersede is not None:
                with self._lock:
                    newer = self._latest.get(supersede, seq) != seq
                if newer:
                    raise Superseded("a newer request of the same kind replaced this one")
            token.check()  # cancelled while queued (and the future already running)
            with cancel_scope(token):
                return fn(*args)

        try:
            future = self._pools[lane].submit(call)
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            token.cancel()
            raise
        finally:
            with self._no_interactive:
                if lane is Lane.BULK:
                    self._bulk_pending -= 1
                else:
                    self._interactive.discard(seq)
                    if supersede is not None and self._latest.get(supersede) == seq:
                        del self._latest[supersede]
                    self._no_interactive.notify_all()

    def shutdown(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
