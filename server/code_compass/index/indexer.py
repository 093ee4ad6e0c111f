"""Incremental indexing of one project: scan → diff against the catalog → parse → commit in batches.

Only files whose content hash changed are parsed; a file whose size and mtime are unchanged is not
even read. Each batch is written to Tantivy and committed before the catalog transaction that
records it (see catalog.py), so a kill at any moment leaves the catalog describing a state that
the lexical index contains, and the next run repairs the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from code_compass.index.catalog import FileRow
from code_compass.index.categories import category_for
from code_compass.index.chunk import SkipFile, parse_file
from code_compass.index.languages import language_for
from code_compass.index.lexical import LexicalDoc
from code_compass.index.project import Project
from code_compass.index.scan import FileEntry, ScanSettings, classify_path, scan_workspace
from code_compass.index.summary import IndexProgress, IndexSummary
from code_compass.index.tokens import code_terms
from code_compass.records import Chunk, ParsedFile, SymbolDef

# Files per Tantivy commit + catalog transaction, or fewer when BATCH_SECONDS pass first: Tantivy
# indexes in its own thread while Python parses the next files, so rare commits keep both cores
# busy, and searches still see progress every few seconds during a big index.
BATCH_FILES = 2000
BATCH_SECONDS = 5.0

ProgressFn = Callable[[IndexProgress], None]


def chunk_id(path: str, chunk: Chunk) -> str:
    key = f"{path}\0{chunk.start_line}\0{chunk.end_line}\0{chunk.content_hash}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(slots=True)
class _Parsed:
    row: FileRow
    chunks: list[tuple[str, Chunk, str]]
    symbols: list[SymbolDef]
    terms: list[str]  # per chunk: tokens.code_terms, computed by the loader (parse worker)


def load_file(
    entry: FileEntry, old_hash: str | None, buffered: str | None, max_bytes: int
) -> _Parsed | str:
    """Read, hash and parse one file; a str result is 'unchanged' or a skip reason.

    Module-level and pure so a process pool can run it (see PARALLEL_MIN_FILES).
    """
    if buffered is not None:
        data = buffered.encode("utf-8", "surrogatepass")
    else:
        try:
            data = Path(entry.abs).read_bytes()
        except OSError:
            return "unreadable"
    if len(data) > max_bytes:
        return "too_large"
    digest = file_hash(data)
    if old_hash == digest:
        return "unchanged"
    try:
        parsed: ParsedFile = parse_file(entry.rel, data, entry.language)
    except SkipFile as skip:
        return skip.reason
    except Exception:  # a parser bug must never stop the run: count it and go on
        return "parse_error"
    chunks = [
        (chunk_id(entry.rel, ch), ch, category_for(entry.rel, ch.language)) for ch in parsed.chunks
    ]
    row = FileRow(entry.rel, digest, entry.size, entry.mtime_ns, entry.language, len(chunks))
    terms = [code_terms(ch.text) for ch in parsed.chunks]
    return _Parsed(row, chunks, parsed.symbols, terms)


_LoadArgs = tuple[FileEntry, str | None, str | None, int]

# Big runs parse in worker processes: tree-sitter parsing is the floor of indexing time, and a
# separate process keeps the server's own threads (requests) free of the GIL meanwhile.
PARALLEL_MIN_FILES = 300
# Every core, at low priority: the editor and the server's request threads preempt the workers.
# Measured on Django with 2 cores: 2 workers 11.7 s, 1 worker 14.0 s.
PARSE_WORKERS = max(1, os.cpu_count() or 2)
PARSE_NICE = 10
PARSE_CHUNKSIZE = 8


def _lower_priority() -> None:
    with contextlib.suppress(AttributeError, OSError):  # os.nice: POSIX only
        os.nice(PARSE_NICE)


def _load_star(args: _LoadArgs) -> _Parsed | str:
    return load_file(*args)


@contextmanager
def _loader(n_files: int) -> Iterator[Callable[[list[_LoadArgs]], Iterable[_Parsed | str]]]:
    """`loaded(todo)` yields load results in order, from a process pool for big runs."""
    if n_files < PARALLEL_MIN_FILES or os.environ.get("CODE_COMPASS_NO_PARSE_POOL"):
        yield lambda todo: (_load_star(a) for a in todo)
        return
    # spawn, not fork: the server has threads, and forking a threaded process can deadlock.
    pool = ProcessPoolExecutor(
        PARSE_WORKERS,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_lower_priority,
    )
    try:
        yield lambda todo: pool.map(_load_star, todo, chunksize=PARSE_CHUNKSIZE)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class Indexer:
    """Indexes one project; one instance per project, one run at a time."""

    def __init__(
        self,
        project: Project,
        settings: ScanSettings,
        on_paths_replaced: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.project = project
        self.settings = settings
        # Called after each commit with the paths whose old chunks are gone (vector store cleanup).
        self.on_paths_replaced = on_paths_replaced
        self._run_lock = threading.Lock()

    # --- full (incremental) run ---
    def run(
        self,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        overlay: Callable[[str], str | None] | None = None,
    ) -> IndexSummary:
        with self._run_lock:
            return self._run(progress, cancel, overlay)

    def _run(
        self,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        overlay: Callable[[str], str | None] | None,
    ) -> IndexSummary:
        t0 = time.perf_counter()
        p = self.project
        summary = IndexSummary(project=p.name, root=str(p.root), rebuilt=p.rebuilt)
        emit = progress or (lambda _e: None)
        if not p.try_upgrade():
            # Another process is the writer: serve its committed index, write nothing.
            p.lexical.reload()
            counts = p.catalog.counts()
            summary.files, summary.chunks = counts["files"], counts["chunks"]
            summary.symbols, summary.embedded = counts["symbols"], counts["embedded"]
            summary.read_only = True
            summary.seconds = time.perf_counter() - t0
            emit(IndexProgress(p.name, "read-only", 0, 0, counts["chunks"]))
            return summary
        emit(IndexProgress(p.name, "scanning"))
        scan = scan_workspace(p.root, self.settings)
        skipped: Counter[str] = Counter(scan.skipped)
        known = p.catalog.files()
        seen = {e.rel for e in scan.files}
        deleted = [path for path in known if path not in seen]
        summary.scanned = len(scan.files)
        total = len(scan.files)
        emit(IndexProgress(p.name, "indexing", 0, total))

        batch: list[_Parsed] = []
        touched: list[tuple[str, int, int]] = []
        dropped: list[str] = list(deleted)  # paths to remove from the stores
        last_flush = time.perf_counter()
        todo: list[tuple[FileEntry, str | None, str | None, int]] = []
        for entry in scan.files:
            old = known.get(entry.rel)
            buffered = overlay(entry.rel) if overlay else None
            if (
                buffered is None
                and old
                and (old.size, old.mtime_ns) == (entry.size, entry.mtime_ns)
            ):
                summary.unchanged += 1  # stat says unchanged: not even read
            else:
                todo.append(
                    (entry, old.hash if old else None, buffered, self.settings.max_file_bytes)
                )
        emit(IndexProgress(p.name, "indexing", summary.unchanged, total))
        done = summary.unchanged
        with _loader(len(todo)) as loaded:
            for (entry, old_hash, _buf, _max), result in zip(todo, loaded(todo), strict=True):
                if cancel is not None and cancel.is_set():
                    break
                done += 1
                if isinstance(result, str):
                    if result == "unchanged":
                        summary.unchanged += 1
                        touched.append((entry.rel, entry.size, entry.mtime_ns))
                    else:
                        skipped[result] += 1
                        if old_hash is not None:
                            dropped.append(entry.rel)
                else:
                    self._stage(result)
                    batch.append(result)
                    summary.bytes_indexed += entry.size
                if len(batch) >= BATCH_FILES or (
                    batch and time.perf_counter() - last_flush > BATCH_SECONDS
                ):
                    self._flush(batch, dropped, touched)
                    summary.changed += len(batch)
                    batch, dropped, touched = [], [], []
                    last_flush = time.perf_counter()
                    chunks = p.catalog.counts()["chunks"]
                    emit(IndexProgress(p.name, "indexing", done, total, chunks))
        if batch or dropped or touched:
            self._flush(batch, dropped, touched)
            summary.changed += len(batch)
        summary.deleted = len(deleted)
        counts = p.catalog.counts()
        summary.files = counts["files"]
        summary.chunks = counts["chunks"]
        summary.symbols = counts["symbols"]
        summary.embedded = counts["embedded"]
        summary.skipped = dict(sorted(skipped.items()))
        summary.seconds = time.perf_counter() - t0
        p.extra["last_summary"] = summary
        emit(IndexProgress(p.name, "indexed", total, total, counts["chunks"]))
        return summary

    # --- a few paths (watcher events, editor buffers) ---
    def update_paths(
        self, rels: Iterable[str], overlay: Callable[[str], str | None] | None = None
    ) -> dict[str, int]:
        """Re-index the given paths now (created, modified or deleted); returns counts."""
        with self._run_lock:
            p = self.project
            if not p.try_upgrade():
                return {"read_only": 1}
            batch: list[_Parsed] = []
            dropped: list[str] = []
            stats: Counter[str] = Counter()
            for rel in dict.fromkeys(rels):
                old = p.catalog.file(rel)
                buffered = overlay(rel) if overlay else None
                abs_path = p.root / rel
                reason = classify_path(p.root, rel, self.settings)
                if buffered is None and (reason or not abs_path.is_file()):
                    if old:
                        dropped.append(rel)
                        stats["deleted"] += 1
                    continue
                try:
                    st = abs_path.stat()
                    size, mtime = st.st_size, st.st_mtime_ns
                except OSError:
                    size, mtime = 0, 0
                lang = language_for(rel) or "text"
                entry = FileEntry(rel=rel, abs=abs_path, size=size, mtime_ns=mtime, language=lang)
                result = self._load(entry, old, buffered)
                if isinstance(result, str):
                    stats[result] += 1
                    if result != "unchanged" and old:
                        dropped.append(rel)
                else:
                    self._stage(result)
                    batch.append(result)
                    stats["changed"] += 1
            if batch or dropped:
                self._flush(batch, dropped, [])
            return dict(stats)

    # --- internals ---
    def _load(self, entry: FileEntry, old: FileRow | None, buffered: str | None) -> _Parsed | str:
        return load_file(entry, old.hash if old else None, buffered, self.settings.max_file_bytes)

    def _stage(self, item: _Parsed) -> None:
        """Hand a parsed file to Tantivy now: its thread indexes while we parse the next file."""
        if self.project.read_only:
            return
        docs = [
            LexicalDoc(cid, ch.path, ch.language, cat, ch.symbol, ch.text, code)
            for (cid, ch, cat), code in zip(item.chunks, item.terms, strict=True)
        ]
        self.project.lexical.replace_paths([item.row.path], docs)

    def _flush(
        self, batch: list[_Parsed], dropped: list[str], touched: list[tuple[str, int, int]]
    ) -> None:
        p = self.project
        if p.read_only:
            return
        replaced = [*dropped, *(i.row.path for i in batch)]
        if dropped:
            p.lexical.replace_paths(dropped, [])
        p.lexical.commit()
        with p.catalog.transaction() as c:
            for path in dropped:
                p.catalog.delete_file(c, path)
            for item in batch:
                p.catalog.put_file(c, item.row, item.chunks, item.symbols)
            for rel, size, mtime in touched:
                p.catalog.touch_file(c, rel, size, mtime)
        if self.on_paths_replaced and replaced:
            self.on_paths_replaced(replaced)
