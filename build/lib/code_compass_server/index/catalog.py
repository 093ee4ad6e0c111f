"""The SQLite catalog of one project: files, chunks and symbols (WAL, one writer).

The catalog is the source of truth for what is indexed. Tantivy and the vector store are derived
from it; every write to them happens before the catalog transaction that records it, so after a
crash the catalog never claims a state the other stores lack (the file is re-indexed instead).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.records import Chunk, SymbolDef

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT NOT NULL, chunks INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    language TEXT NOT NULL, kind TEXT NOT NULL, symbol TEXT NOT NULL, signature TEXT NOT NULL,
    doc TEXT NOT NULL, hash TEXT NOT NULL, category TEXT NOT NULL, text TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0, context TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(embedded) WHERE embedded = 0;
CREATE TABLE IF NOT EXISTS symbols (
    name TEXT NOT NULL, kind TEXT NOT NULL, container TEXT NOT NULL, path TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, name_line INTEGER NOT NULL,
    name_col INTEGER NOT NULL, signature TEXT NOT NULL, language TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_name_nocase ON symbols(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
"""


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str
    chunks: int


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: str
    path: str
    start_line: int
    end_line: int
    language: str
    kind: str
    symbol: str
    signature: str
    doc: str
    hash: str
    category: str
    text: str
    embedded: bool
    context: str = ""  # records.Chunk.context


class Catalog:
    def __init__(self, db_path: Path) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        # The writer's connection; the lock keeps its transactions whole. Other threads read
        # through their own connection (WAL: a reader sees the last commit and never waits for
        # the writer; measured during a Django index, a search waited ~0.7 s for a batch).
        # A folder this process cannot write (a read-only mount of a shared index) is opened
        # as immutable: SQLite then needs no -shm file, which it could not create there.
        self._target: str | Path = db_path
        if db_path.exists() and not os.access(db_path.parent, os.W_OK):
            self._target = f"{db_path.resolve().as_uri()}?immutable=1"
        self._conn = self._connect()
        if self._target == db_path:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._writing: int | None = None  # thread id inside transaction(), if any
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._generation = 0  # bumped by every commit: a count taken across one is not kept
        # counts() is asked for on every status/progress message; cache it until a write.
        self._counts: dict[str, int] | None = None

    def _connect(self) -> sqlite3.Connection:
        uri = isinstance(self._target, str)
        conn = sqlite3.connect(self._target, check_same_thread=False, isolation_level=None, uri=uri)
        conn.execute("PRAGMA busy_timeout=5000")
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            outer = self._writing
            self._writing = threading.get_ident()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._writing = outer
            self._generation += 1
            self._counts = None

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        if self._writing == threading.get_ident():  # inside our own transaction: see its writes
            with self._lock:
                return self._conn.execute(sql, args).fetchall()
        return self._reader().execute(sql, args).fetchall()

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise sqlite3.ProgrammingError("catalog closed")
            conn = self._connect()
            with self._readers_lock:  # not _lock: the writer may hold that for a whole batch
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    # --- meta ---
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # --- files ---
    def files(self) -> dict[str, FileRow]:
        rows = self._query("SELECT path, hash, size, mtime_ns, language, chunks FROM files")
        return {str(r[0]): FileRow(*r) for r in rows}  # type: ignore[arg-type]

    def file_stats(self) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every file: what a freshness check compares, no more."""
        return self._query("SELECT path, size, mtime_ns FROM files")  # type: ignore[return-value]

    def file(self, path: str) -> FileRow | None:
        rows = self._query(
            "SELECT path, hash, size, mtime_ns, language, chunks FROM files WHERE path = ?", (path,)
        )
        return FileRow(*rows[0]) if rows else None  # type: ignore[arg-type]

    def touch_file(self, c: sqlite3.Connection, path: str, size: int, mtime_ns: int) -> None:
        c.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def put_file(
        self,
        c: sqlite3.Connection,
        row: FileRow,
        chunks: list[tuple[str, Chunk, str]],
        symbols: list[SymbolDef],
    ) -> None:
        """Replace everything known about one file (inside the caller's transaction)."""
        self.delete_file(c, row.path)
        c.execute(
            "INSERT INTO files(path, hash, size, mtime_ns, language, chunks) VALUES (?,?,?,?,?,?)",
            (row.path, row.hash, row.size, row.mtime_ns, row.language, len(chunks)),
        )
        c.executemany(
            "INSERT OR REPLACE INTO chunks(id, path, start_line, end_line, language, kind, symbol,"
            " signature, doc, hash, category, text, context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    cid,
                    ch.path,
                    ch.start_line,
                    ch.end_line,
                    ch.language,
                    ch.kind,
                    ch.symbol,
                    ch.signature,
                    ch.doc,
                    ch.content_hash,
                    cat,
                    ch.text,
                    ch.context,
                )
                for cid, ch, cat in chunks
            ],
        )
        c.executemany(
            "INSERT INTO symbols(name, kind, container, path, start_line, end_line, name_line,"
            " name_col, signature, language) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    s.name,
                    s.kind,
                    s.container,
                    s.path,
                    s.start_line,
                    s.end_line,
                    s.name_line,
                    s.name_col,
                    s.signature,
                    s.language,
                )
                for s in symbols
            ],
        )

    def delete_file(self, c: sqlite3.Connection, path: str) -> None:
        c.execute("DELETE FROM files WHERE path = ?", (path,))
        c.execute("DELETE FROM chunks WHERE path = ?", (path,))
        c.execute("DELETE FROM symbols WHERE path = ?", (path,))

    def paths_under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        rows = self._query(
            "SELECT path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
        )
        return [str(r[0]) for r in rows]

    # --- chunks ---
    _CHUNK_COLS = (
        "id, path, start_line, end_line, language, kind, symbol, signature, doc, hash, category,"
        " text, embedded, context"
    )

    def chunks_by_ids(self, ids: Iterable[str]) -> dict[str, ChunkRow]:
        ids = list(ids)
        out: dict[str, ChunkRow] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for r in self._query(
                f"SELECT {self._CHUNK_COLS} FROM chunks WHERE id IN ({marks})", tuple(part)
            ):
                row = ChunkRow(*r)  # type: ignore[arg-type]
                out[row.id] = row
        return out

    def chunks_for_path(self, path: str) -> list[ChunkRow]:
        rows = self._query(
            f"SELECT {self._CHUNK_COLS} FROM chunks WHERE path = ? ORDER BY start_line", (path,)
        )
        return [ChunkRow(*r) for r in rows]  # type: ignore[arg-type]

    def chunks_at(self, path: str, line: int) -> list[ChunkRow]:
        """Chunks of `path` holding `line`, shortest first."""
        rows = self._query(
            f"SELECT {self._CHUNK_COLS} FROM chunks WHERE path = ? AND start_line <= ?"
            " AND end_line >= ? ORDER BY end_line - start_line, start_line",
            (path, line, line),
        )
        return [ChunkRow(*r) for r in rows]  # type: ignore[arg-type]

    def pending_embeddings(self, limit: int) -> list[ChunkRow]:
        """Newest first: a file just saved is embedded before an old backlog."""
        rows = self._query(
            f"SELECT {self._CHUNK_COLS} FROM chunks WHERE embedded = 0 ORDER BY rowid DESC LIMIT ?",
            (limit,),
        )
        return [ChunkRow(*r) for r in rows]  # type: ignore[arg-type]

    def mark_embedded(self, ids: Iterable[str]) -> None:
        with self.transaction() as c:
            c.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?", [(i,) for i in ids])

    def counts(self) -> dict[str, int]:
        cached = self._counts
        if cached is None:
            generation = self._generation
            cached = self._count()
            if generation == self._generation:  # no commit meanwhile: safe to keep
                self._counts = cached
        return dict(cached)

    def invalidate_counts(self) -> None:
        """Another process may have written (read-only mode): count again next time."""
        self._generation += 1
        self._counts = None

    def _count(self) -> dict[str, int]:
        files = self._query("SELECT COUNT(*) FROM files")[0][0]
        # COUNT(*) reads the smallest index, the pending count the partial one: summing the
        # flag instead read every chunk's text (0.1 s on Django, at every cold `status`).
        chunks = self._query("SELECT COUNT(*) FROM chunks")[0][0]
        pending = self._query("SELECT COUNT(*) FROM chunks WHERE embedded = 0")[0][0]
        embedded = int(chunks) - int(pending)  # type: ignore[call-overload]
        symbols = self._query("SELECT COUNT(*) FROM symbols")[0][0]
        return {
            "files": int(files),  # type: ignore[call-overload]
            "chunks": int(chunks),  # type: ignore[call-overload]
            "embedded": embedded,
            "symbols": int(symbols),  # type: ignore[call-overload]
        }

    # --- symbols ---
    _SYM_COLS = (
        "name, kind, container, path, start_line, end_line, name_line, name_col, signature,"
        " language"
    )

    def symbols_named(self, name: str) -> list[SymbolDef]:
        rows = self._query(
            f"SELECT {self._SYM_COLS} FROM symbols WHERE name = ? ORDER BY path, start_line",
            (name,),
        )
        return [SymbolDef(*r) for r in rows]  # type: ignore[arg-type]

    def symbols_named_nocase(
        self, names: Sequence[str], prefixes: Sequence[str] = ()
    ) -> list[SymbolDef]:
        """Definitions whose name equals one of `names` or starts with one of `prefixes`,
        ignoring case (`default_timeout` finds DEFAULT_TIMEOUT, `defaulttimeout` DefaultTimeout,
        the prefix `default_timeout_` DEFAULT_TIMEOUT_CONFIG). Both use the NOCASE index: a
        prefix is the range [p, p + U+FFFF)."""
        clauses: list[str] = []
        args: list[object] = []
        if names:
            clauses.append(f"name COLLATE NOCASE IN ({','.join('?' * len(names))})")
            args += list(names)
        for p in prefixes:
            clauses.append("(name COLLATE NOCASE >= ? AND name COLLATE NOCASE < ?)")
            args += [p, p + "\uffff"]
        if not clauses:
            return []
        rows = self._query(
            f"SELECT {self._SYM_COLS} FROM symbols WHERE {' OR '.join(clauses)}"
            " ORDER BY path, start_line",
            tuple(args),
        )
        return [SymbolDef(*r) for r in rows]  # type: ignore[arg-type]

    def symbols_in_file(self, path: str) -> list[SymbolDef]:
        rows = self._query(
            f"SELECT {self._SYM_COLS} FROM symbols WHERE path = ? ORDER BY start_line", (path,)
        )
        return [SymbolDef(*r) for r in rows]  # type: ignore[arg-type]

    def all_symbol_names(self) -> list[str]:
        return [str(r[0]) for r in self._query("SELECT DISTINCT name FROM symbols")]

    def languages(self) -> set[str]:
        """The languages of the indexed files (what a `language` filter can match)."""
        return {str(r[0]) for r in self._query("SELECT DISTINCT language FROM files")}

    def check(self) -> bool:
        try:
            return self._query("PRAGMA quick_check")[0][0] == "ok"
        except sqlite3.DatabaseError:
            return False

    def close(self) -> None:
        with self._lock, self._readers_lock:
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._conn.close()
