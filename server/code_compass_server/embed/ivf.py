"""The approximate vector index: an inverted file (IVF) of k-means lists over a store's rows.

Exact cosine over every row costs ~2 s at 1.5 M vectors (issue #31): instead the rows are
grouped around `4 sqrt(rows)` centroids (spherical k-means on a sample), a query scores the
centroids, and only the rows of the best few lists are scored — exactly, so the returned
cosines are the true ones and only the candidate set is approximate. Rows added later go to
their nearest list; the lists are retrained when the rows drift away from what they were
trained on (the row count changed by IVF_DRIFT_GROWTH, or one list swelled past
IVF_DRIFT_LIST_SHARE). Below IVF_MIN_ROWS rows nothing is built: the exact scan is fast.

Numpy only: no dependency. The store (vectors.py) owns persistence; this module is the math.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from code_compass_server.constants import (
    IVF_DRIFT_GROWTH,
    IVF_DRIFT_LIST_SHARE,
    IVF_LISTS_PER_SQRT,
    IVF_MAX_LISTS,
    IVF_MIN_LISTS,
    IVF_MIN_PROBES,
    IVF_MIN_ROWS,
    IVF_PROBE_SHARE,
    IVF_TRAIN_ITERATIONS,
    IVF_TRAIN_PER_LIST,
)

ASSIGN_BLOCK = 16_384  # rows per block when assigning (a block x lists score matrix)
UNASSIGNED = -1  # a row no list holds yet: always scanned


def list_count(rows: int) -> int:
    return max(IVF_MIN_LISTS, min(IVF_MAX_LISTS, int(IVF_LISTS_PER_SQRT * math.sqrt(rows))))


def probe_count(lists: int) -> int:
    return min(lists, max(IVF_MIN_PROBES, math.ceil(lists * IVF_PROBE_SHARE)))


def train(mat: np.ndarray, alive: np.ndarray, seed: int = 0) -> np.ndarray:
    """Unit centroids [lists, dims] of the `alive` rows of `mat` (spherical k-means on a
    sample; an emptied list is re-seeded with the row its centroid fits worst)."""
    rows = np.flatnonzero(alive)
    k = min(list_count(len(rows)), len(rows))
    rng = np.random.default_rng(seed)
    take = min(len(rows), k * IVF_TRAIN_PER_LIST)
    sample = np.sort(rng.choice(rows, size=take, replace=False))
    x = np.asarray(mat[sample], dtype=np.float32)  # sorted: a mapped matrix reads forward
    centroids = x[rng.choice(take, size=k, replace=False)].copy()
    for _ in range(IVF_TRAIN_ITERATIONS):
        sims = x @ centroids.T
        best = sims.argmax(axis=1)
        fit = sims[np.arange(take), best]
        sums = np.zeros_like(centroids)
        np.add.at(sums, best, x)
        counts = np.bincount(best, minlength=k)
        empty = np.flatnonzero(counts == 0)
        if len(empty):
            worst = np.argsort(fit)[: len(empty)]
            sums[empty] = x[worst]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = sums / np.maximum(norms, 1e-12)
    return centroids.astype(np.float32)


def assign(mat: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The nearest list of every row of `mat`, int32."""
    out = np.empty(len(mat), dtype=np.int32)
    for start in range(0, len(mat), ASSIGN_BLOCK):
        block = np.asarray(mat[start : start + ASSIGN_BLOCK], dtype=np.float32)
        out[start : start + len(block)] = (block @ centroids.T).argmax(axis=1)
    return out


def drift(lists: np.ndarray, alive: np.ndarray, trained_rows: int, n_lists: int) -> str:
    """Why the lists no longer fit the rows ("" if they still do)."""
    live = int(alive.sum())
    if live < IVF_MIN_ROWS:
        return ""
    if trained_rows <= 0:
        return "no approximate index yet"
    if live > trained_rows * IVF_DRIFT_GROWTH or live * IVF_DRIFT_GROWTH < trained_rows:
        return f"{live:,} rows against {trained_rows:,} when trained"
    held = lists[alive]
    sizes = np.bincount(held[held >= 0], minlength=n_lists)
    if sizes.max(initial=0) > live * IVF_DRIFT_LIST_SHARE:
        return f"one list holds {int(sizes.max()):,} of {live:,} rows"
    return ""


def sorted_prefix(lists: np.ndarray) -> int:
    """How many leading rows are in list order (a saved store writes its rows list by list;
    rows added since follow in any order)."""
    if len(lists) < 2:
        return len(lists)
    falls = np.flatnonzero(lists[1:] < lists[:-1])
    return len(lists) if len(falls) == 0 else int(falls[0]) + 1


def probe(
    centroids: np.ndarray, lists: np.ndarray, in_order: int, q: np.ndarray, probes: int
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The rows of the `probes` lists nearest `q`, and of no list yet: as spans [start, end)
    of the first `in_order` rows (in list order: each list is one stretch, found by bisection,
    and scored without a copy), and the other rows one by one (ascending)."""
    k = len(centroids)
    near = np.argpartition(-(centroids @ q), probes - 1)[:probes] if probes < k else np.arange(k)
    wanted = np.sort(np.append(near, UNASSIGNED))
    head = lists[:in_order]
    starts = np.searchsorted(head, wanted, side="left")
    ends = np.searchsorted(head, wanted, side="right")
    spans = [(int(a), int(b)) for a, b in zip(starts, ends, strict=True) if b > a]
    chosen = np.zeros(k + 1, dtype=bool)  # slot 0: UNASSIGNED, shifted by one
    chosen[wanted + 1] = True
    tail = np.flatnonzero(chosen[lists[in_order:] + 1]) + in_order
    return spans, tail


class PickedIds(Sequence[str]):
    """The chunk ids of a subset of rows, indexed as the subset is (no copy of the list)."""

    def __init__(self, chunk_ids: Sequence[str], rows: np.ndarray) -> None:
        self._ids = chunk_ids
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self._ids[int(self._rows[i])]
