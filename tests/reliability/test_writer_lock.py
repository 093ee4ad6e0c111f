"""The writer lock excludes every other holder, and a store opened by a reader never removes
or writes a file (docs/architecture.md: one writer per project)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from code_compass_server.embed.vectors import VectorItem, VectorStore
from code_compass_server.index.writer_lock import WriterLock

HOLD = """
import sys, time
from pathlib import Path
from code_compass_server.index.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
print("held" if lock.acquire() else "busy", flush=True)
sys.stdin.readline()
"""


def test_one_holder_at_a_time_across_handles_and_processes(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    first, second = WriterLock(path), WriterLock(path)
    assert first.acquire() and first.acquire()  # re-entrant for its holder
    assert not second.acquire()
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "busy"
    finally:
        other.kill()
        other.wait()
    first.release()
    assert second.acquire()
    second.release()


def test_a_killed_holder_frees_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    assert not WriterLock(path).acquire()
    holder.kill()
    holder.wait()
    assert WriterLock(path).acquire()


def test_a_reader_store_never_sweeps_or_saves(tmp_path: Path) -> None:
    writer = VectorStore(tmp_path, "m", dims=4)
    writer.add([VectorItem("c1", "p", "a.py", "python", np.ones(4, dtype=np.float32))])
    writer.save()
    in_flight = tmp_path / "vectors.2.npy.999.tmp"
    in_flight.write_bytes(b"half written")
    reader = VectorStore(tmp_path, "m", dims=4, writable=lambda: False)
    assert reader.chunk_ids() == {"c1"} and in_flight.exists()
    reader.add([VectorItem("c2", "p", "b.py", "python", np.ones(4, dtype=np.float32))])
    before = sorted(p.name for p in tmp_path.iterdir())
    assert reader.flush() is False
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    writer.save()  # the writer sweeps what is stale
    assert not in_flight.exists()
