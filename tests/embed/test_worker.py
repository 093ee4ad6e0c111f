"""The background worker: cache reuse, progress, prompt stop."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from code_compass_server.constants import EMBED_WORKER_SAVE_SHARE
from code_compass_server.embed.cache import EmbeddingCache
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.vectors import VectorStore
from code_compass_server.embed.worker import EmbeddingWorker, PendingChunk, save_interval


class CountingEmbedder:
    """The real embedder, counting the texts that reach the model."""

    def __init__(self, inner: Embedder, delay: float = 0.0) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.delay = delay

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        if self.delay:
            time.sleep(self.delay)
        return self.inner.embed(texts)

    def line_token_counts(self, text: str) -> list[int]:
        return self.inner.line_token_counts(text)


def chunks(n: int, prefix: str = "c", path: str = "a.py") -> list[PendingChunk]:
    return [
        PendingChunk(
            f"{prefix}{i}", "proj", path, "python", f"def f{i}(x):\n    return x + {i}\n", 1
        )
        for i in range(n)
    ]


def test_cache_avoids_reembedding_across_renames(embedder: Embedder, tmp_path: Path) -> None:
    counting = CountingEmbedder(embedder)
    store = VectorStore(tmp_path / "v", embedder.model_id)
    cache = EmbeddingCache(tmp_path / "cache.sqlite", embedder.model_id)
    worker = EmbeddingWorker(lambda n: [], counting, store, cache)
    assert worker.process(chunks(6)) == 6
    assert len(counting.texts) == 6 and store.count("proj") == 6
    assert worker.process(chunks(6)) == 0  # already stored: skipped
    # Renamed file: new chunk ids and path, same text -> vectors come from the cache.
    renamed = chunks(6, prefix="r", path="b.py")
    assert worker.process(renamed) == 6
    assert len(counting.texts) == 6
    hit = store.search(embedder.embed_query("def f3(x): return x + 3"), 2, path_prefix="b.py")
    assert hit[0][0] == "r3"


def test_worker_thread_progress_reaches_total(embedder: Embedder, tmp_path: Path) -> None:
    pending = chunks(20)
    lock = threading.Lock()
    store = VectorStore(tmp_path / "v", embedder.model_id)

    def fetch(limit: int) -> list[PendingChunk]:
        with lock:
            return [c for c in pending if not store.has(c.chunk_id)][:limit]

    def remaining() -> int:
        return sum(1 for c in pending if not store.has(c.chunk_id))

    done_ids: list[str] = []
    worker = EmbeddingWorker(
        fetch, embedder, store, None, pending=remaining, on_done=done_ids.extend, batch_size=6
    )
    worker.start()
    assert worker.wait_idle(timeout=60)
    p = worker.progress()
    assert p.done == p.total == 20 and p.rate > 0 and p.eta_s == 0.0 and p.idle and p.error is None
    assert sorted(done_ids) == sorted(c.chunk_id for c in pending)
    # New work after idle: wake() picks it up.
    with lock:
        pending.extend(chunks(3, prefix="n"))
    worker.wake()
    assert worker.wait_idle(timeout=60)
    assert worker.progress().done == 23 and store.count() == 23
    worker.stop()
    assert not worker.progress().running
    assert VectorStore(tmp_path / "v", embedder.model_id).count() == 23  # saved on stop


def test_stop_is_prompt(embedder: Embedder, tmp_path: Path) -> None:
    slow = CountingEmbedder(embedder, delay=0.05)
    big = [
        PendingChunk(f"s{i}", "proj", "s.py", "python", f"value_{i} = {i}", 1) for i in range(2000)
    ]
    worker = EmbeddingWorker(
        lambda n: big[:n], slow, VectorStore(tmp_path / "v", "m"), None, batch_size=2000
    )
    worker.start()
    while not slow.texts:
        time.sleep(0.01)
    started = time.monotonic()
    worker.stop()
    assert time.monotonic() - started < 2.0
    assert len(slow.texts) < 2000


def test_the_save_interval_grows_with_the_saves_cost() -> None:
    assert save_interval(15.0, 0.0) == 15.0
    assert save_interval(15.0, 0.5) == 15.0  # a small store: the floor
    for cost in (12.0, 25.0, 60.0):  # saves of stores of 0.7M to 3M vectors
        share = cost / (save_interval(15.0, cost) + cost)
        assert share == pytest.approx(EMBED_WORKER_SAVE_SHARE)


def test_a_busy_worker_spaces_slow_saves_out(embedder: Embedder, tmp_path: Path) -> None:
    """Saves that take long (a big store: each rewrites the whole matrix) come less often, so
    the embedding keeps its pace; the caught-up worker still saves everything."""
    slow = CountingEmbedder(embedder, delay=0.1)
    pending = chunks(40)
    lock = threading.Lock()
    store = VectorStore(tmp_path / "v", embedder.model_id)
    spans: list[tuple[float, float, bool]] = []  # (start, end, work still pending) per save

    def fetch(limit: int) -> list[PendingChunk]:
        with lock:
            out, pending[:limit] = pending[:limit], []
            return out

    def take() -> list[str]:
        time.sleep(0.3)  # the disk of a big store
        with lock:
            spans.append((time.monotonic() - 0.3, 0.0, bool(pending)))
        return []

    def committed(_: list[str]) -> None:
        start, _end, busy = spans[-1]
        spans[-1] = (start, time.monotonic(), busy)

    store.set_commit_hooks(take, committed, lambda _: None)
    worker = EmbeddingWorker(fetch, slow, store, None, batch_size=2, flush_interval_s=0.05)
    worker.start()
    assert worker.wait_idle(timeout=120)
    worker.stop()
    busy = [i for i, (_s, _e, still) in enumerate(spans) if still]
    assert len(busy) >= 2, spans  # ~4 s of embedding: the floor alone would save ~10 times
    for i in busy[1:]:
        prev_start, prev_end, _ = spans[i - 1]
        gap = spans[i][0] - prev_end
        assert gap >= 0.95 * save_interval(0.05, prev_end - prev_start), spans
    assert VectorStore(tmp_path / "v", embedder.model_id).count() == 40


def test_a_busy_worker_counts_its_backlog_now_and_then(embedder: Embedder, tmp_path: Path) -> None:
    """Counting the backlog walks it (0.1 s at 1.2M chunks): not once per round of 2 chunks,
    yet new work after a wake is counted at once and the total stays right."""
    pending = chunks(40)
    lock = threading.Lock()
    store = VectorStore(tmp_path / "v", embedder.model_id)
    counted: list[float] = []

    def fetch(limit: int) -> list[PendingChunk]:
        with lock:
            return [c for c in pending if not store.has(c.chunk_id)][:limit]

    def remaining() -> int:
        counted.append(time.monotonic())
        time.sleep(0.05)  # a big catalog's COUNT
        with lock:
            return sum(1 for c in pending if not store.has(c.chunk_id))

    worker = EmbeddingWorker(fetch, embedder, store, None, pending=remaining, batch_size=2)
    started = time.monotonic()
    worker.start()
    assert worker.wait_idle(timeout=60)
    took = time.monotonic() - started
    # 20 rounds; counted at the start, then at most once per 5 s (a third of the save floor).
    assert 1 <= len(counted) <= min(19, 2 + took / 5.0), (len(counted), took)
    p = worker.progress()
    assert p.done == p.total == 40 and p.eta_s == 0.0
    before = len(counted)
    with lock:
        pending.extend(chunks(3, prefix="n"))
    worker.wake()
    assert worker.wait_idle(timeout=60)
    assert len(counted) > before  # the wake's new work was counted
    assert worker.progress().done == worker.progress().total == 43
    worker.stop()


def test_the_model_reads_each_piece_after_its_symbol_as_words(
    embedder: Embedder, tmp_path: Path
) -> None:
    counting = CountingEmbedder(embedder)
    store = VectorStore(tmp_path / "v", embedder.model_id)
    worker = EmbeddingWorker(lambda n: [], counting, store, None)
    body = "\n".join(f"    total += item_{i}.price" for i in range(120))
    method = PendingChunk(
        "m", "proj", "shop/cart.py", "python", f"def totalPrice(self):\n{body}\n", 10,
        "ShoppingCart.totalPrice",
    )  # fmt: skip
    readme = PendingChunk(
        "d", "proj", "README.md", "markdown", "# Cart\nHow totals work.", 1, "Cart"
    )
    assert worker.process([method, readme]) == 2
    method_texts = [t for t in counting.texts if "price" in t]
    assert len(method_texts) >= 2  # long enough to be split into pieces
    assert all(t.startswith("shopping cart total price\n") for t in method_texts)
    assert all(sum(embedder.line_token_counts(t)) <= 254 for t in method_texts)  # header counted
    assert "# Cart\nHow totals work." in counting.texts  # documents: no header


def test_pieces_tokenized_once_give_the_vectors_of_their_texts(
    embedder: Embedder, tmp_path: Path
) -> None:
    """The real model takes the ids prepared (on the helper thread) from the counting pass:
    the vectors stored equal the model's vectors of the same texts."""
    store = VectorStore(tmp_path / "v", embedder.model_id)
    worker = EmbeddingWorker(lambda n: [], embedder, store, None, low_priority=False)
    items = [
        PendingChunk(f"k{i}", "proj", "m.py", "python", text, 1, f"Thing.m{i}", "class Thing:")
        for i, text in enumerate(
            ["def a(x):\n    return x * 2\n", "\n".join(f"v{j} = w{j}" for j in range(300))]
        )
    ]
    assert worker.process(items) == 2
    for it in items:
        texts = worker.texts_for(it)
        expected = embedder.embed(texts)
        best = store.search(expected[-1], 1)
        assert best and best[0][0] == it.chunk_id and best[0][1] > 0.9999
    worker.stop()


def test_a_caught_up_worker_builds_the_approximate_index_before_it_is_idle(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from code_compass_server.embed import ivf, vectors

    monkeypatch.setattr(ivf, "IVF_MIN_ROWS", 30)  # 50,000 real chunks would take an hour
    monkeypatch.setattr(vectors, "IVF_MIN_ROWS", 30)
    pending = chunks(40)
    store = VectorStore(tmp_path / "v", embedder.model_id)

    def fetch(limit: int) -> list[PendingChunk]:
        return [c for c in pending if not store.has(c.chunk_id)][:limit]

    worker = EmbeddingWorker(fetch, embedder, store, None, batch_size=16)
    worker.start()
    assert worker.wait_idle(timeout=120)
    worker.stop()
    pointer = json.loads((tmp_path / "v" / "store.json").read_text())
    assert pointer["ivf"]["trained_rows"] == 40  # built and saved by the time it was idle
    q = embedder.embed_query("def f17(x): return x + 17")
    assert store.search(q, 1)[0][0] == "c17"
