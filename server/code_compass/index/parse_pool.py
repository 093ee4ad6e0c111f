"""Reading and parsing files for the indexer: one file at a time, or in a process pool for big runs.

`load_file` is pure and module-level so worker processes can run it; the pool's results come back
in order, with a pause marker whenever the next one is slow, so the indexer can look at its
checkpoint while it waits.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from code_compass.index.catalog import FileRow
from code_compass.index.categories import category_for
from code_compass.index.chunk import SkipFile, parse_file
from code_compass.index.scan import FileEntry
from code_compass.index.tokens import code_terms
from code_compass.records import Chunk, ParsedFile, SymbolDef

# How long to wait for the pool's next result before handing the caller a pause marker.
POOL_TICK_S = 0.02


def chunk_id(path: str, chunk: Chunk) -> str:
    key = f"{path}\0{chunk.start_line}\0{chunk.end_line}\0{chunk.content_hash}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(slots=True)
class LoadedFile:
    """A parsed file ready to stage: its catalog row, chunks (id, chunk, category), symbols."""

    row: FileRow
    chunks: list[tuple[str, Chunk, str]]
    symbols: list[SymbolDef]
    terms: list[str]  # per chunk: tokens.code_terms, computed by the loader (parse worker)


def load_file(
    entry: FileEntry, old_hash: str | None, buffered: str | None, max_bytes: int
) -> LoadedFile | str:
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
    return LoadedFile(row, chunks, parsed.symbols, terms)


LoadArgs = tuple[FileEntry, str | None, str | None, int]
# A loaded file, or None: "still waiting for the pool" (a moment to look at the checkpoint).
Loaded = tuple[LoadArgs, LoadedFile | str] | None

# Big runs parse in worker processes: tree-sitter parsing is the floor of indexing time, and a
# separate process keeps the server's own threads (requests) free of the GIL meanwhile.
PARALLEL_MIN_FILES = 300
# Every core, at low priority: the editor and the server's request threads preempt the workers.
# Measured on Django with 2 cores: 2 workers 11.7 s, 1 worker 14.0 s.
PARSE_WORKERS = max(1, os.cpu_count() or 2)
PARSE_NICE = 10
PARSE_CHUNKSIZE = 8


def _lower_priority() -> None:
    # Ctrl-C reaches the whole process group: the parent alone handles it and shuts the pool
    # down; a worker interrupted mid-file would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(AttributeError, OSError):  # os.nice: POSIX only
        os.nice(PARSE_NICE)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """While workers are spawned: they inherit the ignored Ctrl-C from their first instruction
    (the initializer comes too late for one still importing). Main thread only: elsewhere
    (the language server's indexing thread) signal handlers cannot be changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _load_star(args: LoadArgs) -> LoadedFile | str:
    return load_file(*args)


def _load_many(todo: Sequence[LoadArgs]) -> list[LoadedFile | str]:
    return [load_file(*a) for a in todo]


def _serial(todo: list[LoadArgs]) -> Iterator[Loaded]:
    for args in todo:
        yield args, _load_star(args)


@contextmanager
def loader(n_files: int) -> Iterator[Callable[[list[LoadArgs]], Iterator[Loaded]]]:
    """`loaded(todo)` yields load results in order (from a process pool for big runs), and None
    whenever the next result takes longer than POOL_TICK_S."""
    if n_files < PARALLEL_MIN_FILES or os.environ.get("CODE_COMPASS_NO_PARSE_POOL"):
        yield _serial
        return
    # spawn, not fork: the server has threads, and forking a threaded process can deadlock.
    pool = ProcessPoolExecutor(
        PARSE_WORKERS,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_lower_priority,
    )

    def loaded(todo: list[LoadArgs]) -> Iterator[Loaded]:
        parts = [todo[i : i + PARSE_CHUNKSIZE] for i in range(0, len(todo), PARSE_CHUNKSIZE)]
        with _sigint_ignored():
            futures = [pool.submit(_load_many, part) for part in parts]
        for part, future in zip(parts, futures, strict=True):
            while True:
                try:
                    results = future.result(timeout=POOL_TICK_S)
                except FutureTimeout:
                    yield None
                    continue
                break
            yield from zip(part, results, strict=True)

    try:
        yield loaded
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
