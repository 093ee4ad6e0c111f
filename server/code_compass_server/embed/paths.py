"""Where the built model lives, and a clear error when it is missing."""

from __future__ import annotations

import os
from pathlib import Path

from code_compass_server.constants import (
    EMBED_MODEL_DIR_ENV,
    EMBED_MODEL_FILE,
    EMBED_TOKENIZER_FILE,
)

MANIFEST_NAME = "manifest.json"


class ModelNotBuiltError(RuntimeError):
    """The int8 ONNX model has not been built yet (scripts/setup builds it)."""


def repo_models_dir() -> Path | None:
    """`<repo>/models` (editable install): nearest ancestor folder with models/manifest.json."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "models" / MANIFEST_NAME).is_file():
            return parent / "models"
    return None


def default_model_dir() -> Path:
    """`$CODE_COMPASS_MODEL_DIR`, else `<repo>/models/build` next to the package source."""
    env = os.environ.get(EMBED_MODEL_DIR_ENV)
    if env:
        return Path(env).expanduser()
    models = repo_models_dir()
    if models is None:
        raise ModelNotBuiltError(
            "Cannot find the embedding model: no models/manifest.json above "
            f"{Path(__file__).resolve().parent}. Set {EMBED_MODEL_DIR_ENV} to the folder holding "
            f"{EMBED_MODEL_FILE}, or run scripts/setup from the repository."
        )
    return models / "build"


def require_model_files(model_dir: Path) -> tuple[Path, Path]:
    """(model, tokenizer) paths, or ModelNotBuiltError telling the user what to run."""
    model, tokenizer = model_dir / EMBED_MODEL_FILE, model_dir / EMBED_TOKENIZER_FILE
    missing = [p.name for p in (model, tokenizer) if not p.is_file()]
    if missing:
        raise ModelNotBuiltError(
            f"The embedding model is not built ({', '.join(missing)} missing in {model_dir}). "
            "Run scripts/setup (or: .venv/bin/python scripts/build_model.py)."
        )
    return model, tokenizer
