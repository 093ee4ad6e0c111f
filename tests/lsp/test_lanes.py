"""Request lanes and cancellation (lsp/lanes.py, cancellation.py), in process: a hover never
waits behind bulk work, a full bulk queue refuses at once, a cancelled request stops its work."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from code_compass_server.cancellation import Cancelled, CancelToken, cancel_scope, cancellable
from code_compass_server.cancellation import check_cancelled as checkpoint
from code_compass_server.lsp.lanes import REQUEST_FAILED, Lane, Lanes, ServerBusy


async def test_interactive_work_runs_while_every_bulk_worker_is_busy() -> None:
    lanes = Lanes()
    release = threading.Event()
    try:
        bulk = [asyncio.ensure_future(lanes.run(Lane.BULK, release.wait, 30)) for _ in range(50)]
        await asyncio.sleep(0.05)  # the bulk workers are all blocked, 48 more queued
        t0 = time.perf_counter()
        assert await asyncio.wait_for(lanes.run(Lane.INTERACTIVE, lambda: "hover"), 5) == "hover"
        waited = time.perf_counter() - t0
        assert not any(f.done() for f in bulk)
        assert waited < 2.0  # generous: it did not wait for the blocked bulk lane
        release.set()
        assert await asyncio.gather(*bulk) == [True] * 50
    finally:
        release.set()
        lanes.shutdown()


async def test_a_full_bulk_queue_refuses_at_once_with_32803() -> None:
    lanes = Lanes(bulk_queue_max=3)
    release = threading.Event()
    try:
        held = [asyncio.ensure_future(lanes.run(Lane.BULK, release.wait, 30)) for _ in range(3)]
        await asyncio.sleep(0)
        with pytest.raises(ServerBusy) as busy:
            await lanes.run(Lane.BULK, lambda: None)
        assert busy.value.code == REQUEST_FAILED and "retry" in str(busy.value)
        assert await lanes.run(Lane.INTERACTIVE, lambda: 1) == 1  # hovers still served
    finally:
        release.set()
        lanes.shutdown()
    # The held calls end released, or cancelled if the shutdown found one still queued.
    ended = await asyncio.gather(*held, return_exceptions=True)
    assert all(r is True or isinstance(r, asyncio.CancelledError) for r in ended), ended


async def test_cancelling_the_request_stops_running_work_at_its_next_checkpoint() -> None:
    lanes = Lanes()
    started = threading.Event()
    stopped: list[str] = []

    def long_work() -> str:
        started.set()
        try:
            for _ in range(1000):
                time.sleep(0.01)
                checkpoint()
        except Cancelled:
            stopped.append("cancelled")
            raise
        return "finished"

    try:
        task = asyncio.ensure_future(lanes.run(Lane.BULK, long_work))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 5
        while not stopped and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert stopped == ["cancelled"]
    finally:
        lanes.shutdown()


async def test_work_cancelled_while_queued_never_runs() -> None:
    lanes = Lanes()
    release = threading.Event()
    ran: list[int] = []
    try:
        blockers = [asyncio.ensure_future(lanes.run(Lane.BULK, release.wait, 30)) for _ in range(2)]
        queued = asyncio.ensure_future(lanes.run(Lane.BULK, ran.append, 1))
        await asyncio.sleep(0.05)
        queued.cancel()
        await asyncio.sleep(0.05)  # the loop hands the cancel to the pool's future
        release.set()
        await asyncio.gather(*blockers)
        await asyncio.sleep(0.05)
        assert ran == []
    finally:
        lanes.shutdown()


def test_a_streamed_delta_after_a_cancel_aborts_the_stream() -> None:
    token = CancelToken()
    seen: list[str] = []
    with cancel_scope(token):
        on_text = cancellable(seen.append)
    assert on_text is not None
    on_text("a")
    token.cancel()
    with pytest.raises(Cancelled):
        on_text("b")
    assert seen == ["a"]
    checkpoint()  # outside any scope: nothing to check
