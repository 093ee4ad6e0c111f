"""Where the built model lives, and a clear error when it is missing.

In order: `$CODE_COMPASS_MODEL_DIR`; a source checkout's `models/build` (scripts/setup builds
it); else a per-user cache folder named after the model's sha256, filled on first use
(embed/provision.py)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from code_compass_server.constants import (
    EMBED_MODEL_DIR_ENV,
    EMBED_MODEL_FILE,
    EMBED_TOKENIZER_FILE,
)


class ModelNotBuiltError(RuntimeError):
    """The int8 ONNX model has not been built yet (scripts/setup or first use builds it)."""


def checkout_models_dir() -> Path | None:
    """`<checkout>/models` when the package runs from a source checkout (`server/` + pyproject)."""
    package = Path(__file__).resolve().parents[1]
    root = package.parents[1]
    if (
        package.parent.name == "server"
        and (root / "pyproject.toml").is_file()
        and (root / "models").is_dir()
    ):
        return root / "models"
    return None


def user_model_dir(model_sha256: str) -> Path:
    """The per-user cache folder of the model whose built file has this sha256."""
    cache = Path(platformdirs.user_cache_dir("code-compass", appauthor=False))
    return cache / "models" / f"minilm-l6-int8-{model_sha256[:12]}"


def overridden_model_dir() -> Path | None:
    """`$CODE_COMPASS_MODEL_DIR`, else a checkout's `models/build`: never fetched into."""
    env = os.environ.get(EMBED_MODEL_DIR_ENV)
    if env:
        return Path(env).expanduser()
    models = checkout_models_dir()
    return models / "build" if models is not None else None


def default_model_dir() -> Path:
    """Where the model is looked for (see the module's docstring for the order)."""
    from code_compass_server.embed.manifest import load_manifest

    explicit = overridden_model_dir()
    if explicit is not None:
        return explicit
    return user_model_dir(load_manifest()["output"]["sha256"])


def require_model_files(model_dir: Path) -> tuple[Path, Path]:
    """(model, tokenizer) paths, or ModelNotBuiltError telling the user what to run."""
    model, tokenizer = model_dir / EMBED_MODEL_FILE, model_dir / EMBED_TOKENIZER_FILE
    missing = [p.name for p in (model, tokenizer) if not p.is_file()]
    if missing:
        raise ModelNotBuiltError(
            f"The embedding model is not built ({', '.join(missing)} missing in {model_dir}). "
            "Run scripts/setup in a checkout, else `python -m code_compass_server.embed.build`."
        )
    return model, tokenizer
