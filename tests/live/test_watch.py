"""The live index through the real file system and the real watcher."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass_server.engine import Engine
from code_compass_server.index.watcher import ChangeBatch
from code_compass_server.validation import validate_search
from tests.conftest import write_tree

TIMEOUT = 15.0


def _paths(engine: Engine, q: str) -> list[str]:
    return [h.path for h in engine.search(validate_search(q, 20, mode="lexical"))]


def eventually(check: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def catalog_state(engine: Engine) -> set[tuple[str, str]]:
    """(path, content hash) of every chunk: what a fresh index must reproduce exactly."""
    project = engine.project(engine.projects()[0])
    rows = project.catalog._query("SELECT path, hash FROM chunks")
    return {(str(p), str(h)) for p, h in rows}


@pytest.fixture
def live(tmp_path: Path, make_engine: Callable[..., Engine]) -> tuple[Engine, Path]:
    ws = write_tree(tmp_path / "ws", {"app/core.py": "def alpha_entry():\n    return 1\n"})
    engine = make_engine(ws)
    engine.index()
    engine.start_watching(engine.projects()[0])
    time.sleep(0.3)  # let inotify register the tree
    return engine, ws


def test_create_modify_delete_rename(live: tuple[Engine, Path]) -> None:
    engine, ws = live
    (ws / "app/new_mod.py").write_text("def zorbflux():\n    pass\n")
    assert eventually(lambda: _paths(engine, "zorbflux") == ["app/new_mod.py"])

    (ws / "app/new_mod.py").write_text("def quillnext():\n    pass\n")
    assert eventually(lambda: _paths(engine, "quillnext") == ["app/new_mod.py"])
    assert _paths(engine, "zorbflux") == []

    (ws / "app/new_mod.py").rename(ws / "app/moved_mod.py")
    assert eventually(lambda: _paths(engine, "quillnext") == ["app/moved_mod.py"])

    (ws / "app/moved_mod.py").unlink()
    assert eventually(lambda: _paths(engine, "quillnext") == [])

    shutil.rmtree(ws / "app")
    assert eventually(lambda: _paths(engine, "alpha_entry") == [])


def test_gitignore_change_is_reevaluated(live: tuple[Engine, Path]) -> None:
    engine, ws = live
    (ws / "build_notes.txt").write_text("zebra crossing procedures\n")
    assert eventually(lambda: _paths(engine, "zebra") == ["build_notes.txt"])
    (ws / ".gitignore").write_text("build_notes.txt\n")
    assert eventually(lambda: _paths(engine, "zebra") == [])
    (ws / ".gitignore").write_text("")
    assert eventually(lambda: _paths(engine, "zebra") == ["build_notes.txt"])


def test_storm_of_2000_changes_matches_a_fresh_index(
    tmp_path: Path, make_engine: Callable[..., Engine], storage: Path
) -> None:
    ws = write_tree(
        tmp_path / "ws",
        {f"pkg/m{i:04d}.py": f"def func_{i}():\n    return {i}\n" for i in range(800)},
    )
    engine = make_engine(ws)
    engine.index()
    name = engine.projects()[0]
    batches: list[ChangeBatch] = []
    original = engine._on_changes

    def counting(batch: ChangeBatch) -> None:
        batches.append(batch)
        original(batch)

    engine._on_changes = counting  # type: ignore[method-assign]
    engine.start_watching(name)
    time.sleep(0.3)
    changes = 0
    for i in range(800, 1600):  # 800 creations
        (ws / f"pkg/m{i:04d}.py").write_text(f"def func_{i}():\n    return {i}\n")
        changes += 1
    for i in range(0, 600):  # 600 modifications
        (ws / f"pkg/m{i:04d}.py").write_text(f"def changed_{i}():\n    return -{i}\n")
        changes += 1
    for i in range(600, 800):  # 200 deletions
        (ws / f"pkg/m{i:04d}.py").unlink()
        changes += 1
    for i in range(800, 1000):  # 200 renames (a delete and a create each)
        (ws / f"pkg/m{i:04d}.py").rename(ws / f"pkg/r{i:04d}.py")
        changes += 2
    assert changes == 2000
    searches_during = len(_paths(engine, "func_1200"))  # queries keep being answered

    fresh = Engine.open(tmp_path / "fresh-store", engine.settings)
    fresh.add_project(ws)
    fresh.index()
    want = catalog_state(fresh)
    fresh.close()
    assert eventually(lambda: engine.wait_idle(1) and catalog_state(engine) == want, 60)
    assert searches_during >= 0
    assert 0 < len(batches) <= 40, f"{len(batches)} batches for 2000 changes"


def test_buffer_edit_visible_before_save_and_gone_after_close(
    live: tuple[Engine, Path],
) -> None:
    engine, ws = live
    path = ws / "app/core.py"
    engine.set_buffer(path, "def alpha_entry():\n    return unsaved_marker_value\n")
    assert eventually(lambda: _paths(engine, "unsaved_marker_value") == ["app/core.py"], 5)
    assert "unsaved_marker_value" in (engine.read_text(engine.projects()[0], "app/core.py") or "")
    engine.clear_buffer(path)
    assert eventually(lambda: _paths(engine, "unsaved_marker_value") == [], 5)
    assert "unsaved_marker_value" not in (
        engine.read_text(engine.projects()[0], "app/core.py") or ""
    )


def test_writer_never_waits_for_embeddings(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    """A full index hands embedding to the background: edits are applied meanwhile."""
    from code_compass_server.settings import EngineSettings

    files: dict[str, str | bytes] = {
        f"m{i}.py": "\n\n".join(
            f"def fn_{i}_{j}(x):\n    '''Step {j} of module {i}.'''\n    return x * {j}\n"
            for j in range(20)
        )
        for i in range(25)
    }
    ws = write_tree(tmp_path / "ws", files)
    engine = make_engine(ws, settings=EngineSettings(embeddings=True))
    name = engine.projects()[0]
    engine.schedule_index(name)
    assert engine.wait_idle(60)  # the lexical run is done: the writer is free again
    status = engine.status().projects[0]
    assert status.embedded < status.chunks  # ~500 chunks: embedding still under way
    engine.set_buffer(ws / "m0.py", "def during_embedding_marker():\n    pass\n")
    assert eventually(lambda: _paths(engine, "during_embedding_marker") == ["m0.py"], 5)
    assert engine.status().projects[0].state == "embedding"
