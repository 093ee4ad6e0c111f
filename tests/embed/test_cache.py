"""The embedding cache: hits by content hash, model separation, garbage collection, and the
collection running on its own in an engine (size cap, age limit)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed import cache as cache_module
from code_compass_server.embed.cache import EmbeddingCache
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from tests.conftest import write_tree


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


def _put(cache: EmbeddingCache, names: range) -> None:
    cache.put_many((f"h{i}", np.ones(2, dtype=np.float32)) for i in names)


def test_maybe_gc_allows_a_margin_during_a_run_and_enforces_the_cap_at_its_end(
    tmp_path: Path,
) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite", "m", dims=2, max_entries=20)
    assert cache.maybe_gc() == 0  # the first call collects (never collected): nothing to drop
    _put(cache, range(22))
    assert cache.maybe_gc() == 0 and cache.count() == 22  # within the 10% margin: no churn
    _put(cache, range(22, 30))
    assert cache.maybe_gc() == 10 and cache.count() == 20  # past the margin: back to the cap
    _put(cache, range(30, 31))
    assert cache.maybe_gc(run_finished=True) == 1 and cache.count() == 20
    assert set(cache.get_many(["h0", "h10", "h30"])) == {"h30"}  # the oldest rows went first


def test_collections_are_shared_by_processes_using_the_file(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    first = EmbeddingCache(db, "m", dims=2)
    second = EmbeddingCache(db, "m", dims=2)  # another window's server: its own connection
    _put(first, range(3))
    _age(db, "h0", days=40)
    assert first.maybe_gc() == 1  # due: nobody has collected this file yet
    _age(db, "h1", days=40)
    assert second.maybe_gc() == 0  # the first collected moments ago: not due for the second
    assert second.count() == 2
    assert second.gc() == 1 and first.count() == 1  # an explicit collection always runs


def _age(db: Path, hash_: str, days: int) -> None:
    """Back-date one entry, through a connection of its own (as another process would)."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE vectors SET last_used = last_used - ? WHERE hash = ?", (days, hash_))


def _old_rows(db: Path, n: int, days_ago: int) -> list[str]:
    """Rows of another model, last used `days_ago`, written as an earlier run would have."""
    cache = EmbeddingCache(db, "older-model")
    hashes = [f"old{days_ago}-{i}" for i in range(n)]
    cache.put_many((h, np.ones(cache.dims, dtype=np.float32)) for h in hashes)
    cache.close()
    for h in hashes:
        _age(db, h, days_ago)
    return hashes


def _cached(db: Path) -> dict[str, int]:
    with closing(sqlite3.connect(db)) as conn:
        return {h: n for h, n in conn.execute("SELECT hash, last_used FROM vectors")}


FUNCTIONS = {
    f"pkg/mod{i}.py": (
        f'"""Module {i}."""\n\n\ndef compute_{i}(value: int) -> int:\n'
        f'    """Scale the value by {i}."""\n    return value * {i} + {i * i}\n'
    )
    for i in range(12)
}


def test_running_engine_keeps_the_cache_under_its_cap_and_drops_old_entries(
    tmp_path: Path,
    storage: Path,
    make_engine: Callable[..., Engine],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = storage.resolve() / "embed-cache.sqlite"
    stale = _old_rows(db, 3, days_ago=cache_module.EMBED_CACHE_KEEP_DAYS + 5)
    recent = _old_rows(db, 2, days_ago=1)
    cap = 8
    monkeypatch.setattr(cache_module, "EMBED_CACHE_MAX_ENTRIES", cap)
    engine = make_engine(
        write_tree(tmp_path / "ws", FUNCTIONS), settings=EngineSettings(embeddings=True)
    )
    assert not engine.embeddings.error, engine.embeddings.error
    engine.index(embed=True)
    assert engine.wait_embedded(timeout=60)
    counts = engine.project(engine.projects()[0]).catalog.counts()
    assert counts["embedded"] == counts["chunks"] > cap + len(recent)
    kept = _cached(db)
    assert len(kept) <= cap
    assert not set(stale) & set(kept)  # past the age limit: gone, whatever the size
    assert not set(recent) & set(kept)  # least recently used: the first to go past the cap
