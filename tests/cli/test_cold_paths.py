"""What a one-shot query process reads: the committed vectors memory-mapped (same answers as
the writer's store, resident memory bounded by a block), and no heavy import it does not need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed import vectors
from code_compass_server.embed.vector_reader import VectorReader
from code_compass_server.embed.vectors import VectorItem, VectorStore
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

MODEL, DIMS = "test-model", 16


def _store(directory: Path, n: int, seed: int = 7) -> VectorStore:
    rng = np.random.default_rng(seed)
    store = VectorStore(directory, MODEL, dims=DIMS)
    items = []
    for i in range(n):
        lang = "python" if i % 3 else "markdown"
        path = f"src/m{i % 40}.py" if i % 2 else f"docs/d{i % 40}.md"
        pieces = 2 if i % 5 == 0 else 1  # some chunks own several rows (max-sim)
        items += [
            VectorItem(f"c{i}", "p", path, lang, rng.standard_normal(DIMS).astype(np.float32))
            for _ in range(pieces)
        ]
    store.add(items)
    store.save()
    return store


def test_the_reader_answers_as_the_writers_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "BLOCK_ROWS", 64)  # several blocks, pages dropped between
    store = _store(tmp_path / "vec", 500)
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    assert reader.count() == store.row_count()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = rng.standard_normal(DIMS).astype(np.float32)
        for filters in ({}, {"language": "python"}, {"path_prefix": "docs/"}, {"project": "p"}):
            want = store.search(q, 10, **filters)
            got = reader.search(q, 10, **filters)
            assert [c for c, _ in got] == [c for c, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert reader.search(q, 10, project="other") == []
    assert reader.search(q, 10, language="klingon") == []
    reader.close()


def test_the_reader_keeps_its_generation_when_the_writer_commits_another(tmp_path: Path) -> None:
    store = _store(tmp_path / "vec", 50)
    reader = VectorReader(tmp_path / "vec", MODEL, DIMS)
    q = np.ones(DIMS, dtype=np.float32)
    before = reader.search(q, 5)
    store.delete_chunk_ids([c for c, _ in before])
    store.save()  # new generation; the old files are removed from the folder
    assert reader.search(q, 5) == before  # the mapped (removed) file still answers
    assert [c for c, _ in VectorReader(tmp_path / "vec", MODEL, DIMS).search(q, 5)] != [
        c for c, _ in before
    ]


def test_a_reader_of_another_model_or_no_store_is_empty(tmp_path: Path) -> None:
    _store(tmp_path / "vec", 10)
    assert VectorReader(tmp_path / "vec", "other-model", DIMS).count() == 0
    assert VectorReader(tmp_path / "none", MODEL, DIMS).count() == 0


PROBE = """
import sys
from code_compass_server.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as done:  # --version
    code = int(done.code or 0)
heavy = [m for m in (
    "onnxruntime", "tantivy", "jedi", "anthropic", "numpy", "watchfiles", "multiprocessing",
    "ctypes.util",
) if m in sys.modules]
print("HEAVY", ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _loaded(*args: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
        check=False, env={**os.environ, "ANTHROPIC_API_KEY": ""},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = [x for x in out.stderr.splitlines() if x.startswith("HEAVY")][-1]
    return set(filter(None, line.split(" ", 1)[1].split(",")))


def test_cold_commands_import_only_what_they_need(tmp_path: Path) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    common = ("--workspace", str(ws), "--storage", str(tmp_path / "st"))
    assert _loaded("--version") == set()
    assert _loaded("--help") == set()
    assert _loaded("index", "--no-embed", *common) >= {"tantivy"}
    # A fresh index is read, never written: no watcher, no parse pool, no heap trimming.
    writer_only = {"watchfiles", "multiprocessing", "ctypes.util"}
    assert not {"onnxruntime", "numpy"} & _loaded("status", *common)
    assert not writer_only & _loaded("status", *common)
    lexical = _loaded("search", "x", "--mode", "lexical", *common)
    assert not {"onnxruntime", "numpy", "jedi", "anthropic"} & lexical
    assert not writer_only & lexical
    assert not {"jedi", "anthropic"} & _loaded("ask", "where is parse_config defined?", *common)


def _search(*args: str, env: dict[str, str]) -> tuple[set[str], list[tuple[str, int, float]]]:
    """A hybrid search's heavy modules (this process only) and its hits."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "search", *args, "--json"], capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "ANTHROPIC_API_KEY": "", **env},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = [x for x in out.stderr.splitlines() if x.startswith("HEAVY")][-1]
    hits = [(h["path"], h["startLine"], h["score"]) for h in json.loads(out.stdout)["hits"]]
    return set(filter(None, line.split(" ", 1)[1].split(","))), hits


def _processes_naming(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the prefetch forks on Linux")
def test_a_hybrid_search_embeds_its_query_in_a_forked_child(tmp_path: Path) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    storage = tmp_path / "st-prefetch"
    common = ("--workspace", str(ws), "--storage", str(storage))
    done = subprocess.run(
        [sys.executable, "-m", "code_compass_server", "index", *common],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    forked, hits = _search("parse the config file", *common, env={"OPENBLAS_NUM_THREADS": "1"})
    assert "numpy" in forked and "onnxruntime" not in forked  # the model ran in the child
    # A numpy with a thread pool makes the fork unsafe: the model loads in-process instead.
    inline, same = _search("parse the config file", *common, env={"OPENBLAS_NUM_THREADS": "2"})
    assert "onnxruntime" in inline
    assert hits and [h[:2] for h in hits] == [h[:2] for h in same]
    assert np.allclose([h[2] for h in hits], [h[2] for h in same], atol=1e-4)
    assert _processes_naming(str(storage)) == []  # every child reaped with its parent
