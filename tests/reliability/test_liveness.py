"""A failing embedding worker is reported (`state: error`, `lastError`) and a wait for it ends
with an error instead of hanging; once the cause is gone it recovers by itself."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass_server.embed.links import EmbeddingFailed
from code_compass_server.engine import Engine
from code_compass_server.engine_status import project_to_json
from code_compass_server.settings import EngineSettings
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

WAIT_BOUND_S = 120  # generous: the worker backs off 1 + 2 + 4 s before the wait gives up


def test_dead_end_embedding_is_reported_and_recovers(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", SAMPLE_FILES)
    engine = make_engine(ws, settings=EngineSettings(embeddings=True))
    if engine.embeddings.error:
        pytest.skip(f"embedding model not available: {engine.embeddings.error}")
    engine.index(embed=False, background_embed=False)
    vectors = engine.project(engine.projects()[0]).directory / "vectors"
    shutil.rmtree(vectors, ignore_errors=True)
    vectors.write_text("a file where the store's folder should be")  # every save fails

    started = time.monotonic()
    with pytest.raises(EmbeddingFailed):
        engine.index(embed=True)
    assert time.monotonic() - started < WAIT_BOUND_S
    entry = project_to_json(engine.status().projects[0])
    assert entry["state"] == "error" and "embedding" in str(entry["lastError"])

    vectors.unlink()  # the cause is gone: the worker's next retry succeeds
    assert engine.wait_embedded(timeout=WAIT_BOUND_S)
    entry = project_to_json(engine.status().projects[0])
    assert entry["state"] == "ready" and entry["lastError"] == ""
    assert entry["embedded"] == entry["chunks"]
