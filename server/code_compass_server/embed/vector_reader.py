"""A read-only view of a vector store's last committed generation, for one-shot query processes.

A command-line search needs the vectors once: loading the whole matrix into memory (and the
per-row bookkeeping a writer needs) would cost more than the query. Here the vector file is
memory-mapped read-only and scanned in blocks whose pages are released after use, so a cold
process touches each page once and its resident memory stays a block, not the matrix. Row
metadata (chunk ids, filter codes) is decoded from the generation's rows file.

The files are the ones `VectorStore` commits (vectors.py: store.json points at vectors.<gen>.npy
and rows.<gen>.json). A writer may commit a new generation and remove this one meanwhile: the
mapping keeps the removed file readable, so a search sees one consistent generation.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
from pathlib import Path
from typing import Any

import numpy as np

from code_compass_server.embed import ivf
from code_compass_server.embed.vectors import (
    FORMAT,
    NARROW_FILTER_SHARE,
    POINTER,
    approximate_chunks,
    best_chunks,
    chunks_among,
    mapped_scores,
    read_index,
)

log = logging.getLogger(__name__)

_OPEN_ATTEMPTS = 3  # a writer may switch generations between the pointer and the files


class VectorReader:
    """Exact cosine top-k over a committed generation; never writes. Safe to share between
    threads (nothing mutates after open)."""

    def __init__(self, directory: Path, model_id: str, dims: int) -> None:
        self.directory = directory
        self.dims = dims
        self._mm: mmap.mmap | None = None
        self._mat = np.zeros((0, dims), dtype=np.float32)
        self._ids: list[str] = []
        self._proj = self._lang = self._path = np.zeros(0, dtype=np.int32)
        self._project_codes: dict[str, int] = {}
        self._language_codes: dict[str, int] = {}
        self._path_names: list[str] = []
        self._centroids: np.ndarray | None = None
        self._lists = np.zeros(0, dtype=np.int32)
        self._in_order = 0
        self.ann_note = ""  # why a big store is scanned exactly ("" if it is not, or small)
        for _ in range(_OPEN_ATTEMPTS):
            try:
                self._open(model_id)
                break
            except FileNotFoundError:  # the generation was just replaced: read the new one
                continue
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("vectors in %s unreadable (%s): lexical only", directory, exc)
                break

    def _open(self, model_id: str) -> None:
        pointer: dict[str, Any] = json.loads((self.directory / POINTER).read_text("utf-8"))
        if (
            pointer.get("format") != FORMAT
            or pointer.get("model_id") != model_id
            or pointer.get("dims") != self.dims
        ):
            return  # another model's vectors: not comparable, none for now
        generation = int(pointer["generation"])
        rows = json.loads((self.directory / f"rows.{generation}.json").read_text("utf-8"))
        with (self.directory / f"vectors.{generation}.npy").open("rb") as fh:
            fmt = np.lib.format
            major, _minor = fmt.read_magic(fh)
            read_header = fmt.read_array_header_1_0 if major == 1 else fmt.read_array_header_2_0
            shape, fortran, dtype = read_header(fh)
            offset = fh.tell()
            n = int(shape[0]) if shape else 0
            if fortran or dtype != np.float32 or shape != (len(rows["chunk_ids"]), self.dims):
                raise ValueError(f"vector file shape {shape} does not match its rows")
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if n else None
        if mm is not None:
            self._mat = np.frombuffer(mm, np.float32, n * self.dims, offset).reshape(n, self.dims)
            self._offset = offset
        self._mm = mm
        self._ids = rows["chunk_ids"]
        self._proj = np.asarray(rows["project"], dtype=np.int32)
        self._lang = np.asarray(rows["language"], dtype=np.int32)
        self._path = np.asarray(rows["path"], dtype=np.int32)
        self._project_codes = {name: i for i, name in enumerate(rows["projects"])}
        self._language_codes = {name: i for i, name in enumerate(rows["languages"])}
        self._path_names = rows["paths"]
        found = read_index(self.directory, pointer, n)
        if isinstance(found, str):
            self.ann_note = found
            if found:
                log.warning("%s: %s", self.directory, found)
        else:
            self._centroids, self._lists = found[0], found[1]
            self._in_order = ivf.sorted_prefix(self._lists)

    def count(self) -> int:
        return len(self._ids)

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
        n = len(self._ids)
        if n == 0 or k <= 0:
            return []
        mask = self._mask(project, path_prefix, language)
        if mask is not None and not mask.any():
            return []
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        valid = int(mask.sum()) if mask is not None else n
        if mask is not None and valid * NARROW_FILTER_SHARE < n:  # exact, cheaper than a probe
            return chunks_among(self._mat, np.flatnonzero(mask), q, self._ids, k, self._mm)
        if self._centroids is not None and not exact:
            found = approximate_chunks(
                self._mat,
                self._centroids,
                self._lists,
                self._in_order,
                q,
                mask,
                self._ids,
                k,
                self._mm,
            )
            if found is not None:
                return found
        scores = self._scores(q)
        if mask is not None:
            scores[~mask] = -np.inf
        return best_chunks(scores, self._ids, valid, k)

    def _scores(self, q: np.ndarray) -> np.ndarray:
        """Cosine of every row, block by block; each block's pages are dropped after use."""
        return mapped_scores(self._mat, q, self._mm, getattr(self, "_offset", 0))

    def _mask(
        self, project: str | None, prefix: str | None, language: str | None
    ) -> np.ndarray | None:
        """Rows passing the filters; None when there is no filter."""
        mask: np.ndarray | None = None

        def narrow(m: np.ndarray) -> None:
            nonlocal mask
            mask = m if mask is None else mask & m

        if project is not None:
            code = self._project_codes.get(project)
            narrow(self._proj == code if code is not None else np.zeros(len(self._ids), bool))
        if language is not None:
            code = self._language_codes.get(language.lower())
            narrow(self._lang == code if code is not None else np.zeros(len(self._ids), bool))
        if prefix:
            table = np.fromiter(
                (p.startswith(prefix) for p in self._path_names),
                dtype=bool,
                count=len(self._path_names),
            )
            narrow(table[self._path])
        return mask

    def close(self) -> None:
        self._mat = np.zeros((0, self.dims), dtype=np.float32)
        mm, self._mm = self._mm, None
        if mm is not None:
            with contextlib.suppress(BufferError):  # a search still holds a view: GC closes it
                mm.close()
