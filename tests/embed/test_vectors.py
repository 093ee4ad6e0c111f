"""The vector store: add/search/filters/deletes, max-sim per chunk, persistence, crash safety."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed import vectors
from code_compass_server.embed.vectors import VectorItem, VectorStore

DIMS = 8
MODEL = "test-model-1"


def unit(*coords: float) -> np.ndarray:
    v = np.zeros(DIMS, dtype=np.float32)
    v[: len(coords)] = coords
    return v / np.linalg.norm(v)


def item(
    cid: str, vec: np.ndarray, project: str = "p", path: str = "src/a.py", lang: str = "python"
) -> VectorItem:
    return VectorItem(cid, project, path, lang, vec)


@pytest.fixture
def store(tmp_path: Path) -> VectorStore:
    s = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    s.add(
        [
            item("a", unit(1, 0)),
            item("b", unit(0.9, 0.1), path="src/b.py"),
            item("c", unit(0, 1), path="docs/c.md", lang="markdown"),
            item("d", unit(1, 0.05), project="q", path="src/a.py"),
        ]
    )
    return s


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in hits]


def test_search_ranks_by_cosine_with_filters(store: VectorStore) -> None:
    hits = store.search(unit(1, 0), 10)
    assert ids(hits) == ["a", "d", "b", "c"]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-6)
    assert ids(store.search(unit(1, 0), 2)) == ["a", "d"]
    assert ids(store.search(unit(1, 0), 10, project="p")) == ["a", "b", "c"]
    assert ids(store.search(unit(1, 0), 10, project="q")) == ["d"]
    assert store.search(unit(1, 0), 10, project="nope") == []
    assert ids(store.search(unit(1, 0), 10, path_prefix="src/")) == ["a", "d", "b"]
    assert ids(store.search(unit(1, 0), 10, project="p", path_prefix="src/b")) == ["b"]
    assert ids(store.search(unit(1, 0), 10, language="Markdown")) == ["c"]
    assert store.search(unit(1, 0), 10, language="go") == []
    assert store.count() == 4 and store.count("p") == 3 and store.count("q") == 1


def test_chunk_scores_as_its_best_piece(store: VectorStore) -> None:
    store.add([item("multi", unit(0, 0, 1)), item("multi", unit(0.2, 0.98))])
    hits = store.search(unit(0, 1), 3)
    assert ids(hits) == ["c", "multi", "b"]
    assert hits[1][1] == pytest.approx(float(unit(0.2, 0.98) @ unit(0, 1)), abs=1e-6)
    assert len(set(ids(store.search(unit(0, 0, 1), 10)))) == len(store.search(unit(0, 0, 1), 10))
    assert store.count("p") == 4 and store.row_count() == 6


def test_add_replaces_a_chunk_and_deletes(store: VectorStore) -> None:
    store.add([item("a", unit(0, 1))])  # re-embedded after an edit
    assert ids(store.search(unit(1, 0), 1)) == ["d"]
    assert store.count("p") == 3
    assert store.delete_paths("p", ["src/a.py", "missing.py"]) == 1
    assert not store.has("a") and store.has("d")  # same path, other project: kept
    assert store.delete_chunk_ids(["b", "zzz"]) == 1
    assert ids(store.search(unit(1, 0), 10)) == ["d", "c"]
    assert store.delete_project("q") == 1 and store.count() == 1


def test_reopens_without_recomputation(store: VectorStore, tmp_path: Path) -> None:
    store.delete_chunk_ids(["b"])
    store.add(
        [
            item("multi", unit(0, 0, 1), path="x/y.ts", lang="typescript"),
            item("multi", unit(0, 0, 0, 1), path="x/y.ts", lang="typescript"),
        ]
    )
    store.close()
    again = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    assert again.count() == 4 and again.count("q") == 1 and not again.has("b")
    assert ids(again.search(unit(1, 0), 10, project="p")) == ["a", "c", "multi"]
    assert ids(again.search(unit(0, 0, 0, 1), 1, language="typescript")) == ["multi"]
    assert again.delete_paths("p", ["src/a.py"]) == 1  # path index rebuilt on open
    assert not again.flush() or again.flush() is False  # second flush has nothing to write


def test_model_change_starts_empty(store: VectorStore, tmp_path: Path) -> None:
    store.save()
    other = VectorStore(tmp_path / "vec", "another-model", dims=DIMS)
    assert other.count() == 0
    other.add([item("z", unit(1))])
    other.save()
    assert sorted(p.name for p in (tmp_path / "vec").iterdir()) == [
        "rows.2.json",
        "store.json",
        "vectors.2.npy",
    ]


def test_crash_mid_save_reopens_last_commit(store: VectorStore, tmp_path: Path) -> None:
    store.save()
    directory = tmp_path / "vec"
    # Killed mid-save: next generation's files half written, temp files left, no commit.
    (directory / "vectors.2.npy").write_bytes(b"\x93NUMPY partial")
    (directory / "rows.2.json.123.tmp").write_text('{"chunk_ids": [')
    (directory / "store.json.123.tmp").write_text('{"generation": 2')
    again = VectorStore(directory, MODEL, dims=DIMS)
    assert again.count() == 4
    assert ids(again.search(unit(1, 0), 1)) == ["a"]
    assert sorted(p.name for p in directory.iterdir()) == [
        "rows.1.json",
        "store.json",
        "vectors.1.npy",
    ]
    # A torn pointer (should not happen thanks to os.replace) yields an empty, usable store.
    (directory / "store.json").write_text("{not json")
    broken = VectorStore(directory, MODEL, dims=DIMS)
    assert broken.count() == 0
    broken.add([item("n", unit(1))])
    broken.save()
    assert VectorStore(directory, MODEL, dims=DIMS).count() == 1


def test_compaction_after_many_deletes(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", MODEL, dims=DIMS)
    rng = np.random.default_rng(0)
    s.add(item(f"c{i}", rng.normal(size=DIMS).astype(np.float32)) for i in range(3000))
    s.delete_chunk_ids(f"c{i}" for i in range(2000))
    assert s.row_count() == 1000 and s.count() == 1000
    assert len(s._snapshot.alive) == 1000  # compacted: dead rows dropped from the matrix
    q = rng.normal(size=DIMS).astype(np.float32)
    hits = s.search(q, 5)
    assert all(int(cid[1:]) >= 2000 for cid in ids(hits))
    assert [c for c, _ in hits] == [c for c, _ in sorted(hits, key=lambda h: -h[1])]


def test_search_while_adding(tmp_path: Path) -> None:
    s = VectorStore(tmp_path / "v", MODEL, dims=DIMS)
    s.add([item("seed", unit(1))])
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        try:
            while not stop.is_set():
                hits = s.search(unit(1), 3)
                assert hits and hits[0][0] == "seed"
                assert len(set(ids(hits))) == len(hits)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    rng = np.random.default_rng(1)
    for i in range(200):  # grows capacity several times and deletes along the way
        s.add(item(f"x{i}-{j}", unit(0, *rng.random(3))) for j in range(20))
        if i % 10 == 0:
            s.delete_chunk_ids(f"x{i - 1}-{j}" for j in range(20))
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert s.count() == 1 + 200 * 20 - 19 * 20


def test_a_reopened_store_is_mapped_and_still_takes_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reopened, the committed matrix is the file's mapping (searched in blocks, nothing
    copied to the heap); the first add moves it into memory, and every answer stays the same."""
    monkeypatch.setattr(vectors, "BLOCK_ROWS", 16)  # several blocks, pages dropped between
    rng = np.random.default_rng(3)
    first = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    rows = rng.standard_normal((100, DIMS)).astype(np.float32)  # fewer than the first capacity
    first.add(item(f"c{i}", rows[i], path=f"src/{i % 7}.py") for i in range(100))
    first.save()
    again = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    snap = again._snapshot
    assert snap.mapped is not None and not snap.mat.flags.writeable  # the file, not a copy
    for q in rng.standard_normal((5, DIMS)).astype(np.float32):
        assert again.search(q, 10) == first.search(q, 10)
        assert again.search(q, 5, path_prefix="src/3") == first.search(q, 5, path_prefix="src/3")
    extra = unit(0, 0, 0, 0, 0, 0, 0, 1)
    again.add([item("new", extra)])  # past the mapping's end: moved into memory
    assert again._snapshot.mapped is None and ids(again.search(extra, 1)) == ["new"]
    assert again.delete_chunk_ids(["c1"]) == 1
    again.save()
    third = VectorStore(tmp_path / "vec", MODEL, dims=DIMS)
    assert third.count() == 100 and not third.has("c1") and third.has("new")
