"""The approximate vector index (embed/ivf.py through the store and the reader): small stores
stay exact; past the threshold searches probe lists and still find what the exact scan finds;
added rows join a list, deleted ones leave; drift retrains; a build killed midway (a real
process, SIGKILL) or a damaged index falls back to the exact scan and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed import ivf, vectors
from code_compass_server.embed.vector_reader import VectorReader
from code_compass_server.embed.vectors import VectorItem, VectorStore

DIMS = 32
MODEL = "test-model-ivf"
THRESHOLD = 2_000  # IVF_MIN_ROWS for these tests: the real 50k would make them slow


def clustered(n: int, seed: int = 0, topics: int = 60) -> np.ndarray:
    """Unit vectors around `topics` centres (embeddings have near neighbours; uniform noise
    has none, and no approximate index can be judged on it)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((topics, DIMS)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    x = centres[rng.integers(0, topics, n)] + 0.5 * rng.standard_normal((n, DIMS)).astype(
        np.float32
    ) / np.sqrt(DIMS)
    out: np.ndarray = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out.astype(np.float32)


def fill(store: VectorStore, mat: np.ndarray, prefix: str = "c") -> None:
    store.add(
        VectorItem(f"{prefix}{i}", "p", f"src/m{i % 50}.py", "python", v) for i, v in enumerate(mat)
    )


@pytest.fixture(autouse=True)
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ivf, "IVF_MIN_ROWS", THRESHOLD)
    monkeypatch.setattr(vectors, "IVF_MIN_ROWS", THRESHOLD)


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in hits]


def recall(store: VectorStore | VectorReader, queries: np.ndarray) -> float:
    got = 0
    for q in queries:
        truth = set(ids(store.search(q, 10, exact=True)))
        got += len(truth & set(ids(store.search(q, 10))))
    return got / (10 * len(queries))


def test_a_small_store_stays_exact(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    fill(store, clustered(THRESHOLD - 1))
    assert store.maintain_index() == ""
    store.save()
    assert not list((tmp_path / "vec").glob("ivf.*"))
    assert json.loads((tmp_path / "vec" / "store.json").read_text())["ivf"] is None
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    assert reader.ann_note == "" and reader._centroids is None


def test_past_the_threshold_lists_are_built_and_find_what_the_scan_finds(tmp_path: Path) -> None:
    data = clustered(6_000)
    store = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    fill(store, data)
    assert store.maintain_index() == "no approximate index yet"
    assert store.maintain_index() == ""  # nothing changed since: not built twice
    store.save()
    pointer = json.loads((tmp_path / "vec" / "store.json").read_text())
    assert pointer["ivf"]["trained_rows"] == 6_000
    queries = data[::300] + 0.01
    assert recall(store, queries) >= 0.95
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    assert reader.ann_note == "" and reader._centroids is not None
    assert recall(reader, queries) >= 0.95
    # The probe scores only a share of the rows: the exact answers come from fewer rows.
    probes = ivf.probe_count(len(reader._centroids))
    spans, tail = ivf.probe(reader._centroids, reader._lists, reader._in_order, queries[0], probes)
    assert reader._in_order == len(data) and len(tail) == 0  # saved list by list: spans only
    assert sum(b - a for a, b in spans) < len(data) / 4
    # A narrow filter (a few files) still gets its full answer.
    narrow = reader.search(queries[0], 10, path_prefix="src/m7.py")
    assert narrow == reader.search(queries[0], 10, path_prefix="src/m7.py", exact=True)
    assert len(narrow) == 10


def test_added_rows_join_a_list_and_deleted_rows_leave(tmp_path: Path) -> None:
    data = clustered(4_000)
    store = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    fill(store, data)
    store.maintain_index()
    store.save()
    new = clustered(5, seed=9)
    store.add(VectorItem(f"new{i}", "p", "src/new.py", "python", v) for i, v in enumerate(new))
    assert ids(store.search(new[3], 1)) == ["new3"]
    store.delete_chunk_ids(["new3", "c0"])
    assert "new3" not in ids(store.search(new[3], 10))
    assert "c0" not in ids(store.search(data[0], 10))
    store.save()
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    assert reader._centroids is not None
    assert ids(reader.search(new[1], 1)) == ["new1"]
    assert "new3" not in ids(reader.search(new[3], 10))
    assert recall(reader, data[::200]) >= 0.95


def test_rows_that_outgrow_the_lists_retrain_them(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    fill(store, clustered(THRESHOLD))
    store.maintain_index()
    assert store.maintain_index() == ""
    fill(store, clustered(2 * THRESHOLD + 10, seed=3), prefix="more")
    assert "when trained" in store.maintain_index()
    store.save()
    pointer = json.loads((tmp_path / "vec" / "store.json").read_text())
    assert pointer["ivf"]["trained_rows"] == 3 * THRESHOLD + 10
    assert len(list((tmp_path / "vec").glob("ivf.*"))) == 1  # the old centroids are gone


_BUILDER = """
import sys
import numpy as np
from pathlib import Path
from code_compass_server.embed import ivf, vectors
from code_compass_server.embed.vectors import VectorItem, VectorStore
ivf.IVF_MIN_ROWS = vectors.IVF_MIN_ROWS = 2000
rng = np.random.default_rng(0)
x = rng.standard_normal((int(sys.argv[2]), 64)).astype(np.float32)
store = VectorStore(Path(sys.argv[1]), "test-model-ivf", dims=64)
store.add(VectorItem(f"c{i}", "p", "a.py", "python", v) for i, v in enumerate(x))
store.save()
print("building", flush=True)
while True:  # retrain over and over: the kill lands inside a build
    store._checked = None
    store._trained_rows = 0
    store.maintain_index()
"""


def test_a_build_killed_midway_falls_back_to_exact_and_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "vec"
    child = subprocess.Popen(
        [sys.executable, "-c", _BUILDER, str(directory), "60000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "building"
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(30) == -signal.SIGKILL
    pointer = json.loads((directory / "store.json").read_text())
    assert pointer["ivf"] is None  # nothing of the build was committed
    reader = VectorReader(directory, MODEL, 64)
    assert "no approximate index over 60,000 vectors" in reader.ann_note
    q = np.ones(64, dtype=np.float32)
    assert reader.search(q, 5) == reader.search(q, 5, exact=True)
    writer = VectorStore(directory, MODEL, dims=64)
    assert "interrupted" in writer.ann_note
    assert writer.maintain_index() == "no approximate index yet"
    writer.save()
    assert VectorReader(directory, MODEL, 64).ann_note == ""


def test_a_damaged_index_is_said_and_searches_scan_exactly(tmp_path: Path) -> None:
    data = clustered(3_000)
    store = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    fill(store, data)
    store.maintain_index()
    store.save()
    lists = next((tmp_path / "vec").glob("lists.*.npy"))
    raw = bytearray(lists.read_bytes())
    raw[-8:] = b"\x07" * 8
    lists.write_bytes(bytes(raw))
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    assert "approximate index unreadable" in reader.ann_note
    assert reader._centroids is None
    assert reader.search(data[5], 10) == reader.search(data[5], 10, exact=True)
    reopened = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    assert "unreadable" in reopened.ann_note
    assert reopened.maintain_index() == "no approximate index yet"  # the writer rebuilds it
