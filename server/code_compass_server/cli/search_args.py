"""A search's and an ask's arguments checked before anything opens: bad input exits 2 with
nothing touched, and a search forks its query model (embed/forked_model.py) only once its
input is good."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from code_compass_server.errors import InputError
from code_compass_server.validation import validate_search


def search_params(args: argparse.Namespace, query: Any) -> Any:
    return validate_search(
        query,
        args.top_k,
        relative_prefix(args.path_prefix, args.workspace or [Path.cwd()]),
        args.language,
        args.min_score,
        mode=args.mode,
        project=args.project,
    )


def relative_prefix(prefix: str | None, roots: list[Path]) -> str | None:
    """An absolute --path-prefix inside a workspace becomes relative to it; outside: bad input."""
    if not prefix or not Path(prefix).is_absolute():
        return prefix
    target = Path(prefix).expanduser().resolve()
    for root in roots:
        try:
            rel = target.relative_to(Path(root).expanduser().resolve())
        except ValueError:
            continue
        return rel.as_posix() if rel.parts else None
    listed = ", ".join(str(r) for r in roots)
    raise InputError("--path-prefix", f"{prefix} is outside the workspace ({listed})")
