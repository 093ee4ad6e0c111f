"""The team-index tests' harness: an embedded PostgreSQL started once per module (and
stopped after), and the real CLI as a subprocess, with private homes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.team.embedded import EmbeddedServer
from tests.lsp.conftest import start  # noqa: F401 - the language server, for its team test

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "server" / "code_compass_server" / "index"  # a real tree of ~40 files


def cli(
    *args: str, home: Path, check: bool = True, **kw: object
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODE_COMPASS_HOME": str(home)}
    env.pop("CODE_COMPASS_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "code_compass_server", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False, **kw,  # type: ignore[arg-type]
    )  # fmt: skip
    if check and done.returncode != 0:
        raise AssertionError(f"{args[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def server_dir() -> Path:
    """Under /tmp itself: as root the server runs as its own user, which must reach its folder
    (pytest's own temporary root is private to root and reset at each session start)."""
    return Path(tempfile.mkdtemp(prefix="cc-pg-"))


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer(server_dir())
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(srv.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def url(server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = cli("db", "start", "--dir", str(server.directory), "--json",
              home=tmp_path_factory.mktemp("h"))  # fmt: skip
    return str(json.loads(out.stdout)["url"])


def copy_tree(dst: Path) -> Path:
    shutil.copytree(SOURCE, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def search(ws: Path, url: str, query: str, home: Path, project: str = "shared") -> list[dict]:
    out = cli("search", query, "--workspace", str(ws), "--database", url, "--project", project,
              "--mode", "lexical", "--json", "--top-k", "5", home=home)  # fmt: skip
    return list(json.loads(out.stdout)["hits"])


def push(ws: Path, url: str, home: Path, project: str = "shared", *extra: str) -> dict:
    out = cli("index", "--workspace", str(ws), "--database", url, "--project", project,
              "--no-embed", "--json", *extra, home=home)  # fmt: skip
    return dict(json.loads(out.stdout)["projects"][0])
