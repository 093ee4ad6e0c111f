"""What the server says to the user unasked: few pop-ups, a bounded log.

`window/showMessage` interrupts the user; it is reserved for what they must act on (embeddings
that could not start, a setting that cannot apply) and rate-limited: the same text at most once
per `LSP_POPUP_INTERVAL_S`, all pop-ups together at most `LSP_POPUPS_PER_HOUR`. Past that, and
for everything else (a rejected message, a failed notification), `window/logMessage`, itself at
most `LSP_LOG_MESSAGES_PER_S` per second: a hostile client cannot flood the editor's UI.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from code_compass_server.constants import (
    LSP_LOG_MESSAGES_PER_S,
    LSP_POPUP_INTERVAL_S,
    LSP_POPUPS_PER_HOUR,
)

log = logging.getLogger(__name__)

HOUR_S = 3600.0
_LOG_LEVEL = {
    types.MessageType.Error: logging.ERROR,
    types.MessageType.Warning: logging.WARNING,
}


class ClientMessages:
    """Rate-limited `window/showMessage` and `window/logMessage`; safe from any thread."""

    def __init__(
        self, notify: Callable[[str, Any], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._notify = notify
        self._clock = clock
        self._lock = threading.Lock()
        self._last_shown: dict[str, float] = {}
        self._popups: deque[float] = deque()
        self._logs: deque[float] = deque()

    def show(self, kind: types.MessageType, message: str) -> bool:
        """A pop-up, if the limits allow; else the same text in the log. True if shown."""
        now = self._clock()
        with self._lock:
            while self._popups and now - self._popups[0] > HOUR_S:
                self._popups.popleft()
            last = self._last_shown.get(message)
            allowed = (last is None or now - last >= LSP_POPUP_INTERVAL_S) and len(
                self._popups
            ) < LSP_POPUPS_PER_HOUR
            if allowed:
                self._last_shown[message] = now
                self._popups.append(now)
                if len(self._last_shown) > 4 * LSP_POPUPS_PER_HOUR:  # bounded
                    oldest = min(self._last_shown, key=self._last_shown.__getitem__)
                    self._last_shown.pop(oldest)
        if allowed:
            self._notify(
                types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=kind, message=message)
            )
        else:
            self.log(kind, message)
        return allowed

    def log(self, kind: types.MessageType, message: str) -> bool:
        """A line in the client's output log (and ours), if under the rate. True if sent."""
        log.log(_LOG_LEVEL.get(kind, logging.INFO), "%s", message)
        now = self._clock()
        with self._lock:
            while self._logs and now - self._logs[0] > 1.0:
                self._logs.popleft()
            allowed = len(self._logs) < LSP_LOG_MESSAGES_PER_S
            if allowed:
                self._logs.append(now)
        if allowed:
            self._notify(
                types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=kind, message=message)
            )
        return allowed
