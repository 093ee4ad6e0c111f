"""Whether an engine serves from a team index, and which: light enough for every start-up
(the team backend itself, with numpy and psycopg, loads only when one is configured)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from code_compass_server.constants import ENV_DATABASE_URL, ENV_PROJECT


@dataclass(frozen=True, slots=True)
class TeamOptions:
    url: str
    # workspace root -> project name on the server (default: the folder's name)
    project_names: dict[Path, str] = field(default_factory=dict)
    # the name for a single workspace folder when no root is named ($CODE_COMPASS_PROJECT)
    single_project: str = ""


def team_from_env() -> TeamOptions | None:
    """$CODE_COMPASS_DATABASE_URL (and $CODE_COMPASS_PROJECT for a single folder)."""
    url = os.environ.get(ENV_DATABASE_URL, "").strip()
    if not url:
        return None
    return TeamOptions(url, {}, os.environ.get(ENV_PROJECT, "").strip())
