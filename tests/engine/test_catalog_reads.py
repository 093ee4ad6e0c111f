"""Reads never wait for the writer: another thread sees the last commit at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from code_compass_server.index.catalog import Catalog, FileRow


def test_a_read_from_another_thread_does_not_wait_for_an_open_transaction(
    tmp_path: Path,
) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    with catalog.transaction() as c:
        catalog.put_file(c, FileRow("a.py", "h1", 1, 1, "python", 0), [], [])
    inside = threading.Event()
    release = threading.Event()

    def writer() -> None:
        with catalog.transaction() as c:
            catalog.put_file(c, FileRow("b.py", "h2", 1, 1, "python", 0), [], [])
            assert set(catalog.files()) == {"a.py", "b.py"}  # the writer sees its own rows
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    assert inside.wait(10)
    t0 = time.perf_counter()
    seen = set(catalog.files())  # the writer still holds its transaction (and the lock)
    waited = time.perf_counter() - t0
    release.set()
    thread.join(10)
    assert seen == {"a.py"}  # the last commit, not the writer's pending rows
    assert waited < 1.0  # before: blocked until the writer committed (10 s here)
    assert catalog.counts()["files"] == 2  # committed now: counted again
    catalog.close()
