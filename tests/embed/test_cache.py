"""The embedding cache: hits by content hash, model separation, garbage collection."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from code_compass.embed.cache import EmbeddingCache


def test_get_put_and_model_separation(tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    cache = EmbeddingCache(db, "m1", dims=4)
    v = np.array([1, 0, 0, 0], dtype=np.float32)
    cache.put_many([("h1", v), ("h2", v * 2)])
    got = cache.get_many(["h1", "h2", "h3", "h1"])
    assert set(got) == {"h1", "h2"}
    np.testing.assert_array_equal(got["h2"], v * 2)
    assert EmbeddingCache(db, "m2", dims=4).get_many(["h1"]) == {}
    cache.close()
    reopened = EmbeddingCache(db, "m1", dims=4)
    assert set(reopened.get_many(["h1"])) == {"h1"} and reopened.count() == 2


def test_gc_by_age_and_size(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite", "m", dims=2)
    cache.put_many((f"h{i}", np.ones(2, dtype=np.float32)) for i in range(10))
    assert cache.gc(keep_days=30, max_entries=100) == 0
    assert cache.gc(keep_days=30, max_entries=6) == 4 and cache.count() == 6
    assert cache.gc(keep_days=30, now=time.time() + 40 * 86_400) == 6
    assert cache.count() == 0
