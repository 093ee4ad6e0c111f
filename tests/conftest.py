"""Shared fixtures: fixture workspaces written to tmp_path, engines with private storage."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from code_compass_server.answer import LlmConfig
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from tests.fakes.fake_anthropic import FakeAnthropic


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def tree() -> Callable[[Path, dict[str, str | bytes]], Path]:
    return write_tree


@pytest.fixture
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cc-home"
    monkeypatch.setenv("CODE_COMPASS_HOME", str(home))
    return home


@pytest.fixture
def make_engine(storage: Path) -> Iterator[Callable[..., Engine]]:
    engines: list[Engine] = []

    def factory(*roots: Path, settings: EngineSettings | None = None) -> Engine:
        engine = Engine.open(storage, settings or EngineSettings(embeddings=False))
        for root in roots:
            engine.add_project(root)
        engines.append(engine)
        return engine

    yield factory
    for e in engines:
        e.close()


# --- the LLM: the fake Messages API the real SDK talks to ------------------------------------
@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The fake Messages API; the SDK finds it through ANTHROPIC_BASE_URL, as in production."""
    # The SDK loads at a process's first call (answer/llm.py): a test that times a call
    # measures the call, not that one-time import.
    import anthropic  # noqa: F401

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
        yield fake


@pytest.fixture
def llm() -> LlmConfig:
    """Fast retries and a short time-out so failure tests take milliseconds."""
    return LlmConfig(model="claude-test", max_retries=2, backoff_base_s=0.01, timeout_s=5.0)


# --- process hygiene: no process started by this run outlives it ---------------------------
# Every process the run starts inherits this variable (servers, CLIs, their parse workers);
# whatever still carries it when the session ends is an orphan (docs/rules.md:
# workers-die-with-parent). Workers poll for their parent's death, so give them a moment.
_RUN_MARK = "CODE_COMPASS_TEST_RUN"
_ORPHAN_GRACE_S = 5.0


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(_RUN_MARK, str(os.getpid()))


def _leftovers(mark: str) -> list[psutil.Process]:
    me = os.getpid()
    out = []
    for proc in psutil.process_iter(["pid", "ppid", "cmdline", "status"]):
        try:
            if proc.pid == me or proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            cmd = " ".join(proc.info["cmdline"] or [])
            if proc.info["ppid"] == me and "resource_tracker" in cmd:
                continue  # multiprocessing's helper of this process: ends with it
            if proc.environ().get(_RUN_MARK) == mark:
                out.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return out


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    mark = os.environ.get(_RUN_MARK)
    if mark != str(os.getpid()):
        return  # a pytest run inside a test: the outer run does the counting
    deadline = time.monotonic() + _ORPHAN_GRACE_S
    left = _leftovers(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = _leftovers(mark)
    if not left:
        return
    lines = [f"{p.pid} {' '.join(p.info['cmdline'] or [])[:160]}" for p in left]
    head = f"\n{len(left)} process(es) outlived the test run:\n"
    sys.stderr.write(head + "\n".join(lines) + "\n")
    for p in left:
        with contextlib.suppress(psutil.Error):
            p.kill()
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
