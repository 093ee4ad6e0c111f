"""Where indexes live: outside the workspace, in a per-user cache keyed by the workspace path."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

ENV_HOME = "CODE_COMPASS_HOME"


def storage_base(explicit: Path | None = None) -> Path:
    """--storage DIR, else $CODE_COMPASS_HOME, else the per-user cache folder."""
    if explicit is not None:
        return explicit.expanduser().resolve()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_cache_dir("code-compass", appauthor=False))


def project_storage(base: Path, root: Path) -> Path:
    """One folder per workspace root, readable name plus a hash of the absolute path."""
    resolved = str(root.resolve())
    digest = hashlib.sha1(resolved.encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.resolve().name or "root")[:40]
    return base / "projects" / f"{slug}-{digest}"
