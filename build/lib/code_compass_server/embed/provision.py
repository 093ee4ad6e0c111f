"""First use outside a checkout: build the model into the per-user cache, once, under a lock.

An override (`$CODE_COMPASS_MODEL_DIR`) or a checkout's `models/build` is used as it is: those
are built on purpose (scripts/setup). Progress goes to stderr (stdout may be JSON-RPC)."""

from __future__ import annotations

import fcntl
import sys
import time
from pathlib import Path

from code_compass_server.constants import EMBED_BUILD_INFO_FILE, EMBED_MODEL_FILE
from code_compass_server.embed.paths import default_model_dir, overridden_model_dir


def _stderr(message: str) -> None:
    print(f"code-compass: {message}", file=sys.stderr, flush=True)


def _present(model_dir: Path) -> bool:
    return (model_dir / EMBED_MODEL_FILE).is_file() and (
        model_dir / EMBED_BUILD_INFO_FILE
    ).is_file()


def ensure_model() -> Path:
    """The folder of the model to load, built first when it is the per-user cache and empty.
    Raises ModelNotBuiltError (ModelFetchError offline) with a one-line fix."""
    explicit = overridden_model_dir()
    if explicit is not None:
        return explicit
    target = default_model_dir()
    if _present(target):
        return target
    from code_compass_server.embed.build import BuildError, build

    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building it: wait, then reuse
        if _present(target):
            return target
        _stderr(f"first use: building the embedding model into {target} (once)")
        started = time.monotonic()
        try:
            build(target, progress=_stderr)
        except BuildError as exc:
            from code_compass_server.embed.paths import ModelNotBuiltError

            raise ModelNotBuiltError(str(exc)) from exc
        _stderr(f"embedding model ready ({time.monotonic() - started:.0f} s)")
    return target
