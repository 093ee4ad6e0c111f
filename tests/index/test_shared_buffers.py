"""Published editor buffers: caps, liveness, newer-than-disk, cleanup (index/shared_buffers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from code_compass_server.constants import SHARED_BUFFER_STALE_S
from code_compass_server.index.shared_buffers import (
    BUFFERS_DIR,
    BufferPublisher,
    _buffer_file,
    publisher_alive,
    read_published,
)


def test_publish_read_withdraw(tmp_path: Path) -> None:
    pub = BufferPublisher()
    try:
        assert pub.publish(tmp_path, "src/a.py", "x = 'ünïcode'\n", max_bytes=1000)
        got = read_published(tmp_path, "src/a.py", disk_mtime=time.time() - 60)
        assert got is not None and got.text == "x = 'ünïcode'\n" and got.pid == os.getpid()
        assert read_published(tmp_path, "src/b.py", None) is None
        pub.withdraw(tmp_path, "src/a.py")
        assert read_published(tmp_path, "src/a.py", None) is None
    finally:
        pub.close()
    assert list((tmp_path / BUFFERS_DIR).iterdir()) == []  # heartbeat gone too


def test_disk_newer_than_buffer_wins(tmp_path: Path) -> None:
    pub = BufferPublisher()
    try:
        pub.publish(tmp_path, "a.py", "buffer\n", max_bytes=1000)
        assert read_published(tmp_path, "a.py", disk_mtime=time.time() + 5) is None
    finally:
        pub.close()


def test_size_caps_per_buffer_and_total(tmp_path: Path) -> None:
    pub = BufferPublisher(max_total_bytes=10)
    try:
        assert pub.publish(tmp_path, "a.py", "123456", max_bytes=6)
        assert not pub.publish(tmp_path, "b.py", "1234567", max_bytes=6)  # over its own cap
        assert not pub.publish(tmp_path, "c.py", "12345", max_bytes=6)  # 6 + 5 > 10 in total
        assert read_published(tmp_path, "c.py", None) is None
        # A buffer that grows past its cap withdraws its older published copy.
        assert not pub.publish(tmp_path, "a.py", "1234567", max_bytes=6)
        assert read_published(tmp_path, "a.py", None) is None
        assert pub.publish(tmp_path, "c.py", "12345", max_bytes=6)  # room again
    finally:
        pub.close()


def test_stale_heartbeat_means_gone(tmp_path: Path) -> None:
    pub = BufferPublisher()
    try:
        pub.publish(tmp_path, "a.py", "text\n", max_bytes=1000)
        beat = tmp_path / BUFFERS_DIR / f"alive-{os.getpid()}"
        old = time.time() - SHARED_BUFFER_STALE_S - 5
        os.utime(beat, (old, old))  # a hung (or pid-reusing) publisher
        assert not publisher_alive(tmp_path, os.getpid())
        assert read_published(tmp_path, "a.py", None) is None
    finally:
        pub.close()


def test_dead_publishers_leftovers_are_ignored_then_swept(tmp_path: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path;"
        "from code_compass_server.index.shared_buffers import BufferPublisher;"
        "p = BufferPublisher(); p.publish(Path(sys.argv[1]), 'a.py', 'dead\\n', 1000);"
        "os._exit(0)"  # no cleanup, as after a kill
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=60)
    leftovers = list((tmp_path / BUFFERS_DIR).iterdir())
    assert len(leftovers) == 2  # the buffer and the heartbeat
    assert read_published(tmp_path, "a.py", None) is None  # its pid is gone
    pub = BufferPublisher()
    try:
        pub.publish(tmp_path, "b.py", "live\n", max_bytes=1000)  # first publish sweeps
        names = sorted(p.name for p in (tmp_path / BUFFERS_DIR).iterdir())
        assert names == sorted([_buffer_file(tmp_path, "b.py").name, f"alive-{os.getpid()}"])
    finally:
        pub.close()
