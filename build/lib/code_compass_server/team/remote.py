"""A project served by the team index: the same read interface as the local stores
(`lexical`: BM25 search, counts, term hits; `catalog`: chunks, symbols, counts), executed in
PostgreSQL. Search runs in the database; only the hits come back.

BM25 is computed in SQL from the postings and the project's term statistics with Tantivy's
formula and the same fields and boosts (index/lexical.py::weighted_terms), so the channels and
the calibrated score keep their meaning and minScore 0.6 means the same on both backends.
The workspace's own changes (team/overlay.py) replace the server's rows for those paths.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from code_compass_server.index.catalog import ChunkRow
from code_compass_server.index.lexical import (
    STEM_MAX_VARIANTS,
    LexicalHit,
    LexicalIndex,
    stem_forms_of,
    weighted_terms,
)
from code_compass_server.index.tokens import is_underscored, word_stem
from code_compass_server.records import SymbolDef
from code_compass_server.team.connection import TeamIndexUnavailable, connect, safe_url
from code_compass_server.team.content import FIELD_BODY, FIELD_CODE, FIELD_NUMBERS, FIELD_PATH
from code_compass_server.team.overlay import OverlayFile, WorkspaceOverlay, bm25, idf

if TYPE_CHECKING:
    import psycopg

# Candidates fetched from the HNSW index per requested chunk (a chunk has several pieces).
HNSW_PIECES_PER_CHUNK = 4
HNSW_EF_SEARCH = 100
COUNTS_TTL_S = 2.0
POOL_SIZE = 4


class TeamConnections:
    """A few connections shared by a process's threads; a dead one is replaced on next use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._idle: list[psycopg.Connection] = []
        self._lock = threading.Lock()

    @contextmanager
    def conn(self) -> Iterator[psycopg.Connection]:
        import psycopg

        c = self._reused()
        if c is None:
            c = connect(self.url)
        ok = False
        try:
            yield c
            c.rollback()  # reads only: end the snapshot
            ok = True
        except psycopg.OperationalError as exc:
            self.close()  # the server went away: every idle connection is dead too
            raise TeamIndexUnavailable(
                f"the team index at {safe_url(self.url)} went away: {str(exc).strip()[:200]}"
            ) from exc
        finally:
            if ok and not c.closed:
                with self._lock:
                    if len(self._idle) < POOL_SIZE:
                        self._idle.append(c)
                        c = None
            if c is not None and not c.closed:
                c.close()

    def _reused(self) -> psycopg.Connection | None:
        """An idle connection that still answers (a server restart leaves dead ones behind:
        they are dropped and the caller connects again)."""
        import psycopg

        while True:
            with self._lock:
                c = self._idle.pop() if self._idle else None
            if c is None:
                return None
            try:
                c.execute("SELECT 1")
                c.rollback()
                return c
            except psycopg.Error:
                c.close()

    def close(self) -> None:
        with self._lock:
            for c in self._idle:
                c.close()
            self._idle.clear()


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def chunk_key(blob: str, ordinal: int, path: str) -> str:
    return f"{blob}:{ordinal}:{path}"


def overlay_key(path: str, ordinal: int) -> str:
    return f"local:{ordinal}:{path}"


@dataclass(slots=True)
class _Weights:
    """Per (field, term): boost x idf and the field's average length, from the server."""

    weight: dict[tuple[int, str], float] = field(default_factory=dict)
    avgdl: dict[int, float] = field(default_factory=dict)


class TeamProject:
    """One project of the team index, seen from one workspace."""

    def __init__(
        self,
        name: str,
        root: Path,
        directory: Path,
        connections: TeamConnections,
        project_id: int,
        overlay: WorkspaceOverlay,
    ) -> None:
        self.name = name
        self.root = root
        self.directory = directory
        self.connections = connections
        self.project_id = project_id
        self.overlay = overlay
        self.read_only = False  # nothing to reload: every read sees the last commit
        self.rebuilt = ""
        self.problem = ""
        self.lexical = TeamLexical(self)
        self.catalog = TeamCatalog(self)

    def dirty(self) -> dict[str, OverlayFile]:
        return self.overlay.refresh(self._tree)

    def _tree(self) -> tuple[int, dict[str, str]]:
        with self.connections.conn() as c:
            row = c.execute(
                "SELECT tree_version FROM cc_projects WHERE id = %s", (self.project_id,)
            ).fetchone()
            rows = c.execute(
                "SELECT path, blob FROM cc_tree WHERE project_id = %s", (self.project_id,)
            ).fetchall()
        return (int(row[0]) if row else 0), {str(p): str(b) for p, b in rows}

    # --- semantic channel ---
    def nearest_chunks(
        self,
        query_vec: np.ndarray,
        k: int,
        path_prefix: str | None,
        language: str | None,
        embed: Any = None,
    ) -> list[tuple[str, float]]:
        """Best `k` chunks by cosine of their best piece (HNSW, project-filtered with iterative
        scans), then this workspace's own versions of its dirty files, embedded here."""
        dirty = self.dirty()
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        with self.connections.conn() as c:
            rows = nearest_rows(c, self.project_id, q, k, path_prefix, language, list(dirty))
        found = [(chunk_key(str(b), int(o), str(p)), float(s)) for p, b, o, s in rows]
        if embed is not None:
            found += self._overlay_nearest(q, dirty, path_prefix, language, embed)
        found.sort(key=lambda x: x[1], reverse=True)
        return found[:k]

    def _overlay_nearest(
        self,
        q: np.ndarray,
        dirty: dict[str, OverlayFile],
        path_prefix: str | None,
        language: str | None,
        embed: Any,
    ) -> list[tuple[str, float]]:
        from code_compass_server.team.content import pieces_of

        out: list[tuple[str, float]] = []
        for f in dirty.values():
            rec = f.record
            if rec is None or not _passes(f.path, rec.language, path_prefix, language):
                continue
            for c in rec.chunks:
                pieces = pieces_of(c.text, c.start_line, c.symbol, c.language, embed, c.context)
                todo = [(h, t) for h, t in pieces if h not in f.vectors]
                if todo:
                    vecs = embed.embed([t for _, t in todo])
                    for (h, _t), v in zip(todo, vecs, strict=True):
                        f.vectors[h] = np.asarray(v, dtype=np.float32)
                scores = [float(f.vectors[h] @ q) for h, _ in pieces]
                if scores:
                    out.append((overlay_key(f.path, c.ordinal), max(scores)))
        return out

    def close(self) -> None:
        self.connections.close()


def nearest_rows(
    c: psycopg.Connection,
    project_id: int,
    q: np.ndarray,
    k: int,
    path_prefix: str | None = None,
    language: str | None = None,
    excluded: Sequence[str] = (),
) -> list[tuple[Any, ...]]:
    """(path, blob, ordinal, cosine) of the `k` best chunks of the project's tree, a chunk
    scored by its best piece. The HNSW index is walked with the project as a filter
    (iterative scans keep walking until enough rows pass it); written `project_id + 0` and
    with sequential scans off so the planner cannot trade it for the primary key's btree and
    a sort of every vector of the project (measured: 174 ms at 33k vectors instead of a few).
    Too few rows (a small project in a large table, a narrow filter): an exact scan."""
    filters, args = _tree_filters(path_prefix, language, list(excluded))
    args.update({"p": project_id, "q": q, "n": k * HNSW_PIECES_PER_CHUNK, "k": k})
    tail = (
        "JOIN cc_tree t ON t.project_id = %(p)s AND t.blob = pc.blob" + filters + " "
        "GROUP BY t.path, pc.blob, pc.ordinal ORDER BY cos DESC LIMIT %(k)s"
    )
    approx = (
        "WITH nn AS MATERIALIZED (SELECT text_hash, embedding <=> %(q)s AS d FROM cc_vectors "
        "WHERE (project_id + 0) = %(p)s ORDER BY embedding <=> %(q)s LIMIT %(n)s) "
        "SELECT t.path, pc.blob, pc.ordinal, max(1 - nn.d) AS cos FROM nn "
        "JOIN cc_pieces pc ON pc.project_id = %(p)s AND pc.text_hash = nn.text_hash " + tail
    )
    exact = (
        "SELECT t.path, pc.blob, pc.ordinal, max(1 - (v.embedding <=> %(q)s)) AS cos "
        "FROM cc_vectors v JOIN cc_pieces pc ON pc.project_id = %(p)s AND pc.text_hash = "
        "v.text_hash AND v.project_id = %(p)s " + tail
    )
    with c.transaction():
        c.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, k * HNSW_PIECES_PER_CHUNK)}")
        c.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        c.execute("SET LOCAL enable_seqscan = off")
        rows = c.execute(approx, args).fetchall()
        if len(rows) < k:
            c.execute("SET LOCAL enable_seqscan = on")
            c.execute("SET LOCAL enable_indexscan = off")  # exact: no HNSW
            rows = c.execute(exact, args).fetchall()
    return rows


def _passes(path: str, lang: str, prefix: str | None, language: str | None) -> bool:
    return (not prefix or path.startswith(prefix)) and (not language or lang == language)


def _tree_filters(
    path_prefix: str | None, language: str | None, excluded: list[str]
) -> tuple[str, dict[str, Any]]:
    clauses: list[str] = []
    args: dict[str, Any] = {}
    if path_prefix:
        clauses.append("t.path LIKE %(prefix)s")
        args["prefix"] = _like_prefix(path_prefix)
    if language:
        clauses.append("t.language = %(lang)s")
        args["lang"] = language
    if excluded:
        clauses.append("NOT (t.path = ANY(%(excluded)s))")
        args["excluded"] = excluded
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


class TeamLexical:
    """BM25 over the team index's postings (the same query terms and weights as Tantivy)."""

    read_only = False
    failure = ""
    query_words = staticmethod(LexicalIndex.query_words)

    def __init__(self, project: TeamProject) -> None:
        self.p = project
        self._forms: dict[str, tuple[str, ...]] = {}
        self._df_cache: dict[tuple[int, str], int] = {}
        self._df_at = 0.0

    def reload(self) -> None:
        self._forms = {}

    def num_docs(self) -> int:
        return self.p.catalog.counts()["chunks"]

    def _stem_forms(self, c: psycopg.Connection, stem: str) -> tuple[str, ...]:
        forms = self._forms.get(stem)
        if forms is None:

            def walk(prefix: str) -> list[str]:
                rows = c.execute(
                    "SELECT term FROM cc_term_df WHERE project_id = %s AND field = 0 AND df > 0 "
                    "AND term LIKE %s ORDER BY term LIMIT %s",
                    (self.p.project_id, _like_prefix(prefix), STEM_MAX_VARIANTS),
                ).fetchall()
                return [str(r[0]) for r in rows]

            forms = stem_forms_of(stem, walk)
            self._forms[stem] = forms
        return forms

    def search(
        self,
        query: str,
        limit: int,
        *,
        path_prefix: str | None = None,
        language: str | None = None,
        categories: tuple[str, ...] | None = None,
    ) -> list[LexicalHit]:
        stems = self.query_words(query)
        if not stems:
            return []
        with self.p.connections.conn() as c:
            boosts = weighted_terms(query, stems, lambda s: self._stem_forms(c, s))
            terms = {(FIELD_NUMBERS[f], t): b for (f, t), b in boosts.items()}
            return self._scored(c, terms, limit, path_prefix, language, categories)

    def _weights(self, c: psycopg.Connection, terms: dict[tuple[int, str], float]) -> _Weights:
        fields = [f for f, _ in terms]
        rows = c.execute(
            "SELECT q.field, q.term, q.boost, d.df, fs.n_docs, fs.total_len "
            "FROM unnest(%(f)s::int2[], %(t)s::text[], %(b)s::float8[]) AS q(field, term, boost) "
            "JOIN cc_term_df d ON d.project_id = %(p)s AND d.field = q.field AND d.term = q.term "
            "AND d.df > 0 JOIN cc_field_stats fs ON fs.project_id = %(p)s AND fs.field = q.field",
            {"p": self.p.project_id, "f": fields, "t": [t for _, t in terms],
             "b": list(terms.values())},
        ).fetchall()  # fmt: skip
        w = _Weights()
        for f, t, b, df, n, total in rows:
            w.weight[int(f), str(t)] = float(b) * idf(int(n), int(df))
            w.avgdl[int(f)] = max(float(total) / max(int(n), 1), 1e-9)
        return w

    def _scored(
        self,
        c: psycopg.Connection,
        terms: dict[tuple[int, str], float],
        limit: int,
        path_prefix: str | None,
        language: str | None,
        categories: tuple[str, ...] | None,
    ) -> list[LexicalHit]:
        w = self._weights(c, terms)
        dirty = self.p.dirty()
        hits: list[LexicalHit] = []
        if w.weight:
            hits = self._server_hits(c, w, limit, path_prefix, language, categories, list(dirty))
        hits += self._overlay_hits(w, dirty, path_prefix, language, categories)
        hits.sort(key=lambda h: h.bm25, reverse=True)
        return hits[:limit]

    def _server_hits(
        self,
        c: psycopg.Connection,
        w: _Weights,
        limit: int,
        path_prefix: str | None,
        language: str | None,
        categories: tuple[str, ...] | None,
        excluded: list[str],
    ) -> list[LexicalHit]:
        keys = list(w.weight)
        filters, args = _tree_filters(path_prefix, language, excluded)
        cat = ""
        if categories:
            cat = (
                " JOIN cc_chunks cc ON cc.project_id = %(p)s AND cc.blob = h.blob "
                "AND cc.ordinal = h.ordinal AND cc.category = ANY(%(cats)s)"
            )
            args["cats"] = list(categories)
        args.update(
            {
                "p": self.p.project_id,
                "f": [f for f, _ in keys],
                "t": [t for _, t in keys],
                "w": [w.weight[k] for k in keys],
                "a": [w.avgdl[f] for f, _ in keys],
                "k": limit,
            }
        )
        sql = (
            "WITH q AS (SELECT * FROM unnest(%(f)s::int2[], %(t)s::text[], %(w)s::float8[], "
            "%(a)s::float8[]) AS q(field, term, wt, avgdl)), "
            "doc AS (SELECT po.blob, po.ordinal, sum(q.wt * po.tf * 2.2 / (po.tf + 1.2 * "
            "(0.25 + 0.75 * po.dl / q.avgdl))) AS s FROM q JOIN cc_postings po ON "
            "po.project_id = %(p)s AND po.field = q.field AND po.term = q.term "
            "WHERE q.field < 3 GROUP BY po.blob, po.ordinal), "
            "live AS (SELECT t.path, t.blob FROM cc_tree t"
            + filters
            + (" AND" if filters else " WHERE")
            + " t.project_id = %(p)s), "
            "pth AS (SELECT l.path, sum(q.wt * pt.tf * 2.2 / (pt.tf + 1.2 * (0.25 + 0.75 * "
            "t.path_len / q.avgdl))) AS s FROM q JOIN cc_path_terms pt ON pt.project_id = %(p)s "
            "AND pt.term = q.term JOIN live l ON l.path = pt.path JOIN cc_tree t ON "
            "t.project_id = %(p)s AND t.path = pt.path WHERE q.field = 3 GROUP BY l.path), "
            "h AS (SELECT l.path, d.blob, d.ordinal, d.s + coalesce(ph.s, 0) AS s FROM doc d "
            "JOIN live l ON l.blob = d.blob LEFT JOIN pth ph ON ph.path = l.path "
            "UNION ALL SELECT l.path, ch.blob, ch.ordinal, ph.s FROM pth ph JOIN live l ON "
            "l.path = ph.path JOIN cc_chunks ch ON ch.project_id = %(p)s AND ch.blob = l.blob "
            "WHERE NOT EXISTS (SELECT 1 FROM doc d WHERE d.blob = ch.blob AND "
            "d.ordinal = ch.ordinal)) "
            "SELECT h.path, h.blob, h.ordinal, h.s FROM h" + cat + " ORDER BY h.s DESC, h.path, "
            "h.ordinal LIMIT %(k)s"
        )
        rows = c.execute(sql, args).fetchall()
        return [LexicalHit(chunk_key(str(b), int(o), str(p)), float(s)) for p, b, o, s in rows]

    def _overlay_hits(
        self,
        w: _Weights,
        dirty: dict[str, OverlayFile],
        path_prefix: str | None,
        language: str | None,
        categories: tuple[str, ...] | None,
    ) -> list[LexicalHit]:
        """The workspace's own versions, scored with the server's statistics."""
        from code_compass_server.team.content import path_field

        out: list[LexicalHit] = []
        for f in dirty.values():
            rec = f.record
            if rec is None or not _passes(f.path, rec.language, path_prefix, language):
                continue
            pterms = path_field(f.path)
            path_score = sum(
                bm25(pterms.count(t), len(pterms), wt, w.avgdl[fld])
                for (fld, t), wt in w.weight.items()
                if fld == FIELD_PATH and t in pterms
            )
            for c in rec.chunks:
                if categories and c.category not in categories:
                    continue
                s = 0.0
                for (fld, t), wt in w.weight.items():
                    if fld == FIELD_PATH:
                        continue
                    counts = c.terms.get(fld)
                    tf = counts.get(t, 0) if counts is not None else 0
                    if tf:
                        s += bm25(tf, c.lengths[fld], wt, w.avgdl[fld])
                if s > 0 or path_score > 0:
                    out.append(LexicalHit(overlay_key(f.path, c.ordinal), s + path_score))
        return out

    def _identifier(self, name: str) -> tuple[int, str]:
        return (FIELD_CODE if is_underscored(name) else FIELD_BODY), name.lower()

    def count(self, term: str, *, categories: tuple[str, ...] | None = None) -> int:
        fld, t = self._identifier(term)
        if not categories:
            return self._df(fld, t)
        with self.p.connections.conn() as c:
            row = c.execute(
                "SELECT count(*) FROM cc_postings po JOIN cc_tree tr ON tr.project_id = "
                "po.project_id AND tr.blob = po.blob JOIN cc_chunks ch ON ch.project_id = "
                "po.project_id AND ch.blob = po.blob AND ch.ordinal = po.ordinal "
                "WHERE po.project_id = %s AND po.field = %s AND po.term = %s "
                "AND ch.category = ANY(%s)",
                (self.p.project_id, fld, t, list(categories)),
            ).fetchone()
            return int(row[0]) if row else 0

    def _df(self, fld: int, term: str) -> int:
        """Chunks of the tree holding the term: the gate asks for each of a question's words,
        often again for the next question; remembered for COUNTS_TTL_S."""
        now = time.monotonic()
        if now - self._df_at > COUNTS_TTL_S:
            self._df_cache, self._df_at = {}, now
        key = (fld, term)
        got = self._df_cache.get(key)
        if got is None:
            with self.p.connections.conn() as c:
                row = c.execute(
                    "SELECT df FROM cc_term_df WHERE project_id = %s AND field = %s AND term = %s",
                    (self.p.project_id, fld, term),
                ).fetchone()
            got = self._df_cache[key] = int(row[0]) if row else 0
        return got

    def word_count(self, word: str) -> int:
        n = self.count(word)
        if n:
            return n
        with self.p.connections.conn() as c:
            forms = self._stem_forms(c, word_stem(word.lower()))
        return sum(self.count(f) for f in forms[:4])

    def term_hits(
        self, term: str, limit: int, *, categories: tuple[str, ...] | None = None
    ) -> list[LexicalHit]:
        with self.p.connections.conn() as c:
            return self._scored(c, {self._identifier(term): 1.0}, limit, None, None, categories)


_CHUNK_COLS = (
    "ch.start_line, ch.end_line, ch.language, ch.kind, ch.symbol, ch.signature, ch.doc, "
    "ch.content_hash, ch.category, ch.text, ch.context"
)
_SYM_COLS = (
    "s.name, s.kind, s.container, t.path, s.start_line, s.end_line, s.name_line, s.name_col, "
    "s.signature, s.language"
)


class TeamCatalog:
    """Chunks and symbols of the project's tree, with the workspace's own versions on top."""

    def __init__(self, project: TeamProject) -> None:
        self.p = project
        self._counts: dict[str, int] = {}
        self._counts_at = 0.0

    # --- chunks ---
    def chunks_by_ids(self, ids: Iterable[str]) -> dict[str, ChunkRow]:
        out: dict[str, ChunkRow] = {}
        server: list[tuple[str, int, str]] = []
        local: list[tuple[str, int, str]] = []
        for cid in ids:
            head, number, where = cid.split(":", 2)
            (local if head == "local" else server).append((head, int(number), where))
        if local:
            dirty = self.p.dirty()
            for _h, ordinal, path in local:
                f = dirty.get(path)
                if f is not None and f.record is not None and ordinal < len(f.record.chunks):
                    ch = f.record.chunks[ordinal]
                    key = overlay_key(path, ordinal)
                    out[key] = ChunkRow(
                        key, path, ch.start_line, ch.end_line, ch.language, ch.kind, ch.symbol,
                        ch.signature, ch.doc, ch.content_hash, ch.category, ch.text, True,
                        ch.context,
                    )  # fmt: skip
        if server:
            with self.p.connections.conn() as conn:
                rows = conn.execute(
                    f"SELECT m.blob, m.ordinal, m.path, {_CHUNK_COLS} FROM unnest(%s::text[], "
                    "%s::int[], %s::text[]) AS m(blob, ordinal, path) JOIN cc_chunks ch ON "
                    "ch.project_id = %s AND ch.blob = m.blob AND ch.ordinal = m.ordinal",
                    ([b for b, _, _ in server], [o for _, o, _ in server],
                     [p for _, _, p in server], self.p.project_id),
                ).fetchall()  # fmt: skip
            for r in rows:
                key = chunk_key(str(r[0]), int(r[1]), str(r[2]))
                out[key] = ChunkRow(
                    key, str(r[2]), int(r[3]), int(r[4]), str(r[5]), str(r[6]), str(r[7]),
                    str(r[8]), str(r[9]), str(r[10]), str(r[11]), str(r[12]), True, str(r[13]),
                )  # fmt: skip
        return out

    def chunks_at(self, path: str, line: int) -> list[ChunkRow]:
        dirty = self.p.dirty()
        if path in dirty:
            rec = dirty[path].record
            if rec is None:
                return []
            ids = [
                overlay_key(path, c.ordinal)
                for c in rec.chunks
                if c.start_line <= line <= c.end_line
            ]
            found = self.chunks_by_ids(ids)
            return sorted(found.values(), key=lambda r: (r.end_line - r.start_line, r.start_line))
        with self.p.connections.conn() as c:
            rows = c.execute(
                "SELECT ch.blob, ch.ordinal FROM cc_tree t JOIN cc_chunks ch ON ch.project_id = "
                "t.project_id AND ch.blob = t.blob WHERE t.project_id = %s AND t.path = %s AND "
                "ch.start_line <= %s AND ch.end_line >= %s",
                (self.p.project_id, path, line, line),
            ).fetchall()
        found = self.chunks_by_ids(chunk_key(str(b), int(o), path) for b, o in rows)
        return sorted(found.values(), key=lambda r: (r.end_line - r.start_line, r.start_line))

    def counts(self) -> dict[str, int]:
        if time.monotonic() - self._counts_at < COUNTS_TTL_S and self._counts:
            return self._counts
        from code_compass_server.team.push import project_counts

        with self.p.connections.conn() as c:
            counts = project_counts(c, self.p.project_id)
            row = c.execute(
                "SELECT count(*) FROM cc_symbols s JOIN cc_tree t ON t.project_id = s.project_id "
                "AND t.blob = s.blob WHERE s.project_id = %s",
                (self.p.project_id,),
            ).fetchone()
        counts["symbols"] = int(row[0]) if row else 0
        self._counts, self._counts_at = counts, time.monotonic()
        return counts

    def invalidate_counts(self) -> None:
        self._counts_at = 0.0

    # --- symbols ---
    def _symbols(self, where: str, args: Sequence[object]) -> list[SymbolDef]:
        dirty = self.p.dirty()
        with self.p.connections.conn() as c:
            rows = c.execute(
                f"SELECT {_SYM_COLS} FROM cc_symbols s JOIN cc_tree t ON t.project_id = "
                f"s.project_id AND t.blob = s.blob WHERE s.project_id = %s AND ({where}) "
                "ORDER BY t.path, s.start_line",
                (self.p.project_id, *args),
            ).fetchall()
        out = [SymbolDef(*r) for r in rows if r[3] not in dirty]
        return out

    def _local_symbols(self, keep: Any) -> list[SymbolDef]:
        out: list[SymbolDef] = []
        for f in self.p.dirty().values():
            if f.record is None:
                continue
            for sym in f.record.symbols:
                name, kind, container, start, end, nline, ncol, sig, lang = sym
                d = SymbolDef(
                    str(name), str(kind), str(container), f.path, int(start), int(end),  # type: ignore[call-overload]
                    int(nline), int(ncol), str(sig), str(lang),  # type: ignore[call-overload]
                )  # fmt: skip
                if keep(d):
                    out.append(d)
        return out

    def symbols_named(self, name: str) -> list[SymbolDef]:
        return self._symbols("s.name = %s", (name,)) + self._local_symbols(lambda d: d.name == name)

    def symbols_named_nocase(
        self, names: Sequence[str], prefixes: Sequence[str] = ()
    ) -> list[SymbolDef]:
        if not names and not prefixes:
            return []
        lowered = [n.lower() for n in names]
        likes = [_like_prefix(p.lower()) for p in prefixes]
        found = self._symbols(
            "lower(s.name) = ANY(%s) OR lower(s.name) LIKE ANY(%s)", (lowered, likes)
        )
        low_prefixes = tuple(p.lower() for p in prefixes)
        return found + self._local_symbols(
            lambda d: (
                d.name.lower() in lowered or d.name.lower().startswith(low_prefixes or ("\0",))
            )
        )

    def symbols_in_file(self, path: str) -> list[SymbolDef]:
        dirty = self.p.dirty()
        if path in dirty:
            return sorted(self._local_symbols(lambda d: d.path == path), key=lambda d: d.start_line)
        return self._symbols("t.path = %s", (path,))

    def all_symbol_names(self) -> list[str]:
        with self.p.connections.conn() as c:
            rows = c.execute(
                "SELECT DISTINCT name FROM cc_symbols WHERE project_id = %s", (self.p.project_id,)
            ).fetchall()
        return [str(r[0]) for r in rows] + [d.name for d in self._local_symbols(lambda d: True)]

    def languages(self) -> set[str]:
        with self.p.connections.conn() as c:
            rows = c.execute(
                "SELECT DISTINCT language FROM cc_tree WHERE project_id = %s",
                (self.p.project_id,),
            ).fetchall()
        langs = {str(r[0]) for r in rows}
        langs |= {f.record.language for f in self.p.dirty().values() if f.record is not None}
        return langs
