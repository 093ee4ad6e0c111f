"""Running out of disk, memory or file handles is said in one line (#32), with its own exit
code, and status says it too; once there is room again the next run repairs by itself.

Disk full is real: the index lives on a small tmpfs (mounting needs root; skipped otherwise).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.errors import resource_exhaustion
from tests.reliability.attacks import module_text, read_state

EXIT_RESOURCES = 4  # cli/__init__.py; README "Exit codes"
MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "build"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODE_COMPASS_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "code_compass_server", *args],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full_is_one_line_and_the_next_run_repairs(tmp_path: Path, small_disk: Path) -> None:
    if not (MODEL_DIR / "model.onnx").exists() and not any(MODEL_DIR.glob("*")):
        pytest.skip(f"the embedding model is not built ({MODEL_DIR})")
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(160):
        (ws / f"mod_{i}.py").write_text(module_text(i, 0, funcs=8))
    done = _cli(small_disk, "index", "--workspace", str(ws))
    assert done.returncode == EXIT_RESOURCES, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("code-compass: disk full in ") and str(small_disk) in last
    status = _cli(small_disk, "status", "--workspace", str(ws), "--json")
    assert status.returncode == 0, status.stderr
    assert "disk full" in status.stdout  # lastError
    # Counts are true: no chunk is flagged embedded whose vector the store did not commit.
    state = read_state(small_disk, ws)
    assert state.error == "" and state.embedded <= state.vectors, len(
        state.embedded - state.vectors
    )
    reported = json.loads(status.stdout)["projects"][0]["embedded"]
    assert reported == len(state.embedded)

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    again = _cli(small_disk, "index", "--workspace", str(ws))
    assert again.returncode == 0, again.stderr[-2000:]
    status = _cli(small_disk, "status", "--workspace", str(ws), "--json")
    assert '"lastError": ""' in status.stdout


@pytest.mark.parametrize(
    ("script", "cause"),
    [
        (
            """
            import os, resource
            resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
            files = []
            try:
                while True:
                    files.append(open(os.devnull))
            except OSError as exc:
                error = exc
            for f in files:
                f.close()
            """,
            "too many open files",
        ),
        (
            """
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
            try:
                blob = bytearray(4 << 30)
            except MemoryError as exc:
                error = exc
            """,
            "out of memory",
        ),
        (
            """
            import os, resource, signal, tempfile
            import numpy as np
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            try:  # a short write, as np.save reported it on the full disk
                np.save(os.path.join(tempfile.mkdtemp(), "v.npy"), np.zeros(100_000))
            except OSError as exc:
                error = exc
            """,
            "disk full",
        ),
    ],
)
def test_real_exhaustion_errors_are_named(script: str, cause: str) -> None:
    code = textwrap.dedent(script) + textwrap.dedent(
        """
        from code_compass_server.errors import resource_exhaustion
        print(resource_exhaustion(error))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == cause


def test_ordinary_errors_are_not_exhaustion() -> None:
    assert resource_exhaustion(ValueError("bad value")) is None
    assert resource_exhaustion(FileNotFoundError(2, "No such file")) is None
