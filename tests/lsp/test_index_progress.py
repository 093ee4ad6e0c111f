"""Index progress as the client sees it: the begin payload, and cancel from the UI."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.test_lifecycle import many_files


async def test_progress_begins_as_documented_and_ui_cancel_stops_the_pass(
    start: Any, tmp_path: Path
) -> None:
    big = many_files(tmp_path / "big", 500)
    s = await start([big])
    deadline = time.monotonic() + 20
    # The token is created first and `begin` follows the client's reply: wait for both.
    while not any(s.client.progress_reports.values()):
        assert time.monotonic() < deadline, "no progress token"
        await asyncio.sleep(0.02)
    token, reports = next((t, r) for t, r in s.client.progress_reports.items() if r)
    begin = reports[0]
    assert begin.kind == "begin" and begin.title == "Code Compass: indexing big"
    assert (begin.message, begin.percentage, begin.cancellable) == ("scanning files", 0, True)
    s.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    while reports[-1].kind != "end":
        assert time.monotonic() < deadline, "the cancelled pass did not end"
        await asyncio.sleep(0.02)
    status = await s.request("codeCompass/status", {})
    assert status["projects"][0]["files"] < 500  # stopped part-way
    await s.request("codeCompass/reindex", {"project": "big"})
    status = await s.wait_indexed(60)
    assert status["projects"][0]["files"] == 500 and status["projects"][0]["rebuilt"] == ""
