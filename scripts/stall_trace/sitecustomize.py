"""What held the GIL when the language server stalled (bench_lsp.py --trace-stalls).

Loaded by the server process when this folder is on PYTHONPATH and CC_STALL_LOG names a file:
a thread sleeps 10 ms at a time; when it wakes more than LATE_MS late, another thread held the
GIL (or the machine gave the process no CPU), and what every busy thread is doing right then
is written to CC_STALL_LOG.<pid> (the culprit is usually just past its long C call: an
`ast.parse`, a collection, a snapshot). Garbage collections longer than GC_MS are written too,
with their generation and thread (`gc.callbacks`). A diagnostic, never part of the product.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import traceback
from typing import Any

LATE_MS = 80.0
GC_MS = 20.0
_IDLE = ("threading.py", "selectors.py", "thread.py", "queues.py", "connection.py")


def _start(out: str) -> None:
    log = open(f"{out}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - the process's life
    started: dict[int, float] = {}

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        me = threading.get_ident()
        if phase == "start":
            started[me] = time.perf_counter()
            return
        t0 = started.pop(me, None)
        ms = (time.perf_counter() - t0) * 1000 if t0 is not None else 0.0
        if ms > GC_MS:
            name = threading.current_thread().name
            log.write(f"{time.time():.3f} GC gen{info['generation']} {ms:.0f} ms [{name}]\n")

    def watch() -> None:
        me = threading.get_ident()
        while True:
            t0 = time.perf_counter()
            time.sleep(0.01)
            late = (time.perf_counter() - t0) * 1000 - 10
            if late <= LATE_MS:
                continue
            names = {t.ident: t.name for t in threading.enumerate()}
            out = [f"{time.time():.3f} LATE {late:.0f} ms"]
            for ident, frame in sys._current_frames().items():
                stack = traceback.extract_stack(frame)[-4:]
                if ident == me or not stack or os.path.basename(stack[-1].filename) in _IDLE:
                    continue
                where = " <- ".join(
                    f"{os.path.basename(s.filename)}:{s.lineno}:{s.name}" for s in reversed(stack)
                )
                out.append(f"   [{names.get(ident, '?')}] {where}")
            log.write("\n".join(out) + "\n")

    gc.callbacks.append(on_gc)
    threading.Thread(target=watch, name="stall-trace", daemon=True).start()


if os.environ.get("CC_STALL_LOG") and sys.argv[-1:] == ["serve"]:
    _start(os.environ["CC_STALL_LOG"])
