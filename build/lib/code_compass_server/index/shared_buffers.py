"""Editor buffers shared across processes, through each project's storage folder.

The process that serves an editor (the language server) holds the unsaved text of open
documents; another process on the same storage (the MCP server) must read that text too. The
publisher writes one JSON file per open document into `<project storage>/buffers/` (temp file +
rename, so a reader never sees half a file) and keeps a heartbeat file per process fresh; it
removes its files when a document closes and when it shuts down. A reader trusts a published
buffer only while its publisher is alive (its pid exists and its heartbeat is recent) and the
buffer is at least as new as the file on disk; otherwise the disk is the truth.

The storage folder is per user and outside every workspace; the caller publishes only documents
inside a workspace root that are not secret files (index/secret_files.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.constants import (
    SHARED_BUFFER_HEARTBEAT_S,
    SHARED_BUFFER_STALE_S,
    SHARED_BUFFERS_MAX_TOTAL_BYTES,
)

log = logging.getLogger(__name__)

BUFFERS_DIR = "buffers"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class PublishedBuffer:
    """A buffer another process published: its text and when it was written (epoch seconds)."""

    rel: str
    text: str
    pid: int
    written: float


def _buffer_file(folder: Path, rel: str) -> Path:
    digest = hashlib.sha1(rel.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return folder / BUFFERS_DIR / f"{digest}.json"


def _heartbeat_file(folder: Path, pid: int) -> Path:
    return folder / BUFFERS_DIR / f"alive-{pid}"


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would signal it there: the heartbeat decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's (pid reused): the heartbeat decides
        return True
    return True


def publisher_alive(folder: Path, pid: int, now: float | None = None) -> bool:
    """The process exists and refreshed its heartbeat recently (guards against pid reuse)."""
    if not _pid_exists(pid):
        return False
    try:
        beat = _heartbeat_file(folder, pid).stat().st_mtime
    except OSError:
        return False
    return (now if now is not None else time.time()) - beat <= SHARED_BUFFER_STALE_S


def _atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder and rename: readers see old or new, whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class BufferPublisher:
    """This process's open buffers, published per project folder. Safe from any thread."""

    def __init__(self, max_total_bytes: int = SHARED_BUFFERS_MAX_TOTAL_BYTES) -> None:
        self.pid = os.getpid()
        self._max_total = max_total_bytes
        self._lock = threading.Lock()
        self._sizes: dict[tuple[Path, str], int] = {}  # (project folder, rel) -> bytes published
        self._folders: set[Path] = set()  # folders whose heartbeat this process keeps
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def publish(self, folder: Path, rel: str, text: str, max_bytes: int) -> bool:
        """Publish one buffer; False (and any older copy withdrawn) when it is over a cap."""
        size = len(text.encode("utf-8", "surrogatepass"))
        key = (folder, rel)
        with self._lock:
            others = sum(self._sizes.values()) - self._sizes.get(key, 0)
            fits = size <= max_bytes and others + size <= self._max_total
            if fits:
                self._sizes[key] = size
            else:
                self._sizes.pop(key, None)
            new_folder = fits and folder not in self._folders
            if new_folder:
                self._folders.add(folder)
        if not fits:
            self._remove(_buffer_file(folder, rel))
            return False
        if new_folder:
            (folder / BUFFERS_DIR).mkdir(parents=True, exist_ok=True)
            self._sweep_dead(folder)
            self._beat(folder)
            self._start_heartbeat()
        record = {"format": _FORMAT, "path": rel, "pid": self.pid, "written": time.time()}
        payload = json.dumps({**record, "text": text}, ensure_ascii=False)
        try:
            _atomic_write(_buffer_file(folder, rel), payload.encode("utf-8", "surrogatepass"))
        except OSError:
            log.warning("could not publish the buffer of %s", rel, exc_info=True)
            with self._lock:
                self._sizes.pop(key, None)
            return False
        return True

    def withdraw(self, folder: Path, rel: str) -> None:
        with self._lock:
            self._sizes.pop((folder, rel), None)
        self._remove(_buffer_file(folder, rel))

    def withdraw_folder(self, folder: Path) -> None:
        """Remove every buffer and the heartbeat this process published in one project folder."""
        with self._lock:
            rels = [rel for (f, rel) in self._sizes if f == folder]
            for rel in rels:
                self._sizes.pop((folder, rel), None)
            self._folders.discard(folder)
        for rel in rels:
            self._remove(_buffer_file(folder, rel))
        self._remove(_heartbeat_file(folder, self.pid))

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(SHARED_BUFFER_HEARTBEAT_S * 2)
        with self._lock:
            folders = set(self._folders) | {f for f, _ in self._sizes}
        for folder in folders:
            self.withdraw_folder(folder)

    # --- internals ---
    def _beat(self, folder: Path) -> None:
        path = _heartbeat_file(folder, self.pid)
        try:
            path.touch(mode=0o600)
            os.utime(path)
        except OSError:
            log.debug("heartbeat failed in %s", folder, exc_info=True)

    def _start_heartbeat(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(
                target=self._heartbeat_loop, name="cc-buffer-heartbeat", daemon=True
            )
        self._thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(SHARED_BUFFER_HEARTBEAT_S):
            with self._lock:
                folders = list(self._folders)
            for folder in folders:
                self._beat(folder)

    def _sweep_dead(self, folder: Path) -> None:
        """Leftovers of a publisher that died without cleaning up (killed, crashed)."""
        now = time.time()
        for path in (folder / BUFFERS_DIR).glob("*.json"):
            record = _load(path)
            if record is None or not publisher_alive(folder, record.pid, now):
                self._remove(path)
        for beat in (folder / BUFFERS_DIR).glob("alive-*"):
            pid = beat.name.removeprefix("alive-")
            if pid.isdigit() and not publisher_alive(folder, int(pid), now):
                self._remove(beat)

    @staticmethod
    def _remove(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


def _load(path: Path) -> PublishedBuffer | None:
    try:
        raw = json.loads(path.read_bytes().decode("utf-8", "surrogatepass"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
        return None
    rel, text, pid, written = raw.get("path"), raw.get("text"), raw.get("pid"), raw.get("written")
    if not (
        isinstance(rel, str)
        and isinstance(text, str)
        and isinstance(pid, int)
        and isinstance(written, int | float)
    ):
        return None
    return PublishedBuffer(rel, text, pid, float(written))


def read_published(folder: Path, rel: str, disk_mtime: float | None) -> PublishedBuffer | None:
    """The live buffer another process published for `rel`, if it is at least as new as the
    disk file (`disk_mtime`, None when the file is not on disk); else None: read the disk."""
    path = _buffer_file(folder, rel)
    if not path.exists():  # the common case: one stat, no read
        return None
    record = _load(path)
    if record is None or record.rel != rel:
        return None
    if not publisher_alive(folder, record.pid):
        return None
    if disk_mtime is not None and record.written < disk_mtime:
        return None  # saved or changed on disk since: the disk is newer
    return record
