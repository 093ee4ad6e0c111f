"""Ctrl-C and a closed stdout: one line (or none), the right exit code, no worker left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

N_FILES = 900  # above the parse pool's threshold, and long enough to interrupt mid-parse


def _big_workspace(root: Path) -> Path:
    body = "".join(
        f"def step_{j}(state, limit={j}):\n"
        "    total = sum(range(limit))\n    return state + total\n\n"
        for j in range(12)
    )
    return write_tree(root, {f"pkg/m{i:04d}.py": f"# module {i}\n{body}" for i in range(N_FILES)})


def _parse_workers(parent: psutil.Process) -> list[psutil.Process]:
    """The parse pool's workers (plain `python -c` subprocesses running `worker_entry`)."""
    found = []
    for child in parent.children(recursive=True):
        try:
            if "worker_entry" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:  # ended (or a zombie) while we looked
            continue
    return found


def test_ctrl_c_prints_one_line_exits_130_and_ends_the_parse_workers(tmp_path: Path) -> None:
    ws = _big_workspace(tmp_path / "ws")
    proc = subprocess.Popen(
        [sys.executable, "-m", "code_compass_server", "index", "--no-embed", "--workspace", str(ws),
         "--storage", str(tmp_path / "st")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "CODE_COMPASS_PROGRESS_S": "3600"},
    )  # fmt: skip
    parent = psutil.Process(proc.pid)
    workers: list[psutil.Process] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _parse_workers(parent)
        if len(workers) >= 1:
            break
        time.sleep(0.05)
    assert workers, "the parse pool never started"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "code-compass: interrupted"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    _gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"parse workers left running: {[p.pid for p in alive]}"


def test_a_closed_stdout_ends_quietly(tmp_path: Path) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    args = [sys.executable, "-m", "code_compass_server", "search", "parse config",
            "--workspace", str(ws), "--storage", str(tmp_path / "st"),
            "--mode", "lexical"]  # fmt: skip
    assert subprocess.run(args, capture_output=True, timeout=120, check=False).returncode == 0
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -1` that has already read its line
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert err == ""
    assert proc.returncode == 141
