"""Push a working tree to the team index: hashes first, then only what the server lacks.

1. Scan the workspace as the local index does (same ignore rules, secrets never sent) and hash
   every file: a path -> blob map (blob = bytes + language, content.blob_key).
2. Compare with the project's tree on the server: changed and new paths, removed paths.
3. Blobs the server lacks are parsed here (the same parse pool as the local index) and their
   pieces embedded, but only the pieces whose text the server has no vector for (vectors are
   keyed by the text the model reads, so a moved or copied function costs nothing).
4. Each batch of files is one transaction: content rows, then the tree entries that point at
   them and the BM25 statistics that count them. A kill at any moment leaves every path at its
   old or its new blob, never half; the next push finds the rest still to do. Batches of one
   project are serialised by an advisory lock, so two developers pushing at once neither
   duplicate nor lose rows (content inserts skip what exists; the tree is last-writer-wins).
A second developer on the same commit sends only hashes: nothing is parsed or embedded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from code_compass_server.index.parse_pool import LoadArgs, LoadedFile, file_hash, loader
from code_compass_server.index.scan import FileEntry, ScanSettings, scan_workspace
from code_compass_server.team.access import ensure_project
from code_compass_server.team.content import (
    FIELD_BODY,
    FIELD_CODE,
    FIELD_PATH,
    FIELD_SYMBOL,
    BlobRecord,
    LineCounter,
    blob_from_loaded,
    blob_key,
    path_field,
    pieces_of,
)
from code_compass_server.team.schema import migrate, require_current

if TYPE_CHECKING:
    import numpy as np
    import psycopg

log = logging.getLogger(__name__)

PUSH_BATCH_FILES = 200
BULK_ROWS = 5_000  # rows per INSERT ... unnest statement (roles under row-level security)
CHUNK_COLUMNS = (
    ("project_id", "int"), ("blob", "text"), ("ordinal", "int"), ("start_line", "int"),
    ("end_line", "int"), ("language", "text"), ("kind", "text"), ("symbol", "text"),
    ("signature", "text"), ("doc", "text"), ("category", "text"), ("content_hash", "text"),
    ("text", "text"), ("context", "text"),
)  # fmt: skip
SYMBOL_COLUMNS = (
    ("project_id", "int"), ("blob", "text"), ("name", "text"), ("kind", "text"),
    ("container", "text"), ("start_line", "int"), ("end_line", "int"), ("name_line", "int"),
    ("name_col", "int"), ("signature", "text"), ("language", "text"),
)  # fmt: skip
POSTING_COLUMNS = (
    ("project_id", "int"), ("field", "int2"), ("term", "text"), ("blob", "text"),
    ("ordinal", "int"), ("tf", "int"), ("dl", "int"),
)  # fmt: skip
PIECE_COLUMNS = (
    ("project_id", "int"), ("blob", "text"), ("ordinal", "int"), ("piece", "int"),
    ("text_hash", "text"),
)  # fmt: skip
EMBED_GROUP = 64
_LOCK_SALT = 0x43430000  # advisory lock key = salt + project id


class TextEmbedder(LineCounter, Protocol):
    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class VectorCache(Protocol):
    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None: ...


@dataclass(slots=True)
class PushProgress:
    project: str
    phase: str  # hash | parse | embed | write | done
    done: int
    total: int


@dataclass(slots=True)
class PushSummary:
    project: str
    files: int = 0  # paths in the pushed tree
    changed: int = 0  # paths whose blob the server's tree did not have
    removed: int = 0
    blobs_parsed: int = 0  # blobs the server lacked: parsed here
    blobs_reused: int = 0  # changed paths whose blob the server already had
    chunks_parsed: int = 0
    pieces_embedded: int = 0  # vectors computed here
    pieces_reused: int = 0  # vectors the server already had for that text
    pieces_cached: int = 0  # vectors this user's local cache already had
    chunks: int = 0  # in the project's tree after the push
    embedded: int = 0
    tree_version: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    phase_seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LocalFile:
    entry: FileEntry
    data_hash: str
    blob: str


def lock_project(conn: psycopg.Connection, project_id: int) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_SALT + project_id,))


def prepare(conn: psycopg.Connection) -> None:
    """Bring the schema up to date, or check it when this role may not migrate."""
    import psycopg

    try:
        migrate(conn)
    except psycopg.errors.InsufficientPrivilege:
        conn.rollback()
        require_current(conn)


def project_id_for(conn: psycopg.Connection, name: str) -> int:
    import psycopg

    from code_compass_server.errors import InputError

    try:
        with conn.transaction():
            return ensure_project(conn, name)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise InputError(
            "project", f"project {name!r} is not on the team index, or this role may not write it"
        ) from exc


def hash_tree(root: Path, scan: ScanSettings) -> tuple[dict[str, LocalFile], dict[str, int]]:
    """path -> LocalFile for every file the local index would index; skips counted by reason."""
    result = scan_workspace(root, scan)
    skipped = dict(result.skipped)
    files: dict[str, LocalFile] = {}
    for entry in result.files:
        try:
            data = entry.abs.read_bytes()
        except OSError:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
            continue
        if len(data) > scan.max_file_bytes:
            skipped["too_large"] = skipped.get("too_large", 0) + 1
            continue
        digest = file_hash(data)
        files[entry.rel] = LocalFile(entry, digest, blob_key(entry.language, digest))
    return files, skipped


def server_tree(conn: psycopg.Connection, project_id: int) -> dict[str, str]:
    rows = conn.execute("SELECT path, blob FROM cc_tree WHERE project_id = %s", (project_id,))
    return {str(p): str(b) for p, b in rows}


def existing_blobs(conn: psycopg.Connection, project_id: int, blobs: Iterable[str]) -> set[str]:
    wanted = sorted(set(blobs))
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT blob FROM cc_blobs WHERE project_id = %s AND blob = ANY(%s)", (project_id, wanted)
    )
    return {str(r[0]) for r in rows}


def existing_vectors(conn: psycopg.Connection, project_id: int, hashes: Iterable[str]) -> set[str]:
    wanted = sorted(set(hashes))
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT text_hash FROM cc_vectors WHERE project_id = %s AND text_hash = ANY(%s)",
        (project_id, wanted),
    )
    return {str(r[0]) for r in rows}


class Pusher:
    def __init__(
        self,
        conn: psycopg.Connection,
        project: str,
        root: Path,
        scan: ScanSettings,
        embedder: TextEmbedder | None,
        progress: Callable[[PushProgress], None] | None = None,
        batch_files: int = PUSH_BATCH_FILES,
        cache: VectorCache | None = None,
    ) -> None:
        self.conn = conn
        self.cache = cache
        self.project = project
        self.root = root
        self.scan = scan
        self.embedder = embedder
        self.progress = progress
        self.batch_files = batch_files
        self.summary = PushSummary(project)
        self._copy: bool | None = None

    def _emit(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(PushProgress(self.project, phase, done, total))

    def run(self) -> PushSummary:
        t0 = time.perf_counter()
        s = self.summary
        prepare(self.conn)
        pid = project_id_for(self.conn, self.project)
        if self.embedder is not None:
            self._claim_model(pid, self.embedder.model_id)
        self._emit("hash", 0, 0)
        local, skipped = hash_tree(self.root, self.scan)
        s.skipped = skipped
        s.phase_seconds["hash"] = time.perf_counter() - t0
        remote = server_tree(self.conn, pid)
        self.conn.commit()
        changed = sorted(p for p, f in local.items() if remote.get(p) != f.blob)
        removed = sorted(p for p in remote if p not in local)
        s.changed, s.removed = len(changed), len(removed)
        have = existing_blobs(self.conn, pid, (local[p].blob for p in changed))
        self.conn.commit()
        done = 0
        for i in range(0, len(changed), self.batch_files):
            batch = [local[p] for p in changed[i : i + self.batch_files]]
            self._push_batch(pid, batch, have)
            done += len(batch)
            self._emit("write", done, len(changed))
        if removed:
            with self.conn.transaction():
                lock_project(self.conn, pid)
                self._apply_tree(pid, [], removed, {})
        if self.embedder is not None:
            self._embed_missing(pid)
        self._collect_garbage(pid)
        counts = project_counts(self.conn, pid)
        self.conn.commit()
        s.files, s.chunks, s.embedded, s.tree_version = (
            counts["files"], counts["chunks"], counts["embedded"], counts["tree_version"],
        )  # fmt: skip
        s.seconds = time.perf_counter() - t0
        self._emit("done", s.files, s.files)
        return s

    def _claim_model(self, pid: int, model_id: str) -> None:
        """Vectors of one project come from one model: a push with another model drops the
        old vectors (they live in another space) and embeds again."""
        with self.conn.transaction():
            lock_project(self.conn, pid)
            row = self.conn.execute("SELECT model_id FROM cc_projects WHERE id = %s", (pid,))
            got = row.fetchone()
            if got is not None and got[0] not in ("", model_id):
                log.warning("team index: vectors of another model (%s): embedding again", got[0])
                self.conn.execute("DELETE FROM cc_pieces WHERE project_id = %s", (pid,))
                self.conn.execute("DELETE FROM cc_vectors WHERE project_id = %s", (pid,))
                self.conn.execute(
                    "UPDATE cc_blobs SET n_embedded = 0 WHERE project_id = %s", (pid,)
                )
            self.conn.execute("UPDATE cc_projects SET model_id = %s WHERE id = %s", (model_id, pid))

    # --- one batch: parse what the server lacks, then one transaction ---
    def _push_batch(self, pid: int, batch: list[LocalFile], have: set[str]) -> None:
        s = self.summary
        todo = [f for f in batch if f.blob not in have]
        parsed: dict[str, BlobRecord] = {}
        final: dict[str, str] = {f.entry.rel: f.blob for f in batch}
        t0 = time.perf_counter()
        for f, result in self._parse(todo):
            if isinstance(result, str):
                s.skipped[result] = s.skipped.get(result, 0) + 1
                final.pop(f.entry.rel, None)  # not in the pushed tree (as the local index)
                continue
            blob = blob_key(f.entry.language, result.row.hash)  # what was parsed, if it moved
            final[f.entry.rel] = blob
            if blob not in parsed and blob not in have:
                parsed[blob] = blob_from_loaded(result, blob, self.embedder)
        s.phase_seconds["parse"] = s.phase_seconds.get("parse", 0.0) + time.perf_counter() - t0
        vectors = self._vectors_for(pid, parsed.values())
        dropped = [f.entry.rel for f in batch if f.entry.rel not in final]
        with self.conn.transaction():
            lock_project(self.conn, pid)
            # Another push may have stored some of these blobs meanwhile: skip them.
            present = existing_blobs(self.conn, pid, parsed)
            fresh = [b for k, b in parsed.items() if k not in present]
            missing = (
                set(final.values())
                - set(parsed)
                - existing_blobs(self.conn, pid, set(final.values()) - set(parsed))
            )
            for rel in [r for r, b in final.items() if b in missing]:
                final.pop(rel)  # collected by a concurrent push's GC: left for the next push
                dropped.append(rel)
            self._insert_blobs(pid, fresh, vectors)
            self._apply_tree(pid, sorted(final.items()), dropped, {})
        s.blobs_parsed += len(parsed)
        s.chunks_parsed += sum(len(b.chunks) for b in parsed.values())
        s.blobs_reused += sum(1 for b in final.values() if b in have)
        for blob in parsed:
            have.add(blob)

    def _parse(self, todo: list[LocalFile]) -> Iterable[tuple[LocalFile, LoadedFile | str]]:
        if not todo:
            return
        by_rel = {f.entry.rel: f for f in todo}
        args: list[LoadArgs] = [(f.entry, None, None, self.scan.max_file_bytes) for f in todo]
        n = 0
        with loader(len(args)) as loaded:
            for item in loaded(args):
                if item is None:
                    continue
                (entry, _old, _buf, _max), result = item
                n += 1
                self._emit("parse", n, len(args))
                yield by_rel[entry.rel], result

    def _vectors_for(
        self, pid: int, blobs: Iterable[BlobRecord]
    ) -> dict[str, list[float] | np.ndarray]:
        """Vectors for every piece of these blobs that the server lacks, computed here."""
        if self.embedder is None:
            return {}
        texts: dict[str, str] = {}
        for b in blobs:
            for c in b.chunks:
                for h, t in c.pieces:
                    texts.setdefault(h, t)
        known = existing_vectors(self.conn, pid, texts)
        self.conn.commit()
        self.summary.pieces_reused += len(known)
        todo = [h for h in texts if h not in known]
        return self._embed(texts, todo)

    def _embed(self, texts: dict[str, str], todo: list[str]) -> dict[str, list[float] | np.ndarray]:
        assert self.embedder is not None
        out: dict[str, list[float] | np.ndarray] = {}
        t0 = time.perf_counter()
        if self.cache is not None and todo:  # computed before, by this user's local index
            known = self.cache.get_many(todo)
            out.update(known)
            self.summary.pieces_cached += len(known)
            todo = [h for h in todo if h not in known]
        for i in range(0, len(todo), EMBED_GROUP):
            group = todo[i : i + EMBED_GROUP]
            vecs = self.embedder.embed([texts[h] for h in group])
            fresh = list(zip(group, vecs, strict=True))
            out.update(fresh)
            if self.cache is not None:
                self.cache.put_many(fresh)
            self._emit("embed", i + len(group), len(todo))
        self.summary.pieces_embedded += len(todo)
        self.summary.phase_seconds["embed"] = (
            self.summary.phase_seconds.get("embed", 0.0) + time.perf_counter() - t0
        )
        return out

    # --- writing (inside the caller's transaction) ---
    def _insert_blobs(
        self, pid: int, blobs: list[BlobRecord], vectors: dict[str, list[float] | np.ndarray]
    ) -> None:
        if not blobs:
            return
        conn = self.conn
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO cc_blobs(project_id, blob, language, n_chunks, len_body, len_code, "
                "len_symbol, n_embedded) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (pid, b.blob, b.language, len(b.chunks), b.field_length(FIELD_BODY),
                     b.field_length(FIELD_CODE), b.field_length(FIELD_SYMBOL),
                     len(b.chunks) if self.embedder is not None else 0)
                    for b in blobs
                ],
            )  # fmt: skip
        self._bulk(
            "cc_chunks",
            CHUNK_COLUMNS,
            (
                (pid, b.blob, c.ordinal, c.start_line, c.end_line, c.language, c.kind, c.symbol,
                 c.signature, c.doc, c.category, c.content_hash, _clean(c.text),
                 _clean(c.context))
                for b in blobs
                for c in b.chunks
            ),
        )  # fmt: skip
        self._bulk(
            "cc_symbols", SYMBOL_COLUMNS, ((pid, b.blob, *sym) for b in blobs for sym in b.symbols)
        )
        self._bulk(
            "cc_postings",
            POSTING_COLUMNS,
            (
                (pid, f, _clean(term), b.blob, c.ordinal, tf, c.lengths[f])
                for b in blobs
                for c in b.chunks
                for f, counts in c.terms.items()
                for term, tf in counts.items()
            ),
        )
        with conn.cursor() as cur:
            if self.embedder is not None:
                self._bulk(
                    "cc_pieces",
                    PIECE_COLUMNS,
                    (
                        (pid, b.blob, c.ordinal, n, h)
                        for b in blobs
                        for c in b.chunks
                        for n, (h, _t) in enumerate(c.pieces)
                    ),
                )
                cur.executemany(
                    "INSERT INTO cc_vectors(project_id, text_hash, embedding) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [(pid, h, v) for h, v in vectors.items()],
                )

    def _bulk(
        self, table: str, columns: tuple[tuple[str, str], ...], rows: Iterable[tuple[object, ...]]
    ) -> None:
        """Many rows into `table`: COPY where the role may (it is not allowed under row-level
        security), else INSERT ... SELECT FROM unnest(arrays), a few thousand rows a statement."""
        names = ", ".join(n for n, _ in columns)
        if self._copy_allowed():
            with self.conn.cursor() as cur, cur.copy(f"COPY {table}({names}) FROM STDIN") as cp:
                for row in rows:
                    cp.write_row(row)
            return
        arrays = ", ".join(f"%s::{ty}[]" for _, ty in columns)
        sql = f"INSERT INTO {table}({names}) SELECT * FROM unnest({arrays})"
        batch: list[tuple[object, ...]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BULK_ROWS:
                self.conn.execute(sql, [list(col) for col in zip(*batch, strict=True)])
                batch = []
        if batch:
            self.conn.execute(sql, [list(col) for col in zip(*batch, strict=True)])

    def _copy_allowed(self) -> bool:
        """COPY FROM is refused under row-level security: only a role that bypasses it (the
        admin, a superuser) may use it."""
        if self._copy is None:
            row = self.conn.execute(
                "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
            self._copy = bool(row and row[0])
        return self._copy

    def _apply_tree(
        self,
        pid: int,
        upserts: list[tuple[str, str]],
        removals: list[str],
        _unused: dict[str, str],
    ) -> None:
        """Point paths at blobs (or drop them) and keep the BM25 statistics in step: every path
        that leaves or changes is counted out, every path that arrives is counted in."""
        conn = self.conn
        paths = [p for p, _ in upserts] + removals
        if not paths:
            return
        old = {
            str(r[0]): (str(r[1]), int(r[2]), int(r[3]))
            for r in conn.execute(
                "SELECT path, blob, n_chunks, path_len FROM cc_tree "
                "WHERE project_id = %s AND path = ANY(%s)",
                (pid, paths),
            )
        }
        new_blobs = {b for _, b in upserts}
        info = {
            str(r[0]): (int(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]))
            for r in conn.execute(
                "SELECT blob, n_chunks, len_body, len_code, len_symbol, language FROM cc_blobs "
                "WHERE project_id = %s AND blob = ANY(%s)",
                (pid, sorted(new_blobs | {b for b, _, _ in old.values()})),
            )
        }
        outgoing = [(p, *old[p]) for p in paths if p in old and dict(upserts).get(p) != old[p][0]]
        incoming = [(p, b) for p, b in upserts if old.get(p, ("",))[0] != b]
        if not outgoing and not incoming:
            return
        # Counted out: postings of the old blobs, the old paths' terms.
        self._df_delta(pid, [(b, -1) for _, b, _, _ in outgoing])
        self._path_df_delta(pid, [(p, -1, n) for p, _, n, _ in outgoing])
        stats = {f: [0, 0] for f in (FIELD_BODY, FIELD_CODE, FIELD_SYMBOL, FIELD_PATH)}
        for _p, b, n, plen in outgoing:
            self._add_stats(stats, info.get(b), n, plen, -1)
        conn.execute(
            "DELETE FROM cc_path_terms WHERE project_id = %s AND path = ANY(%s)",
            (pid, [p for p, *_ in outgoing]),
        )
        conn.execute(
            "DELETE FROM cc_tree WHERE project_id = %s AND path = ANY(%s)",
            (pid, [p for p, *_ in outgoing]),
        )
        # Counted in: the new tree entries, their paths' terms, their blobs' postings.
        rows = []
        term_rows = []
        for p, b in incoming:
            n, _lb, _lc, _ls, lang = info[b]
            terms = path_field(p)
            rows.append((pid, p, b, lang, n, len(terms)))
            for t in sorted(set(terms)):
                term_rows.append((pid, p, _clean(t), terms.count(t)))
            self._add_stats(stats, info.get(b), n, len(terms), +1)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO cc_tree(project_id, path, blob, language, n_chunks, path_len) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                rows,
            )
            cur.executemany(
                "INSERT INTO cc_path_terms(project_id, path, term, tf) VALUES (%s, %s, %s, %s)",
                term_rows,
            )
        self._df_delta(pid, [(b, +1) for _, b in incoming])
        self._path_df_delta(pid, [(p, +1, info[b][0]) for p, b in incoming])
        for f, (n_docs, total) in stats.items():
            conn.execute(
                "INSERT INTO cc_field_stats(project_id, field, n_docs, total_len) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (project_id, field) DO UPDATE SET "
                "n_docs = cc_field_stats.n_docs + EXCLUDED.n_docs, "
                "total_len = cc_field_stats.total_len + EXCLUDED.total_len",
                (pid, f, n_docs, total),
            )
        conn.execute(
            "UPDATE cc_projects SET tree_version = tree_version + 1, pushed_at = now() "
            "WHERE id = %s",
            (pid,),
        )

    @staticmethod
    def _add_stats(
        stats: dict[int, list[int]],
        blob: tuple[int, int, int, int, str] | None,
        n_chunks: int,
        path_len: int,
        sign: int,
    ) -> None:
        if blob is None:
            return
        n, lb, lc, ls, _lang = blob
        for f, length in ((FIELD_BODY, lb), (FIELD_CODE, lc), (FIELD_SYMBOL, ls)):
            stats[f][0] += sign * n
            stats[f][1] += sign * length
        stats[FIELD_PATH][0] += sign * n_chunks
        stats[FIELD_PATH][1] += sign * n_chunks * path_len

    def _df_delta(self, pid: int, blobs: list[tuple[str, int]]) -> None:
        if not blobs:
            return
        self.conn.execute(
            "INSERT INTO cc_term_df(project_id, field, term, df) "
            "SELECT %(p)s, po.field, po.term, sum(m.sign) "
            "FROM unnest(%(b)s::text[], %(s)s::int[]) AS m(blob, sign) "
            "JOIN cc_postings po ON po.project_id = %(p)s AND po.blob = m.blob "
            "GROUP BY po.field, po.term ORDER BY po.field, po.term "
            "ON CONFLICT (project_id, field, term) DO UPDATE SET df = cc_term_df.df + EXCLUDED.df",
            {"p": pid, "b": [b for b, _ in blobs], "s": [s for _, s in blobs]},
        )

    def _path_df_delta(self, pid: int, paths: list[tuple[str, int, int]]) -> None:
        """A path term's df counts chunks (Tantivy indexes the path with every chunk)."""
        if not paths:
            return
        self.conn.execute(
            "INSERT INTO cc_term_df(project_id, field, term, df) "
            "SELECT %(p)s, 3, pt.term, sum(m.sign * m.n) "
            "FROM unnest(%(path)s::text[], %(s)s::int[], %(n)s::int[]) AS m(path, sign, n) "
            "JOIN cc_path_terms pt ON pt.project_id = %(p)s AND pt.path = m.path "
            "GROUP BY pt.term ORDER BY pt.term "
            "ON CONFLICT (project_id, field, term) DO UPDATE SET df = cc_term_df.df + EXCLUDED.df",
            {
                "p": pid,
                "path": [p for p, _, _ in paths],
                "s": [s for _, s, _ in paths],
                "n": [n for _, _, n in paths],
            },
        )

    # --- after the tree: vectors still missing, garbage ---
    def _embed_missing(self, pid: int) -> None:
        """Blobs of the tree pushed without vectors (an earlier `--no-embed` push, or a push
        killed before its embeddings) get them now, one transaction per group of blobs."""
        assert self.embedder is not None
        rows = self.conn.execute(
            "SELECT DISTINCT b.blob FROM cc_blobs b JOIN cc_tree t ON t.project_id = b.project_id "
            "AND t.blob = b.blob WHERE b.project_id = %s AND b.n_embedded < b.n_chunks",
            (pid,),
        ).fetchall()
        self.conn.commit()
        blobs = [str(r[0]) for r in rows]
        for i in range(0, len(blobs), self.batch_files):
            group = blobs[i : i + self.batch_files]
            chunks = self.conn.execute(
                "SELECT blob, ordinal, text, start_line, symbol, language, context FROM cc_chunks "
                "WHERE project_id = %s AND blob = ANY(%s) ORDER BY blob, ordinal",
                (pid, group),
            ).fetchall()
            self.conn.commit()
            texts: dict[str, str] = {}
            pieces: list[tuple[int, str, int, int, str]] = []
            for blob, ordinal, text, start, symbol, language, context in chunks:
                made = pieces_of(text, start, symbol, language, self.embedder, context)
                for n, (h, t) in enumerate(made):
                    texts.setdefault(h, t)
                    pieces.append((pid, blob, ordinal, n, h))
            known = existing_vectors(self.conn, pid, texts)
            self.conn.commit()
            self.summary.pieces_reused += len(known)
            vectors = self._embed(texts, [h for h in texts if h not in known])
            with self.conn.transaction():
                lock_project(self.conn, pid)
                self.conn.execute(
                    "DELETE FROM cc_pieces WHERE project_id = %s AND blob = ANY(%s)", (pid, group)
                )
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO cc_pieces(project_id, blob, ordinal, piece, text_hash) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        pieces,
                    )
                    cur.executemany(
                        "INSERT INTO cc_vectors(project_id, text_hash, embedding) "
                        "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        [(pid, h, v) for h, v in vectors.items()],
                    )
                self.conn.execute(
                    "UPDATE cc_blobs SET n_embedded = n_chunks WHERE project_id = %s "
                    "AND blob = ANY(%s)",
                    (pid, group),
                )

    def _collect_garbage(self, pid: int) -> None:
        """Blobs no path points at any more, and vectors no piece uses, are deleted (content
        pushed again later is simply parsed again)."""
        with self.conn.transaction():
            lock_project(self.conn, pid)
            dead = [
                str(r[0])
                for r in self.conn.execute(
                    "SELECT b.blob FROM cc_blobs b WHERE b.project_id = %s AND NOT EXISTS "
                    "(SELECT 1 FROM cc_tree t WHERE t.project_id = b.project_id "
                    "AND t.blob = b.blob)",
                    (pid,),
                )
            ]
            if dead:
                for table in ("cc_postings", "cc_pieces", "cc_symbols", "cc_chunks", "cc_blobs"):
                    self.conn.execute(
                        f"DELETE FROM {table} WHERE project_id = %s AND blob = ANY(%s)",
                        (pid, dead),
                    )
                self.conn.execute(
                    "DELETE FROM cc_vectors v WHERE v.project_id = %s AND NOT EXISTS "
                    "(SELECT 1 FROM cc_pieces p WHERE p.project_id = v.project_id "
                    "AND p.text_hash = v.text_hash)",
                    (pid,),
                )
            self.conn.execute("DELETE FROM cc_term_df WHERE project_id = %s AND df <= 0", (pid,))


def project_counts(conn: psycopg.Connection, pid: int) -> dict[str, int]:
    row = conn.execute(
        "SELECT count(*), coalesce(sum(t.n_chunks), 0), coalesce(sum(b.n_embedded), 0), "
        "(SELECT tree_version FROM cc_projects WHERE id = %(p)s) "
        "FROM cc_tree t JOIN cc_blobs b ON b.project_id = t.project_id AND b.blob = t.blob "
        "WHERE t.project_id = %(p)s",
        {"p": pid},
    ).fetchone()
    assert row is not None
    return {
        "files": int(row[0]),
        "chunks": int(row[1]),
        "embedded": int(row[2]),
        "tree_version": int(row[3] or 0),
    }


def _clean(text: str) -> str:
    """PostgreSQL text cannot hold NUL or lone surrogates; the local index keeps both."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
