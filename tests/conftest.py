"""Shared fixtures: fixture workspaces written to tmp_path, engines with private storage."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from code_compass.engine import Engine
from code_compass.settings import EngineSettings


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
