"""Cooperative cancellation: a token per request, checked between the stages of long work.

A front door (the language server's `$/cancelRequest`) cancels the token; the work it guards
calls `check_cancelled()` at safe points and stops with `Cancelled`. The token travels in a
context variable, so engine code checks it without a parameter threaded through every call.
`Cancelled` is a BaseException, as asyncio's is: the `except Exception` of a retry loop or a
fallback must not swallow a cancellation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


class Cancelled(BaseException):
    """The request this work belongs to was cancelled; nobody waits for its result."""


class CancelToken:
    """Set once, from any thread; read by the worker at its checkpoints."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()


_current: ContextVar[CancelToken | None] = ContextVar("code_compass_cancel", default=None)


@contextmanager
def cancel_scope(token: CancelToken) -> Iterator[CancelToken]:
    """Make `token` the current one for the code run inside (this thread's context)."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def check_cancelled() -> None:
    """Raise `Cancelled` if the current request was cancelled; no-op outside a scope."""
    token = _current.get()
    if token is not None:
        token.check()


def cancellable(callback: Callable[[T], None] | None) -> Callable[[T], None] | None:
    """`callback` that first checks the current token: a streamed delta after a cancel aborts
    the stream (the exception unwinds through the HTTP client, which closes the connection)."""
    token = _current.get()
    if callback is None or token is None:
        return callback
    inner = callback

    def checked(value: T) -> None:
        token.check()
        inner(value)

    return checked
