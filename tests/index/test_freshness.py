"""A one-shot query reads an unchanged index without becoming its writer, indexes first when a
stat says the files changed, and reads an index on a read-only mount; the thorough checks run
only when the last writer did not close cleanly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

from code_compass_server.engine import Engine
from code_compass_server.index.verify import (
    CATALOG_FILE,
    record_clean_close,
    take_clean_close,
)
from code_compass_server.index.writer_lock import WRITER_LOCK_FILE, WriterLock
from code_compass_server.settings import EngineSettings
from code_compass_server.storage import project_storage
from code_compass_server.validation import validate_search


def _query_engine(storage: Path, ws: Path) -> Engine:
    engine = Engine.open(storage, EngineSettings(embeddings=False), queries_only=True)
    engine.add_project(ws)
    return engine


def _paths(engine: Engine, query: str) -> list[str]:
    return [h.path for h in engine.search(validate_search(query, mode="lexical"))]


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    ws = write_tree(tmp_path / "ws", {**SAMPLE_FILES, ".gitignore": "*.log\n"})
    storage = tmp_path / "st"
    writer = Engine.open(storage, EngineSettings(embeddings=False))
    writer.add_project(ws)
    writer.index()
    writer.close()
    return ws, storage


def _touch_later(path: Path, text: str) -> None:
    """Rewrite a file with a later mtime than the index saw (coarse clocks tick slowly)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def test_an_unchanged_index_is_read_without_taking_the_writer_lock(
    indexed: tuple[Path, Path],
) -> None:
    ws, storage = indexed
    engine = _query_engine(storage, ws)
    try:
        project = engine.project(engine.projects()[0])
        assert project.stale_reason(repr(engine.settings.scan_for(project.root))) == ""
        assert engine.refresh() == []  # nothing indexed
        assert project.read_only and not (project.lock and project.lock.held)
        # another process could become the writer meanwhile: the lock is free
        other = WriterLock(project.directory / WRITER_LOCK_FILE)
        assert other.acquire()
        other.release()
        assert "src/config_loader.py" in _paths(engine, "parse_config")
    finally:
        engine.close()


@pytest.mark.parametrize("change", ["edit", "add", "delete", "gitignore"])
def test_a_changed_tree_is_indexed_before_the_query(
    indexed: tuple[Path, Path], change: str
) -> None:
    ws, storage = indexed
    if change == "edit":
        _touch_later(
            ws / "src" / "config_loader.py", "def zebra_quokka_settings():\n    return 1\n"
        )
    elif change == "add":
        write_tree(ws, {"src/new_module.py": "def zebra_quokka_settings():\n    return 2\n"})
    elif change == "delete":
        (ws / "src" / "config_loader.py").unlink()
    else:  # an ignore file edited in place changes what is indexed, not its folder
        _touch_later(ws / ".gitignore", "*.log\nsrc/config_loader.py\n")
    engine = _query_engine(storage, ws)
    try:
        project = engine.project(engine.projects()[0])
        assert project.stale_reason(repr(engine.settings.scan_for(project.root))) != ""
        summaries = engine.refresh()
        assert len(summaries) == 1 and not summaries[0].read_only
        found = _paths(
            engine, "zebra_quokka_settings" if change in ("edit", "add") else "parse_config"
        )
        if change == "edit":
            assert found[:1] == ["src/config_loader.py"]
        elif change == "add":
            assert found[:1] == ["src/new_module.py"]
        else:
            assert "src/config_loader.py" not in found
    finally:
        engine.close()
    again = _query_engine(storage, ws)  # the run published a new manifest: fresh again
    try:
        project = again.project(again.projects()[0])
        assert project.stale_reason(repr(again.settings.scan_for(project.root))) == ""
    finally:
        again.close()


def test_a_cancelled_run_leaves_no_manifest_that_vouches_for_it(
    indexed: tuple[Path, Path],
) -> None:
    ws, storage = indexed
    _touch_later(ws / "src" / "config_loader.py", "def zebra_quokka_settings():\n    return 1\n")
    engine = Engine.open(storage, EngineSettings(embeddings=False))
    engine.add_project(ws)
    project = engine.project(engine.projects()[0])
    assert project.try_upgrade()
    project.begin_full_run(repr(engine.settings.scan_for(project.root)))  # and never finishes
    engine.close()
    reader = _query_engine(storage, ws)
    try:
        project = reader.project(reader.projects()[0])
        assert "no record" in project.stale_reason(repr(reader.settings.scan_for(project.root)))
    finally:
        reader.close()


def test_a_clean_close_vouches_for_the_stores_until_one_changes(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    (folder / "lexical").mkdir(parents=True)
    (folder / CATALOG_FILE).write_bytes(b"x" * 100)
    (folder / "lexical" / "meta.json").write_text("{}")
    record_clean_close(folder)
    assert take_clean_close(folder)
    assert not take_clean_close(folder)  # consumed: a writer that dies now leaves none
    record_clean_close(folder)
    with (folder / CATALOG_FILE).open("r+b") as fh:  # damage in place, same size
        fh.write(b"y")
    assert not take_clean_close(folder)


def test_the_writer_records_a_clean_close_and_a_killed_one_does_not(
    indexed: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, storage = indexed
    folder = project_storage(storage, ws.resolve())
    assert (folder / "clean-close.json").exists()  # the fixture's writer closed
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from code_compass_server.engine import Engine\n"
        "from code_compass_server.settings import EngineSettings\n"
        "e = Engine.open(Path(sys.argv[1]), EngineSettings(embeddings=False))\n"
        "e.add_project(Path(sys.argv[2]))\n"
        "assert e.project(e.projects()[0]).try_upgrade()\n"
        "os._exit(0)\n"  # dies as the writer: no close
    )
    subprocess.run([sys.executable, "-c", script, str(storage), str(ws)], check=True, timeout=120)
    assert not (folder / "clean-close.json").exists()


def _can_mount_read_only(tmp: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe = tmp / "probe"
    probe.mkdir()
    ok = subprocess.run(["mount", "--bind", str(probe), str(probe)], capture_output=True)
    if ok.returncode != 0:
        return False
    subprocess.run(["umount", str(probe)], check=False)
    return True


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Callable[[Path], Path]]:
    if not _can_mount_read_only(tmp_path):
        pytest.skip("needs root and bind mounts for a read-only mount (root ignores file modes)")
    mounted: list[Path] = []

    def mount(source: Path) -> Path:
        target = tmp_path / f"ro-{len(mounted)}"
        target.mkdir()
        subprocess.run(["mount", "--bind", str(source), str(target)], check=True)
        mounted.append(target)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
        return target

    yield mount
    for target in mounted:
        subprocess.run(["umount", str(target)], check=False)


def test_search_on_a_read_only_mount_gives_the_same_hits(
    indexed: tuple[Path, Path], tmp_path: Path, read_only_mount: Callable[[Path], Path]
) -> None:
    ws, storage = indexed
    copy = tmp_path / "copy"
    shutil.copytree(storage, copy)
    mounted = read_only_mount(copy)
    with pytest.raises(OSError):
        (mounted / "x").write_text("")

    def search(store: Path) -> list[tuple[str, int]]:
        out = subprocess.run(
            [sys.executable, "-m", "code_compass_server", "search", "parse_config", "--json",
             "--mode", "lexical", "--workspace", str(ws), "--storage", str(store)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return [(h["path"], h["startLine"]) for h in json.loads(out.stdout)["hits"]]

    want = search(storage)
    assert want
    assert search(mounted) == want
    # a stale tree on a read-only mount: the committed index is served, nothing is written
    source = ws / "src" / "config_loader.py"
    _touch_later(source, source.read_text() + "\n# x\n")
    assert [p for p, _ in search(mounted)] == [p for p, _ in want]
