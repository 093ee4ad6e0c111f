"""A developer's own version of the files the team index has differently: the local overlay.

The shared tree is what was last pushed. Files this workspace has changed (saved edits, editor
buffers, new files) or deleted are "dirty": the team index's rows for those paths are left out
of this workspace's results, and the local versions are parsed here and searched in memory with
the team index's term statistics (so their BM25 means the same). Nobody else sees them: nothing
is written to the server until `index --database` pushes.
Freshness is by stat (size, mtime): a file is read and hashed again only when its stat changed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from code_compass_server.index.parse_pool import file_hash, load_file
from code_compass_server.index.scan import FileEntry, ScanSettings, scan_workspace
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

    def refresh(self, tree: Callable[[], tuple[int, dict[str, str]]]) -> dict[str, OverlayFile]:
        """The dirty files now; `tree()` gives (tree_version, path -> blob) of the server."""
        with self._lock:
            if time.monotonic() - self._checked < OVERLAY_TTL_S:
                return self._files
            _version, remote = tree()
            settings = self._scan()
            local: dict[str, tuple[FileEntry, str, str | None]] = {}
            for entry in scan_workspace(self.root, settings).files:
                text = self._buffer_text(entry.rel)
                if text is not None:
                    data = text.encode("utf-8", "surrogatepass")
                    blob = blob_key(entry.language, file_hash(data))
                    local[entry.rel] = (entry, blob, text)
                    continue
                old = self._stats.get(entry.rel)
                if old is not None and (old.size, old.mtime_ns) == (entry.size, entry.mtime_ns):
                    local[entry.rel] = (entry, old.blob, None)
                    continue
                try:
                    data = entry.abs.read_bytes()
                except OSError:
                    continue
                if len(data) > settings.max_file_bytes:
                    continue
                blob = blob_key(entry.language, file_hash(data))
                self._stats[entry.rel] = _Stat(entry.size, entry.mtime_ns, blob)
                local[entry.rel] = (entry, blob, None)
            files: dict[str, OverlayFile] = {}
            for rel, (entry, blob, text) in local.items():
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
                if rel not in local:
                    files[rel] = OverlayFile(rel, None)
            self._files = files
            self._checked = time.monotonic()
            return files
