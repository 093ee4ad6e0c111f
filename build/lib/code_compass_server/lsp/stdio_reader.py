"""Reading the client's messages from stdin in large chunks.

pygls' own reader hands every header line and every body to a thread-pool round trip. Beside
busy search threads each round trip waits for the GIL, so a hover queued behind a burst of
500 pipelined searches waited about a second just to be *read* (the lanes can only help a
message once it is read). This reader asks the OS for up to 64 KiB at a time on one thread of
its own and serves lines and bodies from that buffer: a burst is read in a few calls.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

READ_CHUNK_BYTES = 1 << 16


class ChunkedStdinReader:
    """pygls' `AsyncReader` (`readline`, `readexactly`) over a buffer filled in large reads."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._fd = stdin.fileno()
        self._buf = bytearray()
        self._eof = False
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="cc-stdin")

    async def _fill(self) -> bool:
        """One read of whatever is available (up to a chunk); False at end of input."""
        if self._eof:
            return False
        loop = asyncio.get_running_loop()
        data = await loop.run_in_executor(self._executor, os.read, self._fd, READ_CHUNK_BYTES)
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    async def readline(self) -> bytes:
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[: end + 1])
                del self._buf[: end + 1]
                return line
            if not await self._fill():
                rest = bytes(self._buf)
                self._buf.clear()
                return rest

    async def readexactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            if not await self._fill():
                break
        body = bytes(self._buf[:n])
        del self._buf[:n]
        return body

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
