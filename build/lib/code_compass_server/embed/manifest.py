"""The model's manifest and tokenizer, shipped as package data (found with importlib.resources)."""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from code_compass_server.constants import (
    EMBED_MANIFEST_FILE,
    EMBED_PACKAGE_DATA_DIR,
    EMBED_TOKENIZER_FILE,
)


def package_data(name: str) -> Traversable:
    """A file of `code_compass_server/embedding_model/`, wherever the package is installed."""
    return resources.files("code_compass_server").joinpath(EMBED_PACKAGE_DATA_DIR).joinpath(name)


def load_manifest() -> dict[str, Any]:
    """Pinned source package, sha256 of its weights, of the tokenizer and of the built model."""
    data: dict[str, Any] = json.loads(package_data(EMBED_MANIFEST_FILE).read_text("utf-8"))
    return data


def tokenizer_bytes() -> bytes:
    """The model's WordPiece tokenizer.json (its sha256 is the manifest's `tokenizer.sha256`)."""
    return package_data(EMBED_TOKENIZER_FILE).read_bytes()
