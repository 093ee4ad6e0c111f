"""`index` beside a real second process that writes the same index, and what `status` shows of it.

One writer process (`code-compass index`, embeddings on) runs over a workspace big enough to
embed for several seconds; meanwhile other processes ask `index --no-wait`, `status --json` and
`index` (which waits). The writer's own stderr (a pipe, not a terminal) shows the plain progress
lines and its stdout the per-phase summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

N_FILES = 600  # about 1,800 chunks: ~10 s of embedding at ~180 chunks/s on an idle 2-core machine


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "code_compass_server", *args]


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli(*args), capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def _workspace(root: Path) -> Path:
    files: dict[str, str | bytes] = {}
    for i in range(N_FILES):
        files[f"pkg/mod_{i:03d}.py"] = "".join(
            f"def handler_{i}_{j}(request, attempt={j}):\n"
            f'    """Handle request kind {i * 7 + j} with retry policy number {j}."""\n'
            f"    value = request.get('field_{i}_{j}', {i * j})\n"
            f"    return value * {j + 1} + attempt\n\n\n"
            for j in range(3)
        )
    return write_tree(root, files)


@dataclass
class Writer:
    proc: subprocess.Popen[str]
    ws: Path
    storage: Path
    env: dict[str, str]
    stdout: str = ""
    stderr: str = ""


@pytest.fixture(scope="module")
def writer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Writer]:
    base = tmp_path_factory.mktemp("writer")
    ws = _workspace(base / "ws")
    storage = base / "st"
    env = {**os.environ, "CODE_COMPASS_ANNOUNCE_START": "1", "CODE_COMPASS_PROGRESS_S": "0.5"}
    proc = subprocess.Popen(
        cli("index", "--workspace", str(ws), "--storage", str(storage)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "indexing"
    w = Writer(
        proc, ws, storage, {k: v for k, v in env.items() if k != "CODE_COMPASS_ANNOUNCE_START"}
    )
    try:
        yield w
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def _status(w: Writer) -> dict[str, object]:
    out = run("status", "--json", "--workspace", str(w.ws), "--storage", str(w.storage), env=w.env)
    assert out.returncode == 0, out.stderr
    project: dict[str, object] = json.loads(out.stdout)["projects"][0]
    return project


def _embedding_status(w: Writer, timeout: float = 120) -> dict[str, object]:
    """`status --json` once the writer reports a measured embedding rate."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert w.proc.poll() is None, "the writer finished before it was observed embedding"
        st = _status(w)
        if st["phase"] == "embedding" and float(st["embedRate"]) > 0:  # type: ignore[arg-type]
            return st
        time.sleep(0.3)
    raise AssertionError("the writer never reported an embedding rate")


def test_status_shows_the_writers_phase_rate_and_eta(writer: Writer) -> None:
    st = _embedding_status(writer)
    assert st["readOnly"] is True and st["writerPid"] == writer.proc.pid
    assert st["state"] == "embedding"
    assert float(st["embedEtaS"]) > 0  # type: ignore[arg-type]
    # `embedded` counts committed vectors only (#32): it may still be 0 until the writer's
    # first save (EMBED_WORKER_FLUSH_S), never the whole total while it is still embedding.
    assert 0 <= int(st["embedded"]) < int(st["embedTotal"])  # type: ignore[call-overload]


def test_index_no_wait_exits_non_zero_naming_the_writer(writer: Writer) -> None:
    _embedding_status(writer)
    args = ("index", "--no-wait", "--json", "--workspace", str(writer.ws))
    out = run(*args, "--storage", str(writer.storage), env=writer.env)
    assert out.returncode == 3, out.stderr
    assert out.stdout == ""  # no summary of an index this process did not write
    assert f"pid {writer.proc.pid}" in out.stderr and "not waiting (--no-wait)" in out.stderr


def test_index_waits_for_the_writer_then_finishes_the_index(writer: Writer) -> None:
    _embedding_status(writer)
    args = ("index", "--json", "--workspace", str(writer.ws), "--storage", str(writer.storage))
    out = run(*args, env=writer.env)
    assert out.returncode == 0, out.stderr
    assert "waiting for it" in out.stderr
    assert "embedding" in out.stderr  # the writer's progress, shown while waiting
    (summary,) = json.loads(out.stdout)["projects"]
    assert summary["read_only"] is False
    # It ran after the writer: nothing left to parse, every chunk embedded.
    assert summary["changed"] == 0 and summary["unchanged"] == N_FILES
    assert summary["chunks"] > 0 and summary["embedded"] == summary["chunks"]
    writer.stdout, writer.stderr = writer.proc.communicate(timeout=120)
    assert writer.proc.returncode == 0, writer.stderr


def test_writer_progress_lines_on_a_pipe_and_its_phase_times(writer: Writer) -> None:
    if not writer.stdout and not writer.stderr:
        writer.stdout, writer.stderr = writer.proc.communicate(timeout=300)
    lines = writer.stderr.splitlines()
    assert "code-compass: ws: scan" in lines
    assert any(line.startswith(f"code-compass: ws: parse 0/{N_FILES} files") for line in lines)
    assert any(line.startswith("code-compass: ws: lexical commit") for line in lines)
    embedding = [line for line in lines if line.startswith("code-compass: ws: embedding")]
    assert any("chunks/s, ETA " in line for line in embedding), embedding
    assert not any("\r" in line or "\x1b[" in line for line in lines)  # no bar on a pipe
    summary = writer.stdout.strip().splitlines()[0]
    assert summary.startswith("ws: lexical ")
    assert "(scan " in summary and ", parse " in summary and ", commit " in summary
    assert "), embeddings " in summary and f"{N_FILES} files" in summary


KEEPER = """
import sys, time
from pathlib import Path
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
engine = Engine.open(Path(sys.argv[2]), EngineSettings(embeddings=False))
engine.add_project(Path(sys.argv[1]))
engine.index(embed=False)
print("ready", flush=True)
time.sleep(120)
"""


def test_index_beside_an_idle_keeper_says_who_keeps_it(tmp_path: Path) -> None:
    """A long-lived holder (a language server, here a real engine in another process with
    embeddings off) that finished its work keeps the index: `index` says so rather than
    waiting for ever, and exits 0 only if what it keeps is what was asked."""
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    st = tmp_path / "st"
    keeper = subprocess.Popen(
        [sys.executable, "-c", KEEPER, str(ws), str(st)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert keeper.stdout is not None and keeper.stdout.readline().strip() == "ready"
        base = ("index", "--workspace", str(ws), "--storage", str(st))
        lexical = run(*base, "--no-embed", timeout=120)
        assert lexical.returncode == 0, lexical.stderr
        assert f"kept current by process {keeper.pid}" in lexical.stderr
        assert lexical.stdout == ""  # this process wrote nothing: no summary of its own
        embedded = run(*base, timeout=120)
        assert embedded.returncode == 3, embedded.stderr
        assert "does not embed" in embedded.stderr
        as_json = run(*base, "--no-embed", "--json", timeout=120)
        assert as_json.returncode == 0, as_json.stderr
        kept = json.loads(as_json.stdout)["keptBy"]
        assert kept["pid"] == keeper.pid and kept["complete"] and kept["chunks"] > 0
    finally:
        keeper.kill()
        keeper.wait()
