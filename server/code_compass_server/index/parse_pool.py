"""Reading and parsing files for the indexer: one file at a time, or in guarded worker processes.

`load_file` is pure and module-level so worker processes can run it. `GuardedPool` gives each
file a time and memory budget and replaces a worker that exceeds it (the file is counted as a
skip with its reason); workers ignore Ctrl-C, end with their parent and are killed on exit.
Results come back with a pause marker whenever none is ready, so the indexer can look at its
checkpoint while it waits.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from code_compass_server.index.catalog import FileRow
from code_compass_server.index.categories import category_for
from code_compass_server.index.chunk import SkipFile, parse_file
from code_compass_server.index.scan import FileEntry
from code_compass_server.index.tokens import code_terms
from code_compass_server.records import Chunk, ParsedFile, SymbolDef

# The process machinery (socket, subprocess, multiprocessing: ~10 ms of imports) loads with the
# first pool, not with this module: a CLI query that finds its index fresh never parses.
if TYPE_CHECKING:
    import subprocess
    from multiprocessing.connection import Connection

SKIP_TIMEOUT = "parse_timeout"
SKIP_MEMORY = "parse_memory"
SKIP_CRASHED = "parse_crashed"

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
    except MemoryError:  # over the worker's address-space cap
        return SKIP_MEMORY
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

# Budgets per file (docs/rules.md: hostile-file-budget). A worker that takes longer on one file
# is killed and replaced, the file counted under SKIP_TIMEOUT; a worker's address space is
# capped, so a file that needs more ends in MemoryError (SKIP_MEMORY) or in the worker's death
# (SKIP_CRASHED), never in the machine swapping.
PARSE_FILE_TIMEOUT_S = 15.0
PARSE_WORKER_MEMORY_BYTES = 2 * 1024**3
# How often an idle or busy worker checks that the process that started it is still alive.
PARENT_POLL_S = 0.5
# Languages whose parser runs code-like input (PDF content streams) and is always isolated in
# a worker, even for one file: an in-process stall could not be interrupted.
ISOLATED_LANGUAGES = frozenset({"pdf"})


def _lower_priority() -> None:
    with contextlib.suppress(AttributeError, OSError):  # os.nice: POSIX only
        os.nice(PARSE_NICE)


def _cap_memory(limit: int) -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):  # resource: POSIX only
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _die_with_parent(parent: int) -> None:
    """Exit as soon as the parent is gone (re-parented): no worker outlives its indexer,
    whatever killed it (docs/rules.md: workers-die-with-parent)."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(0)


def watch_parent(parent: int) -> None:
    """In a worker process: end it when `parent` is gone. Also the initializer of the jedi
    process, whose pool queue it holds both ends of, so it never sees its parent's pipe close."""
    threading.Thread(target=_die_with_parent, args=(parent,), daemon=True).start()


def _worker_main(conn: Connection, parent: int, memory_limit: int) -> None:
    """A parse worker: one file in, one result out, until the pipe closes or the parent dies."""
    # A session of its own keeps the terminal's Ctrl-C away; an explicit SIGINT is ignored
    # too: the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(parent)
    _lower_priority()
    _cap_memory(memory_limit)
    conn.send(_READY)  # the budget of the first file starts now, not at spawn
    while True:
        try:
            args: LoadArgs | None = conn.recv()
        except (EOFError, OSError):
            return
        if args is None:
            return
        result: LoadedFile | str
        try:
            result = load_file(*args)
        except MemoryError:
            result = SKIP_MEMORY
        try:
            conn.send(result)
        except (OSError, ValueError):
            return


_READY = "ready"
# A worker that has not started within this long is replaced; this many in a row: give up.
WORKER_START_TIMEOUT_S = 60.0
WORKER_START_FAILURES = 3


# Every live worker of this process, so an exit path that skips the pools' own clean-up
# (an exception between spawn and `with`, interpreter exit) still ends them.
_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    import subprocess

    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(1.0)
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def _kill_all() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        _kill(proc)


atexit.register(_kill_all)


def worker_entry() -> None:
    """`python -c` entry of a worker: argv = socket fd, parent pid, memory cap."""
    from multiprocessing.connection import Connection

    fd, parent, memory_limit = (int(a) for a in sys.argv[1:4])
    _worker_main(Connection(fd), parent, memory_limit)


def _worker_env() -> dict[str, str]:
    """The parent's environment, with the folder this package is imported from first on the
    path: the worker imports the same code however the parent found it."""
    here = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, path) if p)}


class _Worker:
    """One worker process and its socket; `task` is the index of the file it is parsing.

    Started as a plain subprocess in a new session (its own process group): a terminal's
    Ctrl-C goes to the foreground group only, so a worker never sees it, even while still
    starting up; the parent ends it (or it ends itself when the parent is gone)."""

    def __init__(self, memory_limit: int) -> None:
        import socket
        import subprocess
        from multiprocessing.connection import Connection

        ours, theirs = socket.socketpair()
        with theirs:
            code = "from code_compass_server.index.parse_pool import worker_entry; worker_entry()"
            argv = [str(theirs.fileno()), str(os.getpid()), str(memory_limit)]
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, *argv],
                env=_worker_env(),
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # the server's stdout is the protocol channel
                start_new_session=True,
            )
        with _LIVE_LOCK:
            _LIVE.add(self.proc)
        self.conn = Connection(ours.detach())
        self.task: int | None = None
        self.ready = False
        self.since = time.monotonic()

    def give(self, index: int, args: LoadArgs) -> None:
        self.conn.send(args)
        self.task, self.since = index, time.monotonic()

    def stop(self) -> None:
        import subprocess

        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(0.5)
        _kill(self.proc)
        self.conn.close()


class GuardedPool:
    """Worker processes with a watchdog: each file has PARSE_FILE_TIMEOUT_S and the worker's
    memory cap; a worker over budget, or dead, is replaced and its file counted as skipped.
    Results come back as they finish (order does not matter to the indexer)."""

    def __init__(
        self,
        workers: int,
        *,
        timeout_s: float = PARSE_FILE_TIMEOUT_S,
        memory_limit: int = PARSE_WORKER_MEMORY_BYTES,
    ) -> None:
        self.size = max(1, workers)
        self.timeout_s = timeout_s
        self.memory_limit = memory_limit
        self.workers: list[_Worker] = []
        self.replaced = 0
        self.start_failures = 0

    def run(self, todo: Sequence[LoadArgs]) -> Iterator[Loaded]:
        from multiprocessing.connection import Connection, wait

        pending = list(range(len(todo)))[::-1]  # popped from the end: todo order
        while len(self.workers) < min(self.size, len(todo)):
            self.workers.append(_Worker(self.memory_limit))
        done = 0
        while done < len(todo):
            for w in self.workers:
                if w.ready and w.task is None and pending:
                    i = pending.pop()
                    try:
                        w.give(i, todo[i])
                    except (OSError, ValueError):  # died while idle: replace, retry the file
                        pending.append(i)
                        self._replace(w)
            watched = {w.conn: w for w in self.workers if w.task is not None or not w.ready}
            finished: list[tuple[int, LoadedFile | str]] = []
            for conn in wait(list(watched), timeout=POOL_TICK_S):
                finished.extend(self._receive(watched[cast(Connection, conn)]))
            finished.extend(self._watchdog())
            if not finished:
                yield None
            for i, result in finished:
                done += 1
                yield todo[i], result

    def _receive(self, w: _Worker) -> list[tuple[int, LoadedFile | str]]:
        task = w.task
        try:
            message = w.conn.recv()
        except (EOFError, OSError):  # the worker died: its file (if any) is the suspect
            if task is None:
                self._start_failed()
            self._replace(w)
            return [] if task is None else [(task, SKIP_CRASHED)]
        if task is None:  # the start signal
            w.ready = True
            self.start_failures = 0
            return []
        w.task = None
        return [(task, message)]

    def _watchdog(self) -> list[tuple[int, LoadedFile | str]]:
        now = time.monotonic()
        out: list[tuple[int, LoadedFile | str]] = []
        for w in list(self.workers):
            if w.task is not None and now - w.since > self.timeout_s:
                out.append((w.task, SKIP_TIMEOUT))
                self._replace(w)
            elif not w.ready and now - w.since > WORKER_START_TIMEOUT_S:
                self._start_failed()
                self._replace(w)
        return out

    def _start_failed(self) -> None:
        self.start_failures += 1
        if self.start_failures >= WORKER_START_FAILURES:
            raise RuntimeError("parse workers do not start")

    def _replace(self, w: _Worker) -> None:
        _kill(w.proc)
        w.conn.close()
        self.replaced += 1
        self.workers[self.workers.index(w)] = _Worker(self.memory_limit)

    def close(self) -> None:
        for w in self.workers:
            if w.task is not None:
                _kill(w.proc)  # a file is still parsing: nobody wants its result now
            w.stop()
        self.workers.clear()


def load_guarded(args: LoadArgs) -> LoadedFile | str:
    """One file: in this process, or in a one-off worker for ISOLATED_LANGUAGES."""
    if args[0].language not in ISOLATED_LANGUAGES:
        return load_file(*args)
    pool = GuardedPool(1)
    try:
        for item in pool.run([args]):
            if item is not None:
                return item[1]
    finally:
        pool.close()
    return SKIP_CRASHED  # unreachable: run() yields one result per file


def _serial(todo: list[LoadArgs]) -> Iterator[Loaded]:
    """Small runs parse in this process; isolated languages still go to one worker."""
    isolated = [a for a in todo if a[0].language in ISOLATED_LANGUAGES]
    for args in todo:
        if args[0].language not in ISOLATED_LANGUAGES:
            yield args, load_file(*args)
    if isolated:
        pool = GuardedPool(1)
        try:
            yield from pool.run(isolated)
        finally:
            pool.close()


@contextmanager
def loader(n_files: int) -> Iterator[Callable[[list[LoadArgs]], Iterator[Loaded]]]:
    """`loaded(todo)` yields load results (from guarded worker processes for big runs), and
    None whenever none is ready within POOL_TICK_S."""
    if n_files < PARALLEL_MIN_FILES or os.environ.get("CODE_COMPASS_NO_PARSE_POOL"):
        yield _serial
        return
    pool = GuardedPool(PARSE_WORKERS)
    try:
        yield pool.run
    finally:
        pool.close()
