"""Stores that cannot be trusted on open are rebuilt or reconciled (docs/architecture.md)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search


def _paths(engine: Engine, query: str) -> list[str]:
    return [h.path for h in engine.search(validate_search(query, 10, mode="lexical"))]


def test_missing_lexical_index_is_rebuilt_and_reported(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws)
    engine.index()
    directory = engine.project(engine.projects()[0]).directory
    engine.close()
    shutil.rmtree(directory / "lexical")  # the catalog alone vouches for nothing searchable

    again = make_engine(ws)
    (summary,) = again.index()
    assert "lexical" in summary.rebuilt
    assert summary.changed == 4 and summary.files == 4
    assert "src/config_loader.py" in _paths(again, "parse_config")
    assert again.status().projects[0].rebuilt == summary.rebuilt


def _catalog_ids(db: Path, where: str = "1") -> set[str]:
    with sqlite3.connect(db) as conn:
        return {str(r[0]) for r in conn.execute(f"SELECT id FROM chunks WHERE {where}")}


def test_vectors_and_embedded_flags_are_reconciled_on_open(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    on = EngineSettings(embeddings=True)
    engine = make_engine(ws, settings=on)
    if engine.embeddings.error:
        pytest.skip(f"embedding model not available: {engine.embeddings.error}")
    engine.index(embed=True)
    assert engine.wait_embedded(timeout=60)
    name = engine.projects()[0]
    db = engine.project(name).catalog.path
    link = engine.embeddings.get(name)
    assert link is not None
    ids = sorted(link.store.chunk_ids())
    assert len(ids) >= 3 and set(ids) == _catalog_ids(db, "embedded = 1")
    # A crash between the two stores: vectors lost while the flags still say embedded...
    lost = set(ids[:2])
    link.store.delete_chunk_ids(lost)
    link.store.flush()
    engine.close()
    # ...and a vector whose chunk the catalog no longer has.
    orphan = ids[2]
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM chunks WHERE id = ?", (orphan,))

    again = make_engine(ws, settings=on)
    relinked = again.embeddings.get(name)
    assert relinked is not None
    assert lost <= _catalog_ids(db, "embedded = 1")  # a reader changes nothing...
    again.index(embed=False, background_embed=False)  # ...the writer reconciles
    assert not lost & _catalog_ids(db, "embedded = 1")  # to be embedded again
    assert orphan not in relinked.store.chunk_ids()  # dropped
    again.index(embed=True)
    assert again.wait_embedded(timeout=60)
    assert relinked.store.chunk_ids() == _catalog_ids(db) == _catalog_ids(db, "embedded = 1")
