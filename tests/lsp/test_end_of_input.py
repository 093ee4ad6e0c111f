"""A client that disappears (end of stdin) gets the same clean-up as shutdown + exit."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any


def published(storage: Path) -> list[Path]:
    return sorted((storage / "projects").glob("*/buffers/*"))


async def test_end_of_stdin_exits_0_and_cleans_up(start: Any, alpha: Path, tmp_path: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    s.open(alpha / "checkout.py", "def unsaved_marker():\n    pass\n")
    storage = tmp_path / "storage"
    deadline = time.monotonic() + 10
    while not any(p.suffix == ".json" for p in published(storage)):
        assert time.monotonic() < deadline, "the buffer was never published"
        await asyncio.sleep(0.05)
    server = s.client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()  # no shutdown, no exit: the client is simply gone
    code = await asyncio.wait_for(server.wait(), 15)
    assert code == 0
    assert published(storage) == []  # buffers and heartbeat removed by the clean-up
