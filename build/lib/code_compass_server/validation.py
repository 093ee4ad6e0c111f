"""Input validation shared by every front door (docs/rules.md: query-limits … min-score-finite)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from code_compass_server.constants import (
    DEFAULT_TOP_K,
    MAX_LANGUAGE_CHARS,
    MAX_PATH_PREFIX_CHARS,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MIN_TOP_K,
)
from code_compass_server.errors import InputError
from code_compass_server.records import SearchParams

SEARCH_MODES = ("hybrid", "lexical", "semantic")
ALL_PROJECTS = "*"


def validate_query(query: Any) -> str:
    if not isinstance(query, str):
        raise InputError("query", "must be a string")
    q = query.strip()
    if not q:
        raise InputError("query", "must not be empty; type what you are looking for")
    if len(q) > MAX_QUERY_CHARS:
        raise InputError(
            "query", f"is {len(q)} characters long; the limit is {MAX_QUERY_CHARS}, shorten it"
        )
    return q


def clamp_top_k(top_k: Any) -> int:
    if top_k is None:
        return DEFAULT_TOP_K
    if isinstance(top_k, bool) or not isinstance(top_k, int | float):
        raise InputError("topK", f"must be a number between {MIN_TOP_K} and {MAX_TOP_K}")
    if not math.isfinite(top_k):
        raise InputError("topK", "must be a finite number")
    return max(MIN_TOP_K, min(MAX_TOP_K, int(top_k)))


def validate_path_prefix(prefix: Any) -> str | None:
    if prefix is None or prefix == "":
        return None
    if not isinstance(prefix, str):
        raise InputError("pathPrefix", "must be a string such as 'src/app'")
    if "\0" in prefix:
        raise InputError("pathPrefix", "must not contain a NUL character")
    if len(prefix) > MAX_PATH_PREFIX_CHARS:
        raise InputError(
            "pathPrefix", f"is {len(prefix)} characters; the limit is {MAX_PATH_PREFIX_CHARS}"
        )
    norm = prefix.replace("\\", "/")
    if ".." in norm.split("/") or ".." in norm:
        raise InputError("pathPrefix", "must not contain '..'; give a path inside the workspace")
    norm = norm.lstrip("/")
    while norm.startswith("./"):
        norm = norm[2:]
    return norm or None


def validate_language(language: Any) -> str | None:
    if language is None or language == "":
        return None
    if not isinstance(language, str):
        raise InputError("language", "must be a string such as 'python'")
    if len(language) > MAX_LANGUAGE_CHARS:
        raise InputError(
            "language", f"is {len(language)} characters; the limit is {MAX_LANGUAGE_CHARS}"
        )
    return language.strip().lower() or None


def validate_min_score(min_score: Any, default: float | None) -> float | None:
    if min_score is None:
        return default
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise InputError("minScore", "must be a number between 0 and 1")
    if not math.isfinite(min_score):
        raise InputError("minScore", "must be a finite number (not NaN or infinity)")
    if not 0.0 <= min_score <= 1.0:
        # Scores are probabilities in [0, 1]: a threshold outside can only hide every hit
        # or none, silently.
        # The default is said only where there is one (ask); search filters only when asked.
        said = f" (default {default:g})" if default is not None else ""
        raise InputError("minScore", f"is {min_score:g}; it must be between 0 and 1{said}")
    return float(min_score)


def validate_mode(mode: Any) -> str:
    if mode is None:
        return "hybrid"
    if mode not in SEARCH_MODES:
        raise InputError("mode", f"must be one of {', '.join(SEARCH_MODES)}")
    return str(mode)


def validate_project(raw: Any, projects: Iterable[str]) -> str | None:
    """None or '*' = every project; otherwise a known project (workspace folder) name."""
    if raw is None or raw == "" or raw == ALL_PROJECTS:
        return None
    known = sorted(projects)
    if not isinstance(raw, str):
        raise InputError("project", f"must be a project name; known projects: {', '.join(known)}")
    if raw not in known:
        listed = ", ".join(known) or "none (no workspace folder is open)"
        raise InputError(
            "project", f"'{raw[:80]}' is not an open workspace folder; known: {listed}"
        )
    return raw


def validate_search(
    query: Any,
    top_k: Any = None,
    path_prefix: Any = None,
    language: Any = None,
    min_score: Any = None,
    *,
    mode: Any = None,
    project: Any = None,
    default_min_score: float | None = None,
) -> SearchParams:
    if project is not None and not isinstance(project, str):
        raise InputError("project", "must be a project name, or '*' for all projects")
    return SearchParams(
        query=validate_query(query),
        top_k=clamp_top_k(top_k),
        path_prefix=validate_path_prefix(path_prefix),
        language=validate_language(language),
        min_score=validate_min_score(min_score, default_min_score),
        project=project or None,
        mode=validate_mode(mode),
    )
