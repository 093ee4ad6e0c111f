"""Live progress of the process that writes an index, shared with the others through its folder.

Only one process holds an index's writer; the others open it read-only and cannot see the
writer's threads. The writer therefore keeps a small JSON file beside the catalog saying what it
is doing (phase, counts, embedding rate and ETA), replaced atomically at every heartbeat while it
works. Readers trust the file only while its process is alive, and, while it claims to work,
only while its heartbeat is fresh: a writer that died or hung leaves a file nobody believes.
A pid the system has since given to another process is recognized by the process's start time
(where the system tells it: Linux's /proc), so a reused pid does not revive a dead writer's file.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

LIVE_FILE = "live-progress.json"
HEARTBEAT_S = 1.0  # a working writer rewrites the file this often
STALE_S = 15.0  # a working writer silent for longer is hung or gone: its file is ignored
WORKING = ("indexing", "embedding")  # states that need a fresh heartbeat


@dataclass(frozen=True, slots=True)
class LiveProgress:
    pid: int
    heartbeat: float  # time.time() of the last write
    started: float  # time.time() when this process began its current work
    state: str  # indexing | embedding | ready
    phase: str  # scanning | indexing | committing | embedding | ready
    files_done: int = 0
    files_total: int = 0
    chunks: int = 0
    embedded: int = 0
    embed_total: int = 0
    embed_rate: float = 0.0  # chunks/s of the writer's embedding worker
    embed_eta_s: float | None = None
    pid_start: str | None = None  # process_start(pid) when written; None where unknown

    @property
    def working(self) -> bool:
        return self.state in WORKING


def live_path(directory: Path) -> Path:
    return directory / LIVE_FILE


def write_live(directory: Path, progress: LiveProgress) -> None:
    """Replace the file atomically (never a half-written file for a reader)."""
    path = live_path(directory)
    tmp = path.with_name(f"{LIVE_FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(asdict(progress)), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # the folder went away (project removed): nothing to tell
        with contextlib.suppress(OSError):
            tmp.unlink()


def clear_live(directory: Path, pid: int | None = None) -> None:
    """Remove the file if it is this process's (or `pid`'s): never another writer's."""
    found = _load(live_path(directory))
    if found is not None and found.pid == (pid if pid is not None else os.getpid()):
        with contextlib.suppress(OSError):
            live_path(directory).unlink()


def read_live(directory: Path, now: float | None = None) -> LiveProgress | None:
    """The writer's progress, or None: no file, unreadable, its process gone, or (while it
    claims to work) a heartbeat older than STALE_S."""
    found = _load(live_path(directory))
    if found is None or found.pid == os.getpid() or not pid_alive(found.pid):
        return None
    if found.pid_start is not None and process_start(found.pid) not in (None, found.pid_start):
        return None  # the pid now belongs to another process: the writer is gone
    age = (time.time() if now is None else now) - found.heartbeat
    if found.working and age > STALE_S:
        return None
    return found


def pid_alive(pid: int) -> bool:
    """Whether the process runs. A zombie does not: it died and waits for its parent to reap
    it, which a `kill -9`ed writer whose parent is gone may do for a while."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    fields = _proc_stat(pid)
    return not (fields and fields[0] == "Z")


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), None where unknown: with
    the pid, it names one process even after the pid is reused."""
    fields = _proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else None  # field 22 of proc(5)


def _proc_stat(pid: int) -> list[str] | None:
    """/proc/PID/stat from its third field (the state) on; None where there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()  # the name in parentheses may hold spaces


def _load(path: Path) -> LiveProgress | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LiveProgress(**data)
    except (OSError, ValueError, TypeError):
        return None
