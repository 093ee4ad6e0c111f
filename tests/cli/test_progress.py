"""Progress views, plain lines, the per-phase summary, and the live-progress file's trust rules."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from code_compass_server.cli.progress import (
    LineProgress,
    ProgressView,
    duration,
    progress_sink,
    summary_line,
    view_of,
)
from code_compass_server.index.live_progress import (
    STALE_S,
    LiveProgress,
    clear_live,
    process_start,
    read_live,
    write_live,
)
from code_compass_server.index.summary import IndexProgress, IndexSummary
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES


def test_summary_gives_each_phase_its_own_time() -> None:
    s = IndexSummary(project="django", root="/ws", files=2900, chunks=52743, embedded=52743)
    s.seconds = 11.2
    s.phase_seconds = {"scan": 0.4, "parse": 9.5, "commit": 1.3, "embed": 221.0}
    line = summary_line(s)
    assert line.startswith(
        "django: lexical 11 s (scan 0.4 s, parse 9.5 s, commit 1.3 s), embeddings 3 min 41 s;"
    )
    assert "52,743 chunks" in line
    s.phase_seconds.pop("embed")  # --no-embed: no embeddings figure at all
    assert "embeddings" not in summary_line(s)


def test_durations_read_like_a_person_would_say_them() -> None:
    assert duration(3.24) == "3.2 s"
    assert duration(221) == "3 min 41 s"
    assert duration(3 * 3600 + 5 * 60) == "3 h 05 min"


def test_views_name_the_phases_and_their_units() -> None:
    parse = view_of(IndexProgress("p", "indexing", 3, 10))
    assert parse == ProgressView("p", "parse", 3, 10, "files")
    embed = view_of(IndexProgress("p", "embedding", chunks=9, embedded=4, embed_total=9))
    assert embed == ProgressView("p", "embedding", 4, 9, "chunks")
    assert view_of(IndexProgress("p", "ready")) is None


def test_plain_lines_come_at_phase_changes_and_then_at_the_interval() -> None:
    out = io.StringIO()
    lines = LineProgress(out, interval=3600)
    lines.show(ProgressView("p", "parse", 0, 10, "files"))
    lines.show(ProgressView("p", "parse", 5, 10, "files"))  # within the interval: silent
    lines.show(ProgressView("p", "embedding", 0, 40, "chunks"))
    assert out.getvalue().splitlines() == [
        "code-compass: p: parse 0/10 files",
        "code-compass: p: embedding 0/40 chunks",
    ]
    fast = LineProgress(out := io.StringIO(), interval=0)
    fast.show(ProgressView("p", "embedding", 0, 40, "chunks"))
    time.sleep(0.05)
    fast.show(ProgressView("p", "embedding", 20, 40, "chunks"))
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("code-compass: p: embedding 20/40 chunks, ") and ", ETA " in last


def test_index_on_a_pipe_prints_plain_phase_lines(tmp_path: Path) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    out = subprocess.run(
        [sys.executable, "-m", "code_compass_server", "index", "--no-embed", "--workspace", str(ws),
         "--storage", str(tmp_path / "st")],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "CODE_COMPASS_PROGRESS_S": "0"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[:3] == [
        "code-compass: ws: scan",
        "code-compass: ws: parse 0/4 files",
        "code-compass: ws: lexical commit 4/4 files",
    ]
    assert out.stdout.startswith("ws: lexical ") and "(scan " in out.stdout
    assert "embeddings" not in out.stdout


def _live(pid: int, state: str = "embedding", age: float = 0.0) -> LiveProgress:
    now = time.time()
    return LiveProgress(pid=pid, heartbeat=now - age, started=now, state=state, phase=state)


def test_a_live_file_is_believed_only_from_a_live_recent_writer(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        write_live(tmp_path, _live(other.pid))
        found = read_live(tmp_path)
        assert found is not None and found.pid == other.pid and found.working
        write_live(tmp_path, _live(other.pid, age=STALE_S + 1))
        assert read_live(tmp_path) is None  # working but silent: hung or gone
        write_live(tmp_path, _live(other.pid, state="ready", age=STALE_S * 100))
        idle = read_live(tmp_path)
        assert idle is not None and not idle.working  # an idle server need not beat
        clear_live(tmp_path)  # not this process's file: left alone
        assert read_live(tmp_path) is not None
    finally:
        other.kill()
        other.wait()
    assert read_live(tmp_path) is None  # its process is gone
    write_live(tmp_path, replace(_live(os.getpid()), state="ready"))
    clear_live(tmp_path)
    assert not (tmp_path / "live-progress.json").exists()


@pytest.mark.skipif(process_start(os.getpid()) is None, reason="no /proc: process states unknown")
def test_a_killed_writer_not_yet_reaped_is_gone(tmp_path: Path) -> None:
    """A `kill -9`ed writer stays a zombie until its parent reaps it: its live file says
    `embedding` with a fresh heartbeat, and must not be believed."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        write_live(tmp_path, replace(_live(other.pid), pid_start=process_start(other.pid)))
        assert read_live(tmp_path) is not None
        other.kill()
        os.waitid(os.P_PID, other.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped: a zombie
        assert read_live(tmp_path) is None
    finally:
        other.kill()
        other.wait()


@pytest.mark.skipif(process_start(os.getpid()) is None, reason="no /proc: start times unknown")
def test_a_reused_pid_does_not_revive_a_dead_writers_file(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = process_start(other.pid)
        assert start is not None
        write_live(tmp_path, replace(_live(other.pid), pid_start=start))
        assert read_live(tmp_path) is not None  # the very process that wrote it
        # The same pid, as if given to a newer process after the writer died.
        write_live(tmp_path, replace(_live(other.pid), pid_start=str(int(start) - 1)))
        assert read_live(tmp_path) is None
    finally:
        other.kill()
        other.wait()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_per_phase_with_rate() -> None:
    term = _Terminal()
    sink = progress_sink(term)
    sink.show(ProgressView("p", "parse", 0, 10, "files"))
    sink.show(ProgressView("p", "parse", 10, 10, "files"))
    sink.show(ProgressView("p", "embedding", 0, 40, "chunks"))
    sink.close()
    text = term.getvalue()
    assert "p: parse" in text and "10/10" in text and " files/s" in text
    assert "p: embedding" in text and "0/40" in text
    assert "\r" in text  # redrawn in place, not line after line


def test_verbose_index_names_each_skipped_file_and_json_lists_them(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        **SAMPLE_FILES,
        ".env": "API_KEY=hunter2-very-secret\n",
        "assets/logo.png": b"\x89PNG\r\n\x1a\n" + bytes(64),
        "big.py": "x = 1\n" * 400,
    }
    ws = write_tree(tmp_path / "ws", files)
    base = [sys.executable, "-m", "code_compass_server", "index", "--no-embed",
            "--workspace", str(ws), "--storage", str(tmp_path / "st"),
            "--max-file-kb", "1"]  # fmt: skip
    out = subprocess.run([*base, "-v"], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    listed = {tuple(line.split()) for line in out.stdout.splitlines() if line.startswith("    ")}
    assert {(".env", "secret"), ("assets/logo.png", "unsupported_type")} <= listed
    assert ("big.py", "too_large") in listed
    assert "hunter2" not in out.stdout + out.stderr
    out = subprocess.run(
        [*base, "--json"], capture_output=True, text=True, timeout=120, check=False
    )
    (summary,) = json.loads(out.stdout)["projects"]
    assert {"path": ".env", "reason": "secret"} in summary["skipped_paths"]
    assert len(summary["skipped_paths"]) == sum(summary["skipped"].values())
