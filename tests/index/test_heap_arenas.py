"""The server's malloc arenas stay at the cap it sets before its threads start (index/heap.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from code_compass_server.constants import SERVER_MALLOC_ARENAS

# Starts 8 threads that allocate (each thread glibc meets gets an arena of its own, up to its
# limit), then counts the arenas in malloc_info's report.
SCRIPT = textwrap.dedent(
    """
    import ctypes, sys, threading
    from code_compass_server.index.heap import limit_arenas
    cap = int(sys.argv[2])
    if cap and not limit_arenas(cap):
        print("unsupported")
        sys.exit(0)
    started, done = threading.Barrier(9), threading.Event()
    def work():
        keep = [bytearray(4096) for _ in range(64)]
        started.wait()
        done.wait()
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    started.wait()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    out = libc.fopen(sys.argv[1].encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(out))
    libc.fclose(ctypes.c_void_p(out))
    done.set()
    for t in threads:
        t.join()
    """
)


def _arenas(tmp_path: Path, cap: int) -> int | None:
    report = tmp_path / f"malloc-{cap}.xml"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(report), str(cap)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    if out.stdout.strip() == "unsupported":
        return None
    return report.read_text().count("<heap nr=")


def test_threads_share_the_capped_arenas(tmp_path: Path) -> None:
    capped = _arenas(tmp_path, SERVER_MALLOC_ARENAS)
    if capped is None:
        pytest.skip("no glibc mallopt here (the cap is glibc's M_ARENA_MAX)")
    assert 1 <= capped <= SERVER_MALLOC_ARENAS
    # Without the cap the same threads spread over more arenas: the test can tell.
    free = _arenas(tmp_path, 0)
    assert free is not None and free > SERVER_MALLOC_ARENAS
