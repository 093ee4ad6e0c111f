"""Give an indexed project synthetic vectors, so an embedded project can be benchmarked without
hours of embedding (memory and latency do not depend on the vectors' values).

    .venv/bin/python scripts/synthetic_vectors.py --storage bench-data/store/django \\
        --workspace bench-data/django-5.2.8 [--pieces-per-chunk 1.15]

Writes the project's vector store (clustered random unit vectors, see clustered_unit_vectors,
under the real model's store id: one
per chunk, plus a second piece for a share of chunks, as Django's chunks split, see
bench_vector_scale.py) and flags every chunk embedded, as the embedding worker would. Search
results over such a store are meaningless: use it for RSS and timings only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from code_compass_server.embed.model import Embedder
from code_compass_server.embed.model_id import store_id
from code_compass_server.embed.vectors import VectorItem, VectorStore
from code_compass_server.index.catalog import Catalog
from code_compass_server.storage import project_storage

TOPIC_SPREAD = 0.9  # noise around a topic (and a topic around its theme), relative to unit


def clustered_unit_vectors(
    n: int, dims: int, rng: np.random.Generator, topics: int = 4096, themes: int = 64
) -> np.ndarray:
    """`n` unit vectors grouped as embeddings are (themes > topics > vectors), float32 [n, dims].

    Uniform random vectors have no near neighbours (every cosine ~0), which no approximate
    index can search and no embedding model produces; here a vector's nearest rows share its
    topic (cosine ~0.6) and its theme (~0.3), unrelated ones ~0. Fine for recall and latency
    of the vector index; meaningless as search results."""

    def unit(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = x / np.linalg.norm(x, axis=-1, keepdims=True)
        return out

    def noise(m: int) -> np.ndarray:
        return unit(rng.standard_normal((m, dims), dtype=np.float32))

    theme = noise(themes)
    topic = unit(theme[rng.integers(0, themes, topics)] + TOPIC_SPREAD * noise(topics))
    out = np.empty((n, dims), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        out[start : start + m] = unit(topic[rng.integers(0, topics, m)] + TOPIC_SPREAD * noise(m))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--storage", type=Path, required=True)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--pieces-per-chunk", type=float, default=1.15)
    args = ap.parse_args()
    directory = project_storage(args.storage, args.workspace)
    catalog = Catalog(directory / "catalog.sqlite")
    name = directory.name
    rows = catalog._query("SELECT id, path, language FROM chunks")
    rng = np.random.default_rng(0)
    store = VectorStore(directory / "vectors", store_id(Embedder(threads=1)))
    extra = rng.random(len(rows)) < args.pieces_per_chunk - 1.0
    vectors = clustered_unit_vectors(len(rows) + int(extra.sum()), store.dims, rng)
    items: list[VectorItem] = []
    k = 0
    for (cid, path, language), two in zip(rows, extra, strict=True):
        for _ in range(2 if two else 1):
            items.append(VectorItem(str(cid), name, str(path), str(language), vectors[k]))
            k += 1
    store.add(items)
    store.save()
    catalog.mark_embedded(str(r[0]) for r in rows)
    print(f"{directory}: {len(rows):,} chunks, {k:,} synthetic vectors, all flagged embedded")


if __name__ == "__main__":
    main()
