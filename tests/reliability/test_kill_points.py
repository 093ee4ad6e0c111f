"""kill -9 at chosen points between two stores' commits (the random loops are in
tests/live/test_crash.py and scripts/attack_kill.py): the next `index` ends with the fresh
chunk set and every chunk embedded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.attacks import compare, fresh_state, index_cmd, read_state, write_workspace

FILES = 10

# Index and embed everything; edit every module's docstring (its functions keep their chunk
# ids); index again without embedding (their flags are reset, their vectors dropped in memory
# only), then die before the vector store's next save.
KILLED_AFTER_CATALOG = """
import os, signal, sys
from pathlib import Path
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from tests.reliability.attacks import write_workspace
storage, ws = Path(sys.argv[1]), Path(sys.argv[2])
e = Engine.open(storage, EngineSettings(embeddings=True))
e.add_project(ws)
if e.embeddings.error:
    print("no-model", flush=True)
    sys.exit(0)
e.index(embed=True)
write_workspace(ws, int(sys.argv[3]), 1, keep_defs=True)
e.index(embed=False, background_embed=False)
print("dying", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_between_catalog_commit_and_vector_save(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws", FILES, 0)
    storage = tmp_path / "store"
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_CATALOG, str(storage), str(ws), str(FILES)],
        capture_output=True, text=True, cwd=repo, timeout=600,
    )  # fmt: skip
    if run.stdout.strip() == "no-model":
        pytest.skip("embedding model not available")
    assert run.stdout.strip() == "dying" and run.returncode == -9, run.stderr
    again = subprocess.run(index_cmd(storage, ws, embed=True), capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr
    problem = compare(read_state(storage, ws), fresh_state(tmp_path, ws), embed=True)
    assert problem == ""


# Index lexically only (the vectors are what is left to compute), then die without closing.
KILLED_BEFORE_EMBEDDING = """
import os, signal, sys
from pathlib import Path
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
e = Engine.open(Path(sys.argv[1]), EngineSettings(embeddings=True))
e.add_project(Path(sys.argv[2]))
if e.embeddings.error:
    print("no-model", flush=True)
    sys.exit(0)
e.index(embed=False, background_embed=False)
print("dying", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _status(storage: Path, ws: Path) -> dict[str, object]:
    cmd = [sys.executable, "-m", "code_compass_server", "status", "--json"]
    run = subprocess.run(
        [*cmd, "--workspace", str(ws), "--storage", str(storage)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    project: dict[str, object] = json.loads(run.stdout)["projects"][0]
    return project


def test_status_after_a_kill_during_embedding_says_it_stopped(tmp_path: Path) -> None:
    """Nobody computes the missing vectors once the writer is gone: status must not say
    `embedding` (a promise of progress) but that it stopped, and how to finish."""
    ws = write_workspace(tmp_path / "ws", FILES, 0)
    storage = tmp_path / "store"
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_EMBEDDING, str(storage), str(ws)],
        capture_output=True, text=True, cwd=repo, timeout=600,
    )  # fmt: skip
    if run.stdout.strip() == "no-model":
        pytest.skip("embedding model not available")
    assert run.stdout.strip() == "dying" and run.returncode == -9, run.stderr
    p = _status(storage, ws)
    assert (p["state"], p["phase"], p["writerPid"]) == ("ready", "stopped", None), p
    assert isinstance(p["chunks"], int) and p["chunks"] > 0 and p["embedded"] == 0, p
    assert "ended without closing" in str(p["lastError"]), p
    again = subprocess.run(index_cmd(storage, ws, embed=True), capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr
    p = _status(storage, ws)
    assert (p["state"], p["lastError"]) == ("ready", ""), p
    assert p["embedded"] == p["chunks"], p
