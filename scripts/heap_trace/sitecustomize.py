"""Where the language server's memory is, over time (bench_lsp.py --trace-heap).

Loaded by the server process (`code_compass_server serve`) when this folder is on PYTHONPATH
and CC_HEAP_LOG names a file. Every CC_HEAP_EVERY seconds (default 30) a thread writes to
CC_HEAP_LOG.<pid>: RSS, glibc's malloc arenas (mallinfo2: in use, free), pymalloc's arenas and
blocks (sys._debugmallocstats), and the resolver's cache sizes. With CC_HEAP_TRACEMALLOC=1,
tracemalloc starts after CC_HEAP_DELAY seconds and each sample adds the 25 source lines whose
allocations grew most since (slow, and tracemalloc's own tables inflate malloc's figures:
read its growth, not its RSS). A diagnostic, never part of the product.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
import tracemalloc


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
            "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _malloc() -> str:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        m = libc.mallinfo2()
    except (OSError, AttributeError) as e:
        return f"mallinfo2: {e}"
    mb = 1 / 1048576
    return (
        f"malloc arenas {m.arena * mb:.0f} MB (in use {m.uordblks * mb:.0f}, free "
        f"{m.fordblks * mb:.0f}), mmapped {m.hblkhd * mb:.0f} MB"
    )


def _pymalloc(path: str) -> str:
    """sys._debugmallocstats' arena and block totals (it writes to fd 2: redirected here)."""
    tmp = f"{path}.{os.getpid()}.stats"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    saved = os.dup(2)
    try:
        os.dup2(fd, 2)
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
    found = {}
    with open(tmp, errors="replace") as f:
        for line in f:
            key, _, value = line.partition("=")
            number = value.strip().replace(",", "")
            if line.startswith("#") and number.isdigit():
                found[key.strip("# ")] = int(number)
    os.unlink(tmp)
    return (
        f"pymalloc {found.get('arenas allocated current', 0)} arenas of 1 MB, blocks in use "
        f"{found.get('bytes in allocated blocks', 0) / 1048576:.0f} MB, free in pools "
        f"{found.get('bytes in available blocks', 0) / 1048576:.0f} MB"
    )


def _status() -> str:
    with open("/proc/self/status") as f:
        keep = [ln.split() for ln in f if ln.startswith(("VmRSS", "RssAnon", "Threads"))]
    return ", ".join(f"{k.rstrip(':')} {v}" for k, v, *_ in keep)


def _caches() -> str:
    out = []
    resolve = sys.modules.get("code_compass_server.symbols.resolve")
    for r in list(resolve._SHARED.values()) if resolve is not None else []:
        out.append(f"jedi answers {len(r._jedi_cache)}, warmed versions {len(r._warming)}")
        for s in list(r._scopes.values()):
            files, source = s._files.size()
            out.append(f"python parses {files} ({source / 1e6:.2f} MB of source)")
        for fn in r._on_close:
            answers = getattr(getattr(fn, "__self__", None), "_answers", None)
            if answers is not None:
                out.append(f"lens answers of {len(answers)} files")
    names = sys.modules.get("code_compass_server.symbols.code_names")
    if names is not None:
        out.append(f"span masks {len(names._masks)}")
    cache = sys.modules.get("code_compass_server.symbols.stamped_cache")
    if cache is not None:
        out.append(f"retired parses {len(cache._retired)}")
    return ", ".join(out)


def _start(path: str) -> None:
    every = float(os.environ.get("CC_HEAP_EVERY", "30"))
    delay = float(os.environ.get("CC_HEAP_DELAY", "40"))
    trace = os.environ.get("CC_HEAP_TRACEMALLOC") == "1"
    log = open(f"{path}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - the process's life

    def run() -> None:
        t0 = time.monotonic()
        first = None
        while True:
            time.sleep(every)
            if trace and first is None and time.monotonic() - t0 >= delay:
                tracemalloc.start()
                first = tracemalloc.take_snapshot()
            log.write(
                f"t+{time.monotonic() - t0:.0f}s {_status()}; {sys.getallocatedblocks()} "
                f"blocks; {_malloc()}; {_pymalloc(path)}; {_caches()}\n"
            )
            if first is not None:
                grown = tracemalloc.take_snapshot().compare_to(first, "lineno")[:25]
                for stat in grown:
                    frame = stat.traceback[0]
                    log.write(
                        f"    {stat.size_diff / 1024:+9.0f} KiB {stat.count_diff:+9d} "
                        f"{frame.filename}:{frame.lineno}\n"
                    )

    threading.Thread(target=run, name="cc-heap-trace", daemon=True).start()


_log = os.environ.get("CC_HEAP_LOG")
if _log and sys.orig_argv[-2:] == ["code_compass_server", "serve"]:
    _start(_log)
