"""The ask request and its seed-000 validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from code_compass.constants import DEFAULT_MIN_SCORE
from code_compass.errors import InputError
from code_compass.records import SearchParams
from code_compass.validation import validate_search


@dataclass(slots=True)
class AskRequest:
    """Raw ask input from a front door; `validated()` applies the input rules."""

    query: Any
    top_k: Any = None
    path_prefix: Any = None
    language: Any = None
    min_score: Any = None
    project: Any = None
    history: list[dict[str, str]] = field(default_factory=list)  # [{role, content}], oldest first

    @classmethod
    def from_json(cls, params: dict[str, Any]) -> AskRequest:
        """From JSON-RPC / CLI params (contract names: topK, pathPrefix, minScore)."""
        history = params.get("history") or []
        if not isinstance(history, list) or not all(
            isinstance(h, dict) and isinstance(h.get("content"), str) for h in history
        ):
            raise InputError("history", "must be a list of {role, content} objects")
        return cls(
            query=params.get("query", params.get("question")),
            top_k=params.get("topK"),
            path_prefix=params.get("pathPrefix"),
            language=params.get("language"),
            min_score=params.get("minScore"),
            project=params.get("project"),
            history=[
                {"role": str(h.get("role", "user")), "content": h["content"]} for h in history
            ],
        )

    def validated(self) -> SearchParams:
        """Query 1..500 chars, topK clamped 1..20 (default 5), pathPrefix safe,
        language lowercased <= 32, minScore finite (default 0.6, ask always filters)."""
        params = validate_search(
            self.query,
            self.top_k,
            self.path_prefix,
            self.language,
            self.min_score,
            project=self.project,
            mode="hybrid",
            default_min_score=DEFAULT_MIN_SCORE,
        )
        return params
