"""Process hygiene: parse workers end with their parent, however it ends
(docs/rules.md: workers-die-with-parent)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from code_compass_server.index.parse_pool import PARENT_POLL_S

GONE_WITHIN_S = 10 * PARENT_POLL_S + 5  # generous: 2 shared cores


def _wait_gone(pids: list[int], within: float) -> list[int]:
    deadline = time.monotonic() + within
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if psutil.pid_exists(p) and not _zombie(p)]
        time.sleep(0.1)
    return alive


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _worker_pids(parent: psutil.Process) -> list[int]:
    pids = []
    for child in parent.children(recursive=True):
        try:
            if "resource_tracker" not in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return pids


PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from code_compass_server.index.parse_pool import GuardedPool
    from code_compass_server.index.scan import FileEntry
    p = Path(sys.argv[1])
    pool = GuardedPool(2)
    entry = FileEntry(p.name, p, p.stat().st_size, p.stat().st_mtime_ns, "python")
    for item in pool.run([(entry, None, None, 10**6)] * 2):
        pass
    print(" ".join(str(w.proc.pid) for w in pool.workers), flush=True)
    time.sleep(600)
    """
)


def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    src = tmp_path / "a.py"
    src.write_text("def f():\n    return 1\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(src)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(psutil.pid_exists(p) for p in pids)
        proc.kill()  # no clean-up runs in the parent: only the workers' own check is left
        proc.wait(10)
        assert _wait_gone(pids, GONE_WITHIN_S) == []
    finally:
        proc.kill()
        proc.wait(10)


def test_ctrl_c_of_index_leaves_no_worker(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    for i in range(2_000):
        body = "\n\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(30))
        (ws / "pkg" / f"m{i}.py").write_text(body)
    cmd = [sys.executable, "-m", "code_compass_server", "index", "--no-embed",
           "--workspace", str(ws), "--storage", str(tmp_path / "store")]  # fmt: skip
    # A session of its own: SIGINT to its group is what a terminal's Ctrl-C sends.
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while len(workers) < 1 and time.monotonic() < deadline and proc.poll() is None:
            workers = _worker_pids(parent)
            time.sleep(0.05)
        assert workers, "index ended before its parse workers started"
        time.sleep(0.5)
        workers = _worker_pids(parent) or workers
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)
        assert _wait_gone(workers, GONE_WITHIN_S) == []
        assert proc.stderr is not None
        err = proc.stderr.read()
        # Workers ignore Ctrl-C: none of them prints a KeyboardInterrupt of its own.
        assert b"_worker_main" not in err and b"spawn_main" not in err, err[-2000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


JEDI_PARENT = textwrap.dedent(
    """
    import os, time
    from code_compass_server.symbols.resolve import SymbolResolver
    resolver = SymbolResolver()
    with resolver._lock:
        lane = resolver._jedi()
    print(lane.submit(os.getpid).result(120), flush=True)
    time.sleep(600)
    """
)


def test_jedi_process_exits_when_the_server_is_killed() -> None:
    """The jedi process holds both ends of its pool's queue, so only its own parent check can
    end it after a SIGKILL of the server (seen: jedi processes left running)."""
    proc = subprocess.Popen([sys.executable, "-c", JEDI_PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        jedi_pid = int(proc.stdout.readline())
        assert jedi_pid != proc.pid and psutil.pid_exists(jedi_pid)
        proc.kill()
        proc.wait(10)
        assert _wait_gone([jedi_pid], GONE_WITHIN_S) == []
    finally:
        proc.kill()
        proc.wait(10)
