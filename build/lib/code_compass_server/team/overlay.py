"""A developer's own version of the files the team index has differently: the local overlay.

The shared tree is what was last pushed. Files this workspace has changed (saved edits, editor
buffers, new files) or deleted are "dirty": the team index's rows for those paths are left out
of this workspace's results, and the local versions are parsed here and searched in memory with
the team index's term statistics (so their BM25 means the same). Nobody else sees them: nothing
is written to the server until `index --database` pushes.
Freshness is by stat (size, mtime): a file is read and hashed again only when its stat changed.
A process without a file watcher (a one-shot command) re-walks the tree at most once per
OVERLAY_TTL_S; one with a watcher and an editor (the language server, the MCP server) walks it
once, then re-checks only the paths they name (`notice`), or walks again on a rescan.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from code_compass_server.index.languages import language_for
from code_compass_server.index.parse_pool import file_hash, load_file
from code_compass_server.index.scan import FileEntry, ScanSettings, classify_path, scan_workspace
from code_compass_server.team.content import BlobRecord, blob_from_loaded, blob_key

# A search re-checks the working tree at most this often (a burst of queries scans once).
OVERLAY_TTL_S = 1.0
BM25_K1, BM25_B = 1.2, 0.75


@dataclass(slots=True)
class OverlayFile:
    path: str
    record: BlobRecord | None  # None: deleted here (or unparseable): hidden from results
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # piece hash -> vector


@dataclass(slots=True)
class _Stat:
    size: int
    mtime_ns: int
    blob: str


def bm25(tf: int, dl: int, weight: float, avgdl: float) -> float:
    """Tantivy's BM25 term score (k1 1.2, b 0.75) given weight = boost x idf."""
    return weight * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl))


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class WorkspaceOverlay:
    def __init__(
        self,
        root: Path,
        scan: Callable[[], ScanSettings],
        buffer_text: Callable[[str], str | None],
    ) -> None:
        self.root = root
        self._scan = scan
        self._buffer_text = buffer_text
        self._stats: dict[str, _Stat] = {}
        self._files: dict[str, OverlayFile] = {}
        self._checked = 0.0
        self._lock = threading.Lock()
        self._watched = False  # a watcher reports changes: no periodic walk
        self._noticed: set[str] = set()
        self._local: dict[str, tuple[FileEntry, str, str | None]] = {}

    def watched(self) -> None:
        """From now on a watcher (and the editor) report what changes: no periodic walks."""
        with self._lock:
            self._watched = True

    def notice(self, paths: set[str] | None) -> None:
        """These paths changed (None: ignore rules or folders did: walk again)."""
        with self._lock:
            if paths is None:
                self._checked = 0.0
            else:
                self._noticed |= paths

    def refresh(self, tree: Callable[[], tuple[int, dict[str, str]]]) -> dict[str, OverlayFile]:
        """The dirty files now; `tree()` gives (tree_version, path -> blob) of the server."""
        with self._lock:
            walk = not self._checked or (
                not self._watched and time.monotonic() - self._checked >= OVERLAY_TTL_S
            )
            if not walk and not self._noticed:
                return self._files  # a watched workspace where nothing changed
            _version, remote = tree()  # a push may have landed meanwhile
            settings = self._scan()
            if walk:
                self._local = self._walk(settings)
            else:
                for rel in self._noticed:
                    self._recheck(rel, settings)
            self._noticed.clear()
            self._files = self._dirty(remote, settings)
            if walk:
                self._checked = time.monotonic()
            return self._files

    def _walk(self, settings: ScanSettings) -> dict[str, tuple[FileEntry, str, str | None]]:
        local: dict[str, tuple[FileEntry, str, str | None]] = {}
        for entry in scan_workspace(self.root, settings).files:
            found = self._blob_of(entry, settings)
            if found is not None:
                local[entry.rel] = found
        return local

    def _recheck(self, rel: str, settings: ScanSettings) -> None:
        """One path again, by the scan's own rules: gone, ignored or secret -> dropped."""
        self._local.pop(rel, None)
        buffered = self._buffer_text(rel) is not None
        if classify_path(self.root, rel, settings) or not (buffered or (self.root / rel).is_file()):
            return
        try:
            st = (self.root / rel).stat()
            size, mtime = st.st_size, st.st_mtime_ns
        except OSError:
            size, mtime = 0, 0
        entry = FileEntry(rel, self.root / rel, size, mtime, language_for(rel) or "text")
        found = self._blob_of(entry, settings)
        if found is not None:
            self._local[rel] = found

    def _blob_of(
        self, entry: FileEntry, settings: ScanSettings
    ) -> tuple[FileEntry, str, str | None] | None:
        text = self._buffer_text(entry.rel)
        if text is not None:
            data = text.encode("utf-8", "surrogatepass")
            return entry, blob_key(entry.language, file_hash(data)), text
        old = self._stats.get(entry.rel)
        if old is not None and (old.size, old.mtime_ns) == (entry.size, entry.mtime_ns):
            return entry, old.blob, None
        try:
            data = entry.abs.read_bytes()
        except OSError:
            return None
        if len(data) > settings.max_file_bytes:
            return None
        blob = blob_key(entry.language, file_hash(data))
        self._stats[entry.rel] = _Stat(entry.size, entry.mtime_ns, blob)
        return entry, blob, None

    def _dirty(self, remote: dict[str, str], settings: ScanSettings) -> dict[str, OverlayFile]:
        files: dict[str, OverlayFile] = {}
        for rel, (entry, blob, text) in self._local.items():
            if remote.get(rel) == blob:
                continue
            kept = self._files.get(rel)
            if kept is not None and kept.record is not None and kept.record.blob == blob:
                files[rel] = kept
                continue
            loaded = load_file(entry, None, text, settings.max_file_bytes)
            record = None if isinstance(loaded, str) else blob_from_loaded(loaded, blob, None)
            files[rel] = OverlayFile(rel, record)
        for rel in remote:
            if rel not in self._local:
                files[rel] = OverlayFile(rel, None)
        return files
