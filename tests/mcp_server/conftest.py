"""Fixtures for the MCP server tests (the harness itself is in harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES


@pytest.fixture
def sample_ws(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "sample", SAMPLE_FILES)
