"""Incremental indexing, deletes, restart, format-version rebuild, crash leftovers."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import INDEX_FORMAT_VERSION
from code_compass_server.engine import Engine
from code_compass_server.validation import validate_search
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES


def _search(engine: Engine, q: str, **kw: object) -> list[str]:
    params = validate_search(q, kw.pop("top_k", 10), mode="lexical", **kw)  # type: ignore[arg-type]
    return [f"{h.path}:{h.symbol}" for h in engine.search(params)]


def test_full_then_incremental(tmp_path: Path, make_engine: Callable[..., Engine]) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    (first,) = engine.index()
    assert first.files == 4 and first.changed == 4 and first.chunks >= 6
    assert "src/config_loader.py:parse_config" in _search(engine, "parse_config")

    (second,) = engine.index()
    assert second.changed == 0 and second.unchanged == 4  # stat-only: nothing re-read

    # Same content, new mtime: hashed, found unchanged, not re-parsed.
    os.utime(ws / "docs/guide.md", ns=(1, 1))
    (third,) = engine.index()
    assert third.changed == 0

    (ws / "src/config_loader.py").write_text("def load_yaml_settings():\n    pass\n")
    (ws / "docs/guide.md").unlink()
    (fourth,) = engine.index()
    assert fourth.changed == 1 and fourth.deleted == 1 and fourth.files == 3
    hits = engine.search(validate_search("parse_config", 10, mode="lexical"))
    assert hits and all("def parse_config" not in h.snippet for h in hits)  # old chunks gone
    assert _search(engine, "load yaml settings")[0] == "src/config_loader.py:load_yaml_settings"
    assert engine.symbols_named("parse_config") == []


def test_restart_reopens_without_reindexing(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    engine.close()
    again = make_engine(ws)
    assert _search(again, "fetchUserProfile")[0] == "src/web/client.ts:fetchUserProfile"
    (summary,) = again.index()
    assert summary.changed == 0 and summary.rebuilt == ""


def test_format_version_change_rebuilds(
    tmp_path: Path, storage: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    db = engine.project(engine.projects()[0]).catalog.path
    engine.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")
    again = make_engine(ws)
    (summary,) = again.index()
    assert f"index format 0 != {INDEX_FORMAT_VERSION}" in summary.rebuilt
    assert summary.changed == 4


def test_corrupt_catalog_rebuilds(tmp_path: Path, make_engine: Callable[..., Engine]) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    db = engine.project(engine.projects()[0]).catalog.path
    engine.close()
    db.write_bytes(b"this is not a database" * 100)
    for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        extra.unlink(missing_ok=True)
    again = make_engine(ws)
    (summary,) = again.index()
    assert summary.rebuilt and summary.files == 4
    assert _search(again, "parse_config")


def test_projects_are_isolated(tmp_path: Path, make_engine: Callable[..., Engine]) -> None:
    a = write_tree(tmp_path / "alpha", {"lib.py": "def shared_helper():\n    return 'alpha'\n"})
    b = write_tree(tmp_path / "beta", {"lib.py": "def shared_helper():\n    return 'beta'\n"})
    engine = make_engine(a, b)
    engine.index()
    only_alpha = engine.search(validate_search("shared_helper", mode="lexical", project="alpha"))
    assert {h.project for h in only_alpha} == {"alpha"}
    assert all("beta" not in h.snippet for h in only_alpha)
    both = engine.search(validate_search("shared_helper", mode="lexical", project="*"))
    assert {h.project for h in both} == {"alpha", "beta"}


def test_all_projects_caps_hits_per_project(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    body = "\n\n".join(f"def widget_{i}():\n    return 'widget'\n" for i in range(8))
    a = write_tree(tmp_path / "a", {f"m{i}.py": body for i in range(3)})
    b = write_tree(tmp_path / "b", {f"m{i}.py": body for i in range(2)})
    engine = make_engine(a, b)
    engine.index()
    hits = engine.search(validate_search("widget", 20, mode="lexical", project="*"))
    per: dict[str, int] = {}
    for h in hits:
        per[h.project] = per.get(h.project, 0) + 1
    assert per == {"a": 3, "b": 3}


def test_filters_path_prefix_and_language(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    assert all(p.startswith("tests/") for p in _search(engine, "parse_config", path_prefix="tests"))
    assert _search(engine, "parse_config", language="markdown")[0].startswith("docs/guide.md")
    assert _search(engine, "parse_config", language="rust") == []


def test_read_text_never_leaves_the_workspace(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    (tmp_path / "outside.txt").write_text("secret outside")
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    engine = make_engine(ws)
    name = engine.projects()[0]
    assert engine.read_text(
        name,
        "docs/guide.md",
    ).startswith("# Guide")  # type: ignore[union-attr]
    for bad in ("../outside.txt", "link.txt", "/etc/passwd", "docs/../../outside.txt"):
        assert engine.read_text(name, bad) is None


def test_buffer_overlay_is_searchable_then_reverts(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    path = ws / "src/config_loader.py"
    engine.set_buffer(path, "def unsaved_quantum_flux():\n    return 1\n")
    assert engine.wait_idle(10)
    assert _search(engine, "unsaved_quantum_flux")[0] == "src/config_loader.py:unsaved_quantum_flux"
    assert "unsaved_quantum_flux" in (
        engine.read_text(engine.projects()[0], "src/config_loader.py") or ""
    )
    engine.clear_buffer(path)
    assert engine.wait_idle(10)
    assert _search(engine, "unsaved_quantum_flux") == []
    assert "src/config_loader.py:parse_config" in _search(engine, "parse_config")


def test_document_globs_index_unknown_types_as_text(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    from code_compass_server.index.scan import ScanSettings
    from code_compass_server.settings import EngineSettings

    ws = write_tree(tmp_path / "ws", {"notes/design.plan": "The flux capacitor needs care.\n"})
    plain = make_engine(ws)
    (summary,) = plain.index()
    assert summary.files == 0 and summary.skipped.get("unsupported_type") == 1
    plain.close()
    docs = make_engine(
        ws, settings=EngineSettings(embeddings=False, scan=ScanSettings(documents=("*.plan",)))
    )
    (summary,) = docs.index()
    assert summary.files == 1
    (hit,) = docs.search(validate_search("flux capacitor", mode="lexical"))
    assert hit.path == "notes/design.plan" and hit.language == "text"


def test_pending_embeddings_newest_first(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(
        tmp_path / "ws", {f"old{i}.py": f"def old_{i}():\n    pass\n" for i in range(5)}
    )
    engine = make_engine(ws)
    engine.index()
    (ws / "fresh.py").write_text("def just_saved():\n    pass\n")
    engine.update_paths(engine.projects()[0], ["fresh.py"])
    (first,) = engine.project(engine.projects()[0]).catalog.pending_embeddings(1)
    assert first.path == "fresh.py"  # a save is embedded before the backlog
