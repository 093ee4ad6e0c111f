"""The forked query model: the child's vectors are the model's, a child that fails or dies
leaves the search to the model, and no child outlives its parent.

Each case runs in a fresh interpreter: the child is forked only from a process with one thread,
which a pytest process (and its earlier tests' threads) need not be."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from code_compass_server.embed.model import Embedder

# Texts a searcher sends, one after the other: English, Portuguese, an empty one.
QUERIES = ["how are the rows of a table sorted before printing?", "como a tabela é ordenada?", ""]

SCRIPT = """
import json, os, signal, sys, threading
os.environ["OPENBLAS_NUM_THREADS"] = "1"
from pathlib import Path
from code_compass_server.embed.forked_model import ForkedModel, ForkedModelFailed

storage, queries, case = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
if case == "thread":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    print(json.dumps({"started": ForkedModel.start(storage) is not None}))
    stop.set()
    sys.exit(0)
forked = ForkedModel.start(storage)
assert forked is not None, "no child from a one-thread process"
pid = forked.pid
if case == "orphan":  # the test kills this process now, with the child loading or waiting
    print(pid, flush=True)
    threading.Event().wait(120)
if case == "kill":
    os.kill(pid, signal.SIGKILL)
if case == "adopt-other":
    from code_compass_server.embed.links import EmbeddingLinks
    forked.model_id = "another-model"
    EmbeddingLinks(storage, True, queries_only=True).adopt(forked)
vectors = []
try:
    for query in queries:
        vectors.append(forked.embed_query(query).tolist())
except ForkedModelFailed:
    vectors.append(None)
forked.close()
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps({
    "vectors": vectors, "modelId": forked.model_id, "failure": forked.failure, "reaped": reaped,
}))
"""


def _run(storage: Path, case: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(storage), json.dumps(QUERIES), case],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_childs_vectors_are_the_models_vectors(tmp_path: Path, embedder: Embedder) -> None:
    got = _run(tmp_path, "ok")
    assert got["reaped"] is True and got["failure"] == ""
    assert got["modelId"] == embedder.model_id
    vectors = got["vectors"]
    assert isinstance(vectors, list) and len(vectors) == len(QUERIES)
    for query, vector in zip(QUERIES, vectors, strict=True):
        vec = np.asarray(vector, dtype=np.float32)
        assert vec.shape == (embedder.dims,)
        assert float(vec @ embedder.embed_query(query)) > 0.9999


def test_a_killed_child_fails_the_query_and_is_reaped(tmp_path: Path, model_dir: Path) -> None:
    got = _run(tmp_path, "kill")
    assert got["vectors"] == [None] and got["reaped"] is True
    assert got["failure"] == "the child exited without an answer"


def test_a_child_of_another_model_is_refused(tmp_path: Path, model_dir: Path) -> None:
    got = _run(tmp_path, "adopt-other")
    assert got["vectors"] == [None] and got["reaped"] is True  # closed at once, never asked


def test_no_fork_from_a_process_with_threads(tmp_path: Path, model_dir: Path) -> None:
    assert _run(tmp_path, "thread") == {"started": False}


def _alive(pid: int) -> bool:
    """Running (a zombie no longer runs: its parent, now init, reaps it when it can)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_child_whose_parent_is_killed_exits_by_itself(tmp_path: Path, model_dir: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path), json.dumps(QUERIES), "orphan"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
    deadline = time.monotonic() + 60  # its input closes with the parent: it exits
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
