"""The README's demo question (scripts/run) over this repository's own server package."""

from __future__ import annotations

import shutil
from pathlib import Path

from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search

REPO = Path(__file__).resolve().parents[2]
DEMO = "how are identifiers split into tokens for the lexical index?"


def test_demo_question_ranks_split_identifier_first(tmp_path: Path) -> None:
    # A copy of the package: the test must not index (or be changed by) the working tree's
    # other files, and the index needs no vectors (hybrid falls back to lexical without them).
    ws = tmp_path / "ws"
    shutil.copytree(
        REPO / "server" / "code_compass_server",
        ws / "server" / "code_compass_server",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    eng = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    try:
        eng.add_project(ws)
        eng.index(embed=False)
        hits = list(eng.search(validate_search(DEMO, 5)))
        assert hits, "no hit"
        first = hits[0]
        assert (first.path, first.symbol) == (
            "server/code_compass_server/index/tokens.py",
            "split_identifier",
        ), [(h.path, h.symbol, h.score) for h in hits]
        # No hit shown is a one-line container header (`class LexicalIndex:` alone).
        assert not [h for h in hits if h.kind == "class" and h.start_line == h.end_line]
    finally:
        eng.close()
