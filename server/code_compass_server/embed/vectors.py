"""The vector store: rows of (chunk_id, project, path, language, vector), cosine top-k: exact,
or past IVF_MIN_ROWS rows through an approximate index (embed/ivf.py) whose probed rows are
scored exactly; a filter leaving few rows gathers and scores just those.

In memory the vectors are one fp32 matrix searched with a single mat-vec product; filters are
boolean masks. A chunk may own several rows (one per <=256-token piece, see embed/split.py); a
search returns each chunk once, scored by its best row (max-sim).

Concurrency: writers (add/delete) take a lock and publish an immutable `_Snapshot`; searches read
the current snapshot without locking. Appends go into spare capacity beyond the rows a snapshot
can see, and the `alive` flags are copied on write, so a search never sees a half-applied change.

Memory (issue #31): on POSIX the committed generation read at open is not copied into the
heap but mapped from its file, and searched block by block with each block's pages dropped
after use (vector_reader.mapped_scores), so a server holding a big project keeps almost none
of its matrix resident; the first row added (the mapping is read-only, and exactly full)
moves the matrix into memory with room to grow, as before.

On disk (directory given by the caller, beside the catalog):
  store.json            {"format", "generation", "model_id", "dims", "rows"} — the commit point
  vectors.<gen>.npy     fp32 [rows, dims]
  rows.<gen>.json       columnar row metadata
  lists.<gen>.npy       int32 [rows]: each row's list of the approximate index (embed/ivf.py),
                        present once the store holds IVF_MIN_ROWS rows and the index is built;
                        rows are then written list by list
  ivf.<g>.npy           fp32 [lists, dims]: the centroids, written by the save after a
                        (re)training; the pointer's "ivf" names g, the rows trained on, crcs
`save()` writes a new generation, fsyncs it, then atomically replaces store.json; files of other
generations and stray temp files are removed after the switch or on open. If the process dies at
any point, the store reopens at the last committed generation.

Only the holder of the project's writer lock (index/writer_lock.py) saves or removes files: a
store opened with `writable` returning False (another process writes) only reads, and a read
that races with the writer's switch to a new generation reads again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from code_compass_server.constants import EMBED_DIMS, IVF_MIN_ROWS, VECTOR_COMPACT_DEAD_SHARE
from code_compass_server.embed import ivf

log = logging.getLogger(__name__)

FORMAT = 1
POINTER = "store.json"
_MIN_CAPACITY = 1024
_MASK_CACHE = 16  # filter masks kept per snapshot
_LOAD_TRIES = 3  # reads of a store whose writer switched generation meanwhile
NARROW_FILTER_SHARE = 8  # a filter leaving under 1/8 of the rows: gather those, scan no more
BLOCK_ROWS = 8192  # rows per block of a mapped matrix's scan: 12 MB of fp32 at 384 dims


@dataclass(frozen=True, slots=True)
class VectorItem:
    chunk_id: str
    project: str
    path: str
    language: str
    vector: np.ndarray  # [dims], L2-normalised


@dataclass(slots=True)
class _Snapshot:
    """What one search sees. Never mutated after publication (except its mask cache)."""

    n: int
    mat: np.ndarray  # [n, dims] view
    mapped: tuple[mmap.mmap, int] | None  # mat is a file's mapping: (mmap, offset of row 0)
    alive: np.ndarray  # [n] bool
    proj: np.ndarray  # [n] int32 codes
    lang: np.ndarray
    path: np.ndarray
    chunk_ids: list[str]  # shared append-only list; only [:n] is meaningful here
    path_names: list[str]  # shared append-only list; codes < n_paths are valid
    n_paths: int
    project_codes: dict[str, int]
    language_codes: dict[str, int]
    lists: np.ndarray  # [n] int32: each row's IVF list (ivf.UNASSIGNED without an index)
    in_order: int  # leading rows in list order (ivf.sorted_prefix)
    centroids: np.ndarray | None  # the IVF lists' centroids; None: exact scans only
    masks: dict[tuple[str | None, str | None, str | None], np.ndarray] = field(default_factory=dict)

    def mask(
        self, project: str | None, prefix: str | None, language: str | None
    ) -> np.ndarray | None:
        """Rows passing the filters (alive included); None if a filter matches nothing."""
        key = (project, prefix, language)
        cached = self.masks.get(key)
        if cached is not None:
            return cached
        mask = self.alive.copy()
        if project is not None:
            code = self.project_codes.get(project)
            if code is None:
                return None
            mask &= self.proj == code
        if language is not None:
            code = self.language_codes.get(language.lower())
            if code is None:
                return None
            mask &= self.lang == code
        if prefix:
            table = np.fromiter(
                (p.startswith(prefix) for p in self.path_names[: self.n_paths]),
                dtype=bool,
                count=self.n_paths,
            )
            mask &= table[self.path]
        if len(self.masks) >= _MASK_CACHE:
            self.masks.clear()
        self.masks[key] = mask
        return mask


def mapped_scores(mat: np.ndarray, q: np.ndarray, mm: mmap.mmap | None, offset: int) -> np.ndarray:
    """`mat @ q` for a matrix mapped from a file (`mm`, its rows from byte `offset`), block by
    block, each block's pages dropped from this process after use (the page cache keeps them:
    the next scan maps them again, many pages per fault), so the scan leaves no resident
    matrix behind. Without a mapping, the plain product."""
    n, dims = mat.shape
    if mm is None or not hasattr(mm, "madvise"):
        return np.asarray(mat @ q, dtype=np.float32)
    scores = np.empty(n, dtype=np.float32)
    row_bytes = dims * 4
    page = mmap.PAGESIZE
    for start in range(0, n, BLOCK_ROWS):
        end = min(n, start + BLOCK_ROWS)
        np.matmul(mat[start:end], q, out=scores[start:end])
        lo = offset + start * row_bytes
        hi = offset + end * row_bytes
        lo_page = lo - lo % page
        with contextlib.suppress(OSError, ValueError):
            mm.madvise(mmap.MADV_DONTNEED, lo_page, hi - lo_page)
    return scores


def approximate_chunks(
    mat: np.ndarray,
    centroids: np.ndarray,
    lists: np.ndarray,
    in_order: int,
    q: np.ndarray,
    mask: np.ndarray | None,
    chunk_ids: Sequence[str],
    k: int,
    mm: mmap.mmap | None,
) -> list[tuple[str, float]] | None:
    """The best `k` chunks among the rows of the lists nearest `q` (exact cosine on those
    rows), or None when they hold fewer than `k` chunks passing the filters (a narrow filter:
    the caller scans exactly)."""
    spans, tail = ivf.probe(centroids, lists, in_order, q, ivf.probe_count(len(centroids)))
    rows = np.concatenate([np.arange(a, b) for a, b in spans] + [tail])
    scores = np.concatenate(
        [np.asarray(mat[a:b] @ q, dtype=np.float32) for a, b in spans]
        + [np.asarray(mat[tail] @ q, dtype=np.float32)]
    )
    if mm is not None and hasattr(mm, "madvise"):
        with contextlib.suppress(OSError, ValueError):  # leave no matrix pages resident
            mm.madvise(mmap.MADV_DONTNEED)
    if mask is not None:
        keep = mask[rows]
        rows, scores = rows[keep], scores[keep]
    if len(rows) == 0:
        return None
    found = best_chunks(scores, ivf.PickedIds(chunk_ids, rows), len(rows), k)
    return found if len(found) >= k else None


def chunks_among(
    mat: np.ndarray,
    rows: np.ndarray,
    q: np.ndarray,
    chunk_ids: Sequence[str],
    k: int,
    mm: mmap.mmap | None,
) -> list[tuple[str, float]]:
    """The best `k` chunks of these rows (ascending) by exact cosine: a probed list, or the
    rows a narrow filter leaves (cheaper gathered than a scan of every row)."""
    scores = np.asarray(mat[rows] @ q, dtype=np.float32)  # rows ascending: a forward read
    if mm is not None and hasattr(mm, "madvise"):
        with contextlib.suppress(OSError, ValueError):  # leave no matrix pages resident
            mm.madvise(mmap.MADV_DONTNEED)
    return best_chunks(scores, ivf.PickedIds(chunk_ids, rows), len(rows), k)


def best_chunks(
    scores: np.ndarray, chunk_ids: Sequence[str], valid: int, k: int
) -> list[tuple[str, float]]:
    """The best `k` distinct chunks of row `scores` (filtered-out rows at -inf; `valid` rows
    are not), best first: a chunk scores as its best row."""
    n = len(scores)
    want = min(valid, k * 4)  # a chunk has few rows: 4k rows almost always hold k chunks
    while True:
        top = np.argpartition(-scores, want - 1)[:want] if want < n else np.arange(n)
        top = top[np.argsort(-scores[top], kind="stable")]
        out: list[tuple[str, float]] = []
        seen: set[str] = set()
        for row in top:
            if not np.isfinite(scores[row]):
                break
            cid = chunk_ids[row]
            if cid in seen:
                continue
            seen.add(cid)
            out.append((cid, float(scores[row])))
            if len(out) == k:
                return out
        if want >= valid:
            return out
        want = min(valid, want * 4)


class VectorStore:
    """Persistent cosine vector store: exact, or approximate past IVF_MIN_ROWS rows (embed/
    ivf.py). Thread-safe (see module docstring)."""

    _snapshot: _Snapshot
    _list: np.ndarray  # [capacity] int32: each row's IVF list
    _centroids: np.ndarray | None
    _trained_rows: int
    _ivf_generation: int

    def __init__(
        self,
        directory: Path,
        model_id: str,
        dims: int = EMBED_DIMS,
        *,
        writable: Callable[[], bool] | None = None,
    ) -> None:
        self.directory = directory
        self.model_id = model_id
        self.dims = dims
        # False while another process holds the writer lock: never save, never sweep.
        self._writable = writable or (lambda: True)
        self.load_error = ""  # why the committed store could not be read ("" if it could)
        # How searches run when there are IVF_MIN_ROWS rows or more but no approximate index
        # (never built, a build killed before its save, unreadable): "" when nothing to say.
        self.ann_note = ""
        self._layout = 0  # bumped when rows are renumbered (compaction, reload)
        self._checked: _Snapshot | None = None  # the last snapshot maintain_index looked at
        self._lock = threading.RLock()  # writers
        self._save_lock = threading.Lock()
        self._generation = 0
        self._dirty = False
        # (take, committed, failed): what the caller has waiting on the next save, handed
        # back once that save committed (or failed), so flags never run ahead of the disk.
        self._commit_hooks: (
            tuple[Callable[[], list[str]], Callable[[list[str]], None], Callable[[list[str]], None]]
            | None
        ) = None
        self._reset(_MIN_CAPACITY)
        directory.mkdir(parents=True, exist_ok=True)
        self._load()
        self._publish()

    # --- public API -----------------------------------------------------------------------

    def add(self, items: Iterable[VectorItem]) -> int:
        """Insert rows; a chunk_id present in `items` replaces all of that chunk's old rows.

        Several items with the same chunk_id are that chunk's pieces. Returns rows added.
        """
        batch = list(items)
        if not batch:
            return 0
        vecs = np.asarray([it.vector for it in batch], dtype=np.float32).reshape(len(batch), -1)
        if vecs.shape[1] != self.dims:
            raise ValueError(f"vectors have {vecs.shape[1]} dims; the store holds {self.dims}")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.maximum(norms, 1e-12)
        with self._lock:
            self._delete_locked({it.chunk_id for it in batch})
            self._ensure_capacity(self._n + len(batch))
            start = self._n
            self._mat[start : start + len(batch)] = vecs
            if self._centroids is not None:  # a new row joins its nearest list
                self._list[start : start + len(batch)] = ivf.assign(vecs, self._centroids)
            for offset, it in enumerate(batch):
                row = start + offset
                pcode = _code(self._project_codes, None, it.project)
                path_code = _code(self._path_codes, self._path_names, it.path)
                self._proj[row] = pcode
                self._lang[row] = _code(self._language_codes, None, it.language.lower())
                self._path[row] = path_code
                self._alive[row] = True
                self._chunk_ids.append(it.chunk_id)
                rows = self._rows_by_chunk.setdefault(it.chunk_id, [])
                if not rows:
                    self._chunk_project[it.chunk_id] = it.project
                    self._per_project[it.project] = self._per_project.get(it.project, 0) + 1
                    self._chunks_by_path.setdefault((it.project, it.path), set()).add(it.chunk_id)
                rows.append(row)
            self._n += len(batch)
            self._dirty = True
            self._publish()
        return len(batch)

    def delete_chunk_ids(self, chunk_ids: Iterable[str]) -> int:
        """Remove chunks (all their rows); returns how many chunks were removed."""
        with self._lock:
            removed = self._delete_locked(set(chunk_ids))
            if removed:
                self._maybe_compact()
                self._publish()
        return removed

    def delete_paths(self, project: str, paths: Iterable[str]) -> int:
        """Remove every chunk of these files of `project`; returns how many chunks were removed."""
        with self._lock:
            ids: set[str] = set()
            for p in paths:
                ids |= self._chunks_by_path.get((project, p), set())
            return self.delete_chunk_ids(ids)

    def delete_project(self, project: str) -> int:
        with self._lock:
            ids = {c for c, p in self._chunk_project.items() if p == project}
            return self.delete_chunk_ids(ids)

    def has(self, chunk_id: str) -> bool:
        return chunk_id in self._rows_by_chunk

    def chunk_ids(self, project: str | None = None) -> set[str]:
        with self._lock:
            if project is None:
                return set(self._rows_by_chunk)
            return {c for c, p in self._chunk_project.items() if p == project}

    def count(self, project: str | None = None) -> int:
        """Chunks (not rows) stored, for one project or all."""
        with self._lock:
            if project is None:
                return len(self._rows_by_chunk)
            return self._per_project.get(project, 0)

    def row_count(self) -> int:
        return int(self._snapshot.alive.sum())

    def search(
        self,
        query_vec: np.ndarray,
        k: int,
        project: str | None = None,
        path_prefix: str | None = None,
        language: str | None = None,
        *,
        exact: bool = False,
    ) -> list[tuple[str, float]]:
        """Best `k` chunks by cosine (a chunk scores as its best piece), best first.
        `exact`: scan every row even where an approximate index exists (recall checks)."""
        snap = self._snapshot
        if snap.n == 0 or k <= 0:
            return []
        mask = snap.mask(project, path_prefix, language)
        if mask is None:
            return []
        valid = int(mask.sum())
        if valid == 0:
            return []
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        mm = snap.mapped[0] if snap.mapped is not None else None
        if valid * NARROW_FILTER_SHARE < snap.n:  # exact, and cheaper than any probe
            return chunks_among(snap.mat, np.flatnonzero(mask), q, snap.chunk_ids, k, mm)
        if snap.centroids is not None and not exact:
            found = approximate_chunks(
                snap.mat, snap.centroids, snap.lists, snap.in_order, q, mask, snap.chunk_ids, k, mm
            )
            if found is not None:
                return found
        if snap.mapped is not None:
            scores = mapped_scores(snap.mat, q, *snap.mapped)
        else:
            scores = snap.mat @ q
        scores[~mask] = -np.inf
        return best_chunks(scores, snap.chunk_ids, valid, k)

    def maintain_index(self) -> str:
        """Writer, between embedding rounds: build the approximate index, or rebuild it when
        the rows drifted from its lists (ivf.drift); the next save writes it. Returns why it
        was (re)built, "" when nothing was needed. Searches keep running meanwhile (exact, or
        on the old lists)."""
        snap = self._snapshot
        if not self._writable() or snap is self._checked:
            return ""
        self._checked = snap
        trained = self._trained_rows if snap.centroids is not None else 0
        n_lists = len(snap.centroids) if snap.centroids is not None else 0
        reason = ivf.drift(snap.lists, snap.alive, trained, n_lists)
        if not reason:
            return ""
        layout = self._layout
        t0 = time.perf_counter()
        centroids = ivf.train(snap.mat, snap.alive)
        lists = ivf.assign(snap.mat, centroids)
        if snap.mapped is not None and hasattr(snap.mapped[0], "madvise"):
            with contextlib.suppress(OSError, ValueError):  # the pass read every page
                snap.mapped[0].madvise(mmap.MADV_DONTNEED)
        with self._lock:
            if self._layout != layout:  # rows renumbered meanwhile: the next round retries
                self._checked = None
                return ""
            fresh = np.full(len(self._list), ivf.UNASSIGNED, dtype=np.int32)  # copy on write
            fresh[: snap.n] = lists
            if self._n > snap.n:
                fresh[snap.n : self._n] = ivf.assign(self._mat[snap.n : self._n], centroids)
            self._list, self._centroids = fresh, centroids
            self._trained_rows = int(snap.alive.sum())
            self._ivf_generation = 0  # not on disk yet
            self.ann_note = ""
            self._dirty = True
            self._publish()
        log.info(
            "vector store %s: approximate index of %d lists over %d rows built in %.1f s (%s)",
            self.directory, len(centroids), self._trained_rows, time.perf_counter() - t0, reason,
        )  # fmt: skip
        return reason

    def flush(self) -> bool:
        """Save if anything changed since the last save; returns whether it wrote."""
        if not self._dirty or not self._writable():
            return False
        self.save()
        return True

    def reload(self) -> None:
        """Read the committed store again (this process is about to become its writer: the
        previous writer may have committed newer generations than the ones read at open)."""
        with self._save_lock, self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)  # a rebuild may have removed it
            self._reset(_MIN_CAPACITY)
            self._generation = 0
            self._dirty = False
            self.load_error = ""
            self.ann_note = ""
            self._checked = None
            self._load()
            self._publish()

    def set_commit_hooks(
        self,
        take: Callable[[], list[str]],
        committed: Callable[[list[str]], None],
        failed: Callable[[list[str]], None],
    ) -> None:
        """`take()` runs as a save takes its snapshot (under the writers' lock, so what it
        returns was added before); `committed(taken)` once that save is durable, `failed(taken)`
        if it was not."""
        self._commit_hooks = (take, committed, failed)

    def save(self) -> None:
        """Write a new generation and commit it atomically (crash-safe). Writer only."""
        if not self._writable():
            raise PermissionError(f"vector store {self.directory}: another process writes it")
        hooks = self._commit_hooks
        with self._save_lock:
            with self._lock:
                snap = self._snapshot
                self._dirty = False
                generation = self._generation + 1
                taken = hooks[0]() if hooks is not None else []
                ivf_generation = self._ivf_generation or generation
                trained_rows = self._trained_rows
            try:
                self._write_generation(snap, generation, ivf_generation, trained_rows)
            except BaseException:
                self._dirty = True
                if hooks is not None:
                    hooks[2](taken)
                raise
            self._generation = generation
            if snap.centroids is not None:
                with self._lock:
                    if self._centroids is snap.centroids:  # not retrained meanwhile
                        self._ivf_generation = ivf_generation
            if hooks is not None:
                hooks[1](taken)
            self._remove_stale_files()

    def close(self) -> None:
        self.flush()

    # --- internals ------------------------------------------------------------------------

    def _reset(self, capacity: int) -> None:
        self._n = 0
        self._mat = np.zeros((capacity, self.dims), dtype=np.float32)
        self._mapped: tuple[mmap.mmap, int] | None = None
        self._alive = np.zeros(capacity, dtype=bool)
        self._proj = np.zeros(capacity, dtype=np.int32)
        self._lang = np.zeros(capacity, dtype=np.int32)
        self._path = np.zeros(capacity, dtype=np.int32)
        self._list = np.full(capacity, ivf.UNASSIGNED, dtype=np.int32)
        self._centroids = None
        self._trained_rows = 0
        self._ivf_generation = 0  # the generation whose ivf file holds the centroids; 0: none
        self._layout = getattr(self, "_layout", 0) + 1
        self._chunk_ids: list[str] = []
        self._path_names: list[str] = []
        self._path_codes: dict[str, int] = {}
        self._project_codes: dict[str, int] = {}
        self._language_codes: dict[str, int] = {}
        self._rows_by_chunk: dict[str, list[int]] = {}
        self._chunk_project: dict[str, str] = {}
        self._per_project: dict[str, int] = {}
        self._chunks_by_path: dict[tuple[str, str], set[str]] = {}

    def _publish(self) -> None:
        n = self._n
        self._snapshot = _Snapshot(
            n=n,
            mat=self._mat[:n],
            mapped=self._mapped,
            alive=self._alive[:n],
            proj=self._proj[:n],
            lang=self._lang[:n],
            path=self._path[:n],
            chunk_ids=self._chunk_ids,
            path_names=self._path_names,
            n_paths=len(self._path_names),
            project_codes=dict(self._project_codes),
            language_codes=dict(self._language_codes),
            lists=self._list[:n],
            in_order=ivf.sorted_prefix(self._list[:n]) if self._centroids is not None else 0,
            centroids=self._centroids,
        )

    def _ensure_capacity(self, needed: int) -> None:
        cap = min(len(self._alive), len(self._mat))  # a mapped matrix is exactly full
        if needed <= cap:
            return
        new_cap = max(needed, cap * 2)
        # Fresh arrays: published snapshots keep the old ones, untouched (a mapped matrix
        # moves into memory here: its mapping stays with the snapshots that read it).
        self._mat = _grow(self._mat, new_cap, self._n)
        self._mapped = None
        self._alive = _grow(self._alive, new_cap, self._n)
        self._proj = _grow(self._proj, new_cap, self._n)
        self._lang = _grow(self._lang, new_cap, self._n)
        self._path = _grow(self._path, new_cap, self._n)
        lists = np.full(new_cap, ivf.UNASSIGNED, dtype=np.int32)
        lists[: self._n] = self._list[: self._n]
        self._list = lists

    def _delete_locked(self, chunk_ids: set[str]) -> int:
        rows: list[int] = []
        removed = 0
        for cid in chunk_ids:
            found = self._rows_by_chunk.pop(cid, None)
            if found is None:
                continue
            removed += 1
            rows.extend(found)
            project = self._chunk_project.pop(cid)
            self._per_project[project] -= 1
            path = self._path_names[int(self._path[found[0]])]
            members = self._chunks_by_path.get((project, path))
            if members is not None:
                members.discard(cid)
                if not members:
                    del self._chunks_by_path[(project, path)]
        if rows:
            alive = self._alive.copy()  # copy-on-write: snapshots hold the old flags
            alive[rows] = False
            self._alive = alive
            self._dirty = True
        return removed

    def _maybe_compact(self) -> None:
        dead = self._n - int(self._alive[: self._n].sum())
        if self._n and dead / self._n > VECTOR_COMPACT_DEAD_SHARE:
            self._compact()

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._n])
        mat, proj, lang, path = (a[keep] for a in (self._mat, self._proj, self._lang, self._path))
        ids = [self._chunk_ids[i] for i in keep]
        names = list(self._path_names)
        project_names = {v: k for k, v in self._project_codes.items()}
        language_names = {v: k for k, v in self._language_codes.items()}
        lists, centroids = self._list[keep], self._centroids
        trained, on_disk = self._trained_rows, self._ivf_generation
        self._reset(max(_MIN_CAPACITY, len(keep) * 2))
        self._fill(
            mat,
            ids,
            [project_names[int(c)] for c in proj],
            [names[int(c)] for c in path],
            [language_names[int(c)] for c in lang],
        )
        self._list[: len(keep)] = lists
        self._centroids, self._trained_rows, self._ivf_generation = centroids, trained, on_disk

    def _fill(
        self,
        mat: np.ndarray,
        ids: list[str],
        projects: list[str],
        paths: list[str],
        languages: list[str],
        mapped: tuple[mmap.mmap, int] | None = None,
    ) -> None:
        """Bulk-load rows into an empty store (open and compaction); `mapped`: `mat` is that
        file mapping's, kept as the matrix rather than copied."""
        n = len(ids)
        self._ensure_capacity(n)
        if mapped is not None:
            self._mat, self._mapped = mat, mapped
        else:
            self._mat[:n] = mat
        self._alive[:n] = True
        for row, (cid, proj, path, lang) in enumerate(
            zip(ids, projects, paths, languages, strict=True)
        ):
            self._proj[row] = _code(self._project_codes, None, proj)
            self._lang[row] = _code(self._language_codes, None, lang)
            self._path[row] = _code(self._path_codes, self._path_names, path)
            self._chunk_ids.append(cid)
            rows = self._rows_by_chunk.setdefault(cid, [])
            if not rows:
                self._chunk_project[cid] = proj
                self._per_project[proj] = self._per_project.get(proj, 0) + 1
                self._chunks_by_path.setdefault((proj, path), set()).add(cid)
            rows.append(row)
        self._n = n

    # --- persistence ----------------------------------------------------------------------

    def _write_generation(
        self, snap: _Snapshot, generation: int, ivf_generation: int, trained_rows: int
    ) -> None:
        """`ivf_generation`: the generation whose ivf file holds the centroids (this one when
        they are new). With an index, rows are written list by list, so that a probed list
        is one stretch of the file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        keep = np.flatnonzero(snap.alive)
        if snap.centroids is not None:
            keep = keep[np.argsort(snap.lists[keep], kind="stable")]
        project_names = {v: k for k, v in snap.project_codes.items()}
        language_names = {v: k for k, v in snap.language_codes.items()}
        rows = {
            "chunk_ids": [snap.chunk_ids[i] for i in keep],
            "projects": sorted(snap.project_codes, key=snap.project_codes.__getitem__),
            "languages": [language_names[i] for i in range(len(language_names))],
            "paths": snap.path_names[: snap.n_paths],
            "project": snap.proj[keep].tolist(),
            "language": snap.lang[keep].tolist(),
            "path": snap.path[keep].tolist(),
        }
        assert len(project_names) == len(rows["projects"])
        vec_path = self.directory / f"vectors.{generation}.npy"
        rows_path = self.directory / f"rows.{generation}.json"
        mat = np.ascontiguousarray(snap.mat[keep])
        rows_bytes = json.dumps(rows, separators=(",", ":")).encode("utf-8")
        with _atomic_file(vec_path) as fh:
            np.save(fh, mat, allow_pickle=False)
        with _atomic_file(rows_path) as fh:
            fh.write(rows_bytes)
        index: dict[str, Any] | None = None
        if snap.centroids is not None:
            lists = np.ascontiguousarray(snap.lists[keep])
            with _atomic_file(self.directory / f"lists.{generation}.npy") as fh:
                np.save(fh, lists, allow_pickle=False)
            if ivf_generation == generation:
                with _atomic_file(self.directory / f"ivf.{generation}.npy") as fh:
                    np.save(fh, snap.centroids, allow_pickle=False)
            index = {
                "generation": ivf_generation,
                "trained_rows": trained_rows,
                "crc": [zlib.crc32(snap.centroids.data), zlib.crc32(lists.data)],
            }
        pointer = {
            "format": FORMAT,
            "generation": generation,
            "model_id": self.model_id,
            "dims": self.dims,
            "rows": len(keep),
            # Damage inside the data (not only a truncation) is found on open.
            "crc": [zlib.crc32(mat.data), zlib.crc32(rows_bytes)],
            "ivf": index,
        }
        with _atomic_file(self.directory / POINTER) as fh:
            fh.write(json.dumps(pointer).encode("utf-8"))
        _fsync_dir(self.directory)

    def _load(self) -> None:
        if self._writable():
            self._remove_stale_files(keep_generation=None)
        for attempt in range(_LOAD_TRIES):
            seen = self._pointer_generation()
            try:
                self._load_committed()
                return
            except Exception as exc:  # any damage (EOFError from an empty .npy included)
                if attempt + 1 < _LOAD_TRIES and self._pointer_generation() != seen:
                    self._reset(_MIN_CAPACITY)  # the writer switched generation: read again
                    continue
                log.warning("vector store %s unreadable (%s); starting empty", self.directory, exc)
                self.load_error = f"vector store unreadable ({type(exc).__name__}: {exc})"[:300]
                self._reset(_MIN_CAPACITY)
                self._dirty = True
                return

    def _pointer_generation(self) -> object:
        try:
            return json.loads((self.directory / POINTER).read_text("utf-8")).get("generation")
        except (OSError, ValueError, AttributeError):
            return None

    def _load_committed(self) -> None:
        pointer_path = self.directory / POINTER
        if not pointer_path.exists():
            return
        pointer: dict[str, Any] = json.loads(pointer_path.read_text("utf-8"))
        if (
            pointer.get("format") != FORMAT
            or pointer.get("model_id") != self.model_id
            or pointer.get("dims") != self.dims
        ):
            log.info("vector store %s: model or format changed; starting empty", self.directory)
            self._generation = int(pointer.get("generation", 0))
            self._dirty = True  # the next save replaces the old generation
            return
        generation = int(pointer["generation"])
        vec_path = self.directory / f"vectors.{generation}.npy"
        # Mapped where a mapped file can still be replaced and removed (POSIX): see above.
        map_it = os.name == "posix" and int(pointer.get("rows", 0)) > 0
        mat = np.load(vec_path, allow_pickle=False, mmap_mode="r" if map_it else None)
        rows_bytes = (self.directory / f"rows.{generation}.json").read_bytes()
        rows = json.loads(rows_bytes.decode("utf-8"))
        ids: list[str] = rows["chunk_ids"]
        if mat.shape != (len(ids), self.dims) or len(ids) != pointer["rows"]:
            raise ValueError(f"shape {mat.shape} does not match {len(ids)} rows")
        crc = pointer.get("crc")
        if crc is not None and crc != [
            zlib.crc32(np.ascontiguousarray(mat).data),  # its buffer: no copy of the matrix
            zlib.crc32(rows_bytes),
        ]:
            raise ValueError("vector data does not match its checksum")
        mm = getattr(mat, "_mmap", None)
        # np.memmap maps from the allocation boundary below the data's file offset.
        at = int(getattr(mat, "offset", 0)) % mmap.ALLOCATIONGRANULARITY
        mapped = (mm, at) if mm is not None else None
        if mapped is not None and (mat.dtype != np.float32 or not mat.flags.c_contiguous):
            mapped = None
        if mapped is not None and hasattr(mapped[0], "madvise"):
            with contextlib.suppress(OSError, ValueError):  # the checksum read every page
                mapped[0].madvise(mmap.MADV_DONTNEED)
        self._fill(
            mat if mapped is not None else mat.astype(np.float32, copy=False),
            ids,
            [rows["projects"][c] for c in rows["project"]],
            [rows["paths"][c] for c in rows["path"]],
            [rows["languages"][c] for c in rows["language"]],
            mapped,
        )
        self._generation = generation
        found = read_index(self.directory, pointer, len(ids))
        if isinstance(found, str):
            self.ann_note = found
            if found:  # said where the server's log shows it; the worker rebuilds it
                log.warning("%s: %s", self.directory, found)
        else:
            centroids, lists, self._ivf_generation, self._trained_rows = found
            self._list[: len(ids)] = lists
            self._centroids = centroids
        if self._writable():
            self._remove_stale_files()

    def _remove_stale_files(self, keep_generation: int | None = -1) -> None:
        """Delete temp files and data files of other generations (-1: the current one).
        Writer only: a reader would delete what the writer is writing."""
        if not self._writable():
            return
        keep = self._generation if keep_generation == -1 else keep_generation
        for entry in self.directory.iterdir():
            name = entry.name
            if name.endswith(".tmp"):
                entry.unlink(missing_ok=True)
                continue
            parts = name.split(".")
            if len(parts) != 3 or not parts[1].isdigit() or keep is None:
                continue
            if parts[0] in ("vectors", "rows", "lists") and int(parts[1]) != keep:
                entry.unlink(missing_ok=True)
            elif (
                parts[0] == "ivf" and self._ivf_generation and int(parts[1]) != self._ivf_generation
            ):
                entry.unlink(missing_ok=True)  # centroids of another training (0: not known yet)


def read_index(
    directory: Path, pointer: dict[str, Any], rows: int
) -> tuple[np.ndarray, np.ndarray, int, int] | str:
    """The committed approximate index (centroids, each row's list, the centroids'
    generation, rows when trained), or why searches scan exactly ("" when that is normal:
    fewer than IVF_MIN_ROWS rows)."""
    index = pointer.get("ivf")
    if not index:
        if rows < IVF_MIN_ROWS:
            return ""
        return (
            f"no approximate index over {rows:,} vectors (not built yet, or its build was "
            "interrupted): searches scan every vector exactly until the writer builds it"
        )
    try:
        generation = int(pointer["generation"])
        centroids = np.load(directory / f"ivf.{int(index['generation'])}.npy", allow_pickle=False)
        lists = np.load(directory / f"lists.{generation}.npy", allow_pickle=False)
        if lists.shape != (rows,) or centroids.ndim != 2 or lists.max(initial=-1) >= len(centroids):
            raise ValueError(f"shapes {centroids.shape} / {lists.shape} for {rows} rows")
        if [zlib.crc32(centroids.data), zlib.crc32(lists.data)] != index.get("crc"):
            raise ValueError("does not match its checksum")
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        log.warning("approximate index in %s unreadable (%s): exact scans", directory, exc)
        return (
            f"approximate index unreadable ({type(exc).__name__}: {exc}): searches scan every "
            "vector exactly until the writer rebuilds it"
        )[:300]
    lists = lists.astype(np.int32, copy=False)
    return (
        centroids.astype(np.float32, copy=False),
        lists,
        int(index["generation"]),
        int(index.get("trained_rows", rows)),
    )


def _code(codes: dict[str, int], names: list[str] | None, value: str) -> int:
    code = codes.get(value)
    if code is None:
        code = len(codes)
        codes[value] = code
        if names is not None:
            names.append(value)
    return code


def _grow(arr: np.ndarray, capacity: int, used: int) -> np.ndarray:
    out = np.zeros((capacity, *arr.shape[1:]), dtype=arr.dtype)
    out[:used] = arr[:used]
    return out


@contextlib.contextmanager
def _atomic_file(path: Path) -> Any:
    """Write to `<path>.<pid>.tmp`, fsync, then os.replace onto `path`."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not supported on every platform/filesystem
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
