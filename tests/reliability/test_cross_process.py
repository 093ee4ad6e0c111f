"""Two processes on one project: a reader never takes, blocks or breaks the writer's start, and
never removes or rewrites what the writer owns (docs/architecture.md: one writer per project)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from code_compass_server.engine import Engine
from code_compass_server.storage import project_storage
from tests.conftest import write_tree
from tests.reliability.attacks import write_workspace

TRIES = 3
FILES = 80


def _cmd(storage: Path, ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "code_compass_server", *args, "--json", "--workspace", str(ws),
            "--storage", str(storage)]  # fmt: skip


def test_status_started_with_index_on_a_new_workspace_never_breaks_it(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws", FILES, 0)
    for i in range(TRIES):
        storage = tmp_path / f"store-{i}"
        index = subprocess.Popen(_cmd(storage, ws, "index", "--no-embed"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        status = subprocess.Popen(_cmd(storage, ws, "status"), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        out, err = index.communicate(timeout=300)
        s_out, s_err = status.communicate(timeout=300)
        assert index.returncode == 0, err
        assert status.returncode == 0, s_err
        (summary,) = json.loads(out)["projects"]
        assert summary["files"] == FILES and summary["chunks"] > 0, summary
        assert json.loads(s_out)["projects"][0]["lastError"] == ""


def test_a_reader_never_removes_or_rebuilds_what_the_writer_owns(
    tmp_path: Path, storage: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", {"a.py": "def writerownedzz():\n    pass\n"})
    writer = make_engine(ws)
    writer.index()  # holds the writer lock from here on
    folder = project_storage(storage, ws)
    vectors = folder / "vectors"
    vectors.mkdir(exist_ok=True)
    in_flight = [vectors / "store.json.424242.tmp", vectors / "vectors.7.npy"]
    for path in in_flight:  # what a writer has half-written or not yet switched to
        path.write_bytes(b"x" * 64)
    # A state a reader would take for "rebuild from scratch": a format it does not know.
    with sqlite3.connect(folder / "catalog.sqlite") as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")

    run = subprocess.run(_cmd(storage, ws, "status"), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    (entry,) = json.loads(run.stdout)["projects"]
    assert entry["readOnly"] is True and entry["rebuilt"] == ""
    assert all(p.exists() for p in in_flight)
    assert (folder / "catalog.sqlite").exists()
    with sqlite3.connect(folder / "catalog.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 1
