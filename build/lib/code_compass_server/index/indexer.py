"""Incremental indexing of one project: scan → diff against the catalog → parse → commit in batches.

Only files whose content hash changed are parsed; a file whose size and mtime are unchanged is not
even read. Each batch is written to Tantivy and committed before the catalog transactions that
record it (see catalog.py), so a kill at any moment leaves the catalog describing a state that
the lexical index contains, and the next run repairs the rest.

A long run gives way to urgent work (an editor buffer, a save) at checkpoints: between files,
while it waits for the parse pool, and between catalog slices of a batch. The urgent job writes
its paths and commits; the run then forgets those paths from what it had staged, so the newer
write stands, and goes on.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from code_compass_server.index.catalog import FileRow
from code_compass_server.index.languages import language_for
from code_compass_server.index.lexical import LexicalDoc
from code_compass_server.index.parse_pool import LoadArgs, LoadedFile, load_guarded, loader
from code_compass_server.index.project import Project
from code_compass_server.index.scan import (
    FileEntry,
    ScanResult,
    ScanSettings,
    classify_path,
    scan_workspace,
)
from code_compass_server.index.summary import (
    MAX_SKIPPED_LISTED,
    IndexProgress,
    IndexSummary,
    SkippedPath,
)

# Files per Tantivy commit, or fewer when BATCH_SECONDS pass first: Tantivy indexes in its own
# thread while Python parses the next files, so rare commits keep both cores busy, and searches
# see progress every few seconds during a big index. Not rarer: a commit waits for Tantivy to
# index all it was given, and an urgent job's commit waits for it too (~0.3 s for 2,000 files).
BATCH_FILES = 500
BATCH_SECONDS = 2.0
# Files per catalog transaction when a batch is recorded: a checkpoint between slices keeps
# urgent work from waiting for a whole batch (2,000 files took ~0.6 s to record in one).
CATALOG_SLICE_FILES = 100
# How long the run waits for the scan before it looks at its checkpoint again.
SCAN_TICK_S = 0.02
PROGRESS_INTERVAL_S = 0.5

ProgressFn = Callable[[IndexProgress], None]
Overlay = Callable[[str], str | None]


class Checkpoint(Protocol):
    """Where a long write lets urgent work (buffers, saves) in; supplied by the scheduler."""

    def due(self) -> bool:
        """Urgent work is waiting (cheap: asked between every two files)."""
        ...

    def run(self, project: str, staged: set[str]) -> set[str]:
        """Run the urgent work now. `staged`: this project's paths the caller has sent to Tantivy
        but not yet to the catalog. Returns this project's paths the urgent work wrote."""
        ...


@dataclass(slots=True)
class _Writes:
    """What a run has sent to Tantivy (or will delete) and not yet recorded in the catalog."""

    batch: list[LoadedFile] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # paths to remove from the stores
    touched: list[tuple[str, int, int]] = field(default_factory=list)  # unchanged: new stat

    def __bool__(self) -> bool:
        return bool(self.batch or self.dropped or self.touched)

    def paths(self) -> set[str]:
        return {
            *(i.row.path for i in self.batch),
            *self.dropped,
            *(rel for rel, _s, _m in self.touched),
        }

    def forget(self, paths: set[str]) -> None:
        """Someone newer wrote these paths (and committed Tantivy): theirs stands."""
        if not paths:
            return
        self.batch = [i for i in self.batch if i.row.path not in paths]
        self.dropped = [p for p in self.dropped if p not in paths]
        self.touched = [t for t in self.touched if t[0] not in paths]

    def take(self, n: int) -> _Writes:
        """Split off (and return) up to `n` paths of each kind, for one catalog transaction."""
        part = _Writes(self.batch[:n], self.dropped[:n], self.touched[:n])
        self.batch, self.dropped, self.touched = self.batch[n:], self.dropped[n:], self.touched[n:]
        return part

    def clear(self) -> None:
        self.batch, self.dropped, self.touched = [], [], []


@dataclass(slots=True)
class PathsResult:
    stats: dict[str, int]  # changed, deleted, unchanged, skip reasons
    written: set[str]  # paths now current in the index (incl. those urgent work wrote meanwhile)


def give_way(checkpoint: Checkpoint | None, project: str, writes: _Writes) -> set[str]:
    """Let urgent work in if any waits; what it wrote replaces what `writes` staged.
    Returns the paths it wrote."""
    if checkpoint is None or not checkpoint.due():
        return set()
    urgent = checkpoint.run(project, writes.paths())
    writes.forget(urgent)
    return urgent


def _entry(root: Path, rel: str) -> FileEntry:
    """A path as the scan would list it (an unsaved new file has no stat yet)."""
    abs_path = root / rel
    try:
        st = abs_path.stat()
        size, mtime = st.st_size, st.st_mtime_ns
    except OSError:
        size, mtime = 0, 0
    lang = language_for(rel) or "text"
    return FileEntry(rel=rel, abs=abs_path, size=size, mtime_ns=mtime, language=lang)


class ProjectIndexer:
    """Writes one project's index. The scheduler runs one job at a time; a job it runs at a
    checkpoint of another (same thread) may re-enter, hence the re-entrant lock."""

    def __init__(
        self,
        project: Project,
        settings: ScanSettings,
        on_paths_replaced: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.project = project
        self.settings = settings
        # Called after each catalog write with the paths whose old chunks are gone (vectors).
        self.on_paths_replaced = on_paths_replaced
        self._lock = threading.RLock()

    # --- full (incremental) run ---
    def run(
        self,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        overlay: Overlay | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> IndexSummary:
        with self._lock:
            return _Run(self, progress, cancel, overlay, checkpoint).run()

    # --- a few paths (watcher events, editor buffers) ---
    def update_paths(
        self,
        rels: Iterable[str],
        overlay: Overlay | None = None,
        *,
        cancel: threading.Event | None = None,
        checkpoint: Checkpoint | None = None,
        restage: frozenset[str] = frozenset(),
    ) -> PathsResult:
        """Re-index the given paths now (created, modified or deleted).

        `restage`: paths an interrupted run staged in Tantivy but did not record; the catalog
        can't vouch for them, so they are rewritten (or deleted) whatever it says."""
        with self._lock:
            p = self.project
            if not p.try_upgrade():
                return PathsResult({"read_only": 1}, set())
            writes = _Writes()
            stats: Counter[str] = Counter()
            written: set[str] = set()
            for rel in dict.fromkeys(rels):
                if cancel is not None and cancel.is_set():
                    break
                written |= give_way(checkpoint, p.name, writes)
                if rel in written:
                    continue  # urgent work just wrote it
                self._update_one(rel, overlay, rel in restage, writes, stats)
                written.add(rel)
            if writes:
                written |= self.flush(writes, checkpoint)
            return PathsResult(dict(stats), written)

    def _update_one(
        self,
        rel: str,
        overlay: Overlay | None,
        restage: bool,
        writes: _Writes,
        stats: Counter[str],
    ) -> None:
        p = self.project
        old = p.catalog.file(rel)
        buffered = overlay(rel) if overlay else None
        abs_path = p.root / rel
        reason = classify_path(p.root, rel, self.settings)
        if buffered is None and (reason or not abs_path.is_file()):
            if old or restage:
                writes.dropped.append(rel)
                stats["deleted"] += 1 if old else 0
            return
        old_hash = old.hash if old and not restage else None
        args = (_entry(p.root, rel), old_hash, buffered, self.settings.max_file_bytes)
        result = load_guarded(args)
        if isinstance(result, str):
            stats[result] += 1
            if result != "unchanged" and (old or restage):
                writes.dropped.append(rel)
        else:
            self.stage(result)
            writes.batch.append(result)
            stats["changed"] += 1

    # --- writing ---
    def stage(self, item: LoadedFile) -> None:
        """Hand a parsed file to Tantivy now: its thread indexes while we parse the next file."""
        if self.project.read_only:
            return
        docs = [
            LexicalDoc(cid, ch.path, ch.language, cat, ch.symbol, ch.text, code)
            for (cid, ch, cat), code in zip(item.chunks, item.terms, strict=True)
        ]
        self.project.lexical.replace_paths([item.row.path], docs)

    def flush(self, writes: _Writes, checkpoint: Checkpoint | None) -> set[str]:
        """Commit Tantivy, then record the writes in the catalog slice by slice, with a
        checkpoint between slices. Empties `writes`; returns the paths urgent work wrote."""
        p = self.project
        urgent: set[str] = set()
        if p.read_only:
            writes.clear()
            return urgent
        if writes.dropped:
            p.lexical.replace_paths(writes.dropped, [])
        p.lexical.commit()
        while writes:
            part = writes.take(CATALOG_SLICE_FILES)
            with p.catalog.transaction() as c:
                for path in part.dropped:
                    p.catalog.delete_file(c, path)
                for item in part.batch:
                    p.catalog.put_file(c, item.row, item.chunks, item.symbols)
                for rel, size, mtime in part.touched:
                    p.catalog.touch_file(c, rel, size, mtime)
            replaced = [*part.dropped, *(i.row.path for i in part.batch)]
            if self.on_paths_replaced and replaced:
                self.on_paths_replaced(replaced)
            if writes:
                urgent |= give_way(checkpoint, p.name, writes)
        return urgent


class _Run:
    """One full (incremental) run of a project; its state lives here, not in the indexer."""

    def __init__(
        self,
        indexer: ProjectIndexer,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        overlay: Overlay | None,
        checkpoint: Checkpoint | None,
    ) -> None:
        self.indexer = indexer
        self.p = indexer.project
        self.emit: ProgressFn = progress or (lambda _e: None)
        self.cancel = cancel
        self.overlay = overlay
        self.checkpoint = checkpoint
        self.summary = IndexSummary(
            project=self.p.name, root=str(self.p.root), rebuilt=self.p.rebuilt
        )
        self.skipped: Counter[str] = Counter()
        self.skipped_paths: list[SkippedPath] = []
        self.writes = _Writes()
        # Paths urgent work wrote during this run: newer than anything this run loaded.
        self.superseded: set[str] = set()

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def give_way(self) -> None:
        self.superseded |= give_way(self.checkpoint, self.p.name, self.writes)

    def run(self) -> IndexSummary:
        t0 = time.perf_counter()
        p, summary = self.p, self.summary
        if not p.try_upgrade():
            return self._read_only(t0)
        p.begin_full_run(repr(self.indexer.settings))  # stamped before the scan: freshness.py
        summary.rebuilt = p.rebuilt  # becoming the writer verifies, and may repair, the stores
        self.emit(IndexProgress(p.name, "scanning"))
        scan = self._scan()
        t_scan = time.perf_counter()
        self.skipped.update(scan.skipped)
        self.skipped_paths.extend(scan.skipped_paths)
        known = p.catalog.files()
        seen = {e.rel for e in scan.files}
        deleted = [path for path in known if path not in seen]
        self.writes.dropped.extend(deleted)
        summary.scanned = total = len(scan.files)
        self.emit(IndexProgress(p.name, "indexing", 0, total))
        todo = self._todo(scan.files, known)
        self.emit(IndexProgress(p.name, "indexing", summary.unchanged, total))
        self._load_all(todo, total)
        t_parse = time.perf_counter()
        if self.writes:
            self.emit(IndexProgress(p.name, "committing", total, total))
            summary.changed += len(self.writes.batch)
            self.superseded |= self.indexer.flush(self.writes, self.checkpoint)
        summary.deleted = len(deleted)
        if not self.cancelled():
            p.verify_after_run()  # Tantivy and the catalog agree, or Tantivy is refilled
            summary.rebuilt = p.rebuilt
        counts = p.catalog.counts()
        summary.files, summary.chunks = counts["files"], counts["chunks"]
        summary.symbols, summary.embedded = counts["symbols"], counts["embedded"]
        summary.skipped = dict(sorted(self.skipped.items()))
        listed = sorted(self.skipped_paths, key=lambda s: s.path)
        summary.skipped_paths = listed[:MAX_SKIPPED_LISTED]
        summary.seconds = time.perf_counter() - t0
        summary.phase_seconds = {
            "scan": t_scan - t0,
            "parse": t_parse - t_scan,
            "commit": t0 + summary.seconds - t_parse,
        }
        p.extra["last_summary"] = summary
        self.emit(IndexProgress(p.name, "indexed", total, total, counts["chunks"]))
        return summary

    def _scan(self) -> ScanResult:
        """Walk the workspace in a helper thread (a big tree takes a few tenths of a second),
        letting urgent work in meanwhile: nothing is staged yet, the walk only reads."""
        found: list[ScanResult] = []
        failed: list[BaseException] = []

        def walk() -> None:
            try:
                found.append(scan_workspace(self.p.root, self.indexer.settings))
            except BaseException as exc:  # re-raised in the run's own thread
                failed.append(exc)

        walker = threading.Thread(target=walk, name=f"scan-{self.p.name}", daemon=True)
        walker.start()
        while walker.is_alive():
            walker.join(SCAN_TICK_S)
            self.give_way()
        if failed:
            raise failed[0]
        return found[0]

    def _read_only(self, t0: float) -> IndexSummary:
        """Another process is the writer: serve its committed index, write nothing."""
        p, summary = self.p, self.summary
        p.lexical.reload()
        counts = p.catalog.counts()
        summary.files, summary.chunks = counts["files"], counts["chunks"]
        summary.symbols, summary.embedded = counts["symbols"], counts["embedded"]
        summary.read_only = True
        summary.seconds = time.perf_counter() - t0
        self.emit(IndexProgress(p.name, "read-only", 0, 0, counts["chunks"]))
        return summary

    def _todo(self, files: list[FileEntry], known: dict[str, FileRow]) -> list[LoadArgs]:
        todo: list[LoadArgs] = []
        max_bytes = self.indexer.settings.max_file_bytes
        for entry in files:
            old = known.get(entry.rel)
            buffered = self.overlay(entry.rel) if self.overlay else None
            same_stat = old is not None and (old.size, old.mtime_ns) == (entry.size, entry.mtime_ns)
            if buffered is None and same_stat:
                self.summary.unchanged += 1  # stat says unchanged: not even read
            else:
                todo.append((entry, old.hash if old else None, buffered, max_bytes))
        return todo

    def _load_all(self, todo: list[LoadArgs], total: int) -> None:
        summary, writes = self.summary, self.writes
        done = summary.unchanged
        last_flush = last_report = time.perf_counter()
        chunks = self.p.catalog.counts()["chunks"]
        with loader(len(todo)) as loaded:
            for item in loaded(todo):
                if self.cancelled():
                    break
                self.give_way()
                if item is None:
                    continue
                (entry, old_hash, _buf, _max), result = item
                done += 1
                self._take(entry, old_hash, result)
                now = time.perf_counter()
                if len(writes.batch) >= BATCH_FILES or (
                    writes.batch and now - last_flush > BATCH_SECONDS
                ):
                    summary.changed += len(writes.batch)
                    self.superseded |= self.indexer.flush(writes, self.checkpoint)
                    last_flush = last_report = now
                    chunks = self.p.catalog.counts()["chunks"]
                    self.emit(IndexProgress(self.p.name, "indexing", done, total, chunks))
                elif now - last_report > PROGRESS_INTERVAL_S:
                    last_report = now
                    self.emit(IndexProgress(self.p.name, "indexing", done, total, chunks))

    def _take(self, entry: FileEntry, old_hash: str | None, result: LoadedFile | str) -> None:
        if entry.rel in self.superseded:
            return  # urgent work wrote it after this run read it: that write is newer
        if isinstance(result, str):
            if result == "unchanged":
                self.summary.unchanged += 1
                self.writes.touched.append((entry.rel, entry.size, entry.mtime_ns))
            else:
                self.skipped[result] += 1
                self.skipped_paths.append(SkippedPath(entry.rel, result))
                if old_hash is not None:
                    self.writes.dropped.append(entry.rel)
        else:
            self.indexer.stage(result)
            self.writes.batch.append(result)
            self.summary.bytes_indexed += entry.size
