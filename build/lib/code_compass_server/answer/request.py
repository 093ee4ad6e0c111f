"""The ask request: one typed record from every front door (LSP, CLI, MCP) to the pipeline,
and its seed-000 validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.errors import InputError
from code_compass_server.records import SearchParams
from code_compass_server.validation import validate_search

MAX_CONVERSATION_ID = 128
MAX_SELECTION_CHARS = 20_000
MAX_ACTIVE_FILE_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Selection:
    """What the user selected: text, and its 1-based line range when it is a file range."""

    text: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def is_range(self) -> bool:
        return self.start_line is not None and self.end_line is not None


@dataclass(slots=True)
class AskRequest:
    """Ask input from a front door; `from_json` checks the shapes, `validated()` applies the
    search input rules (query, topK, pathPrefix, language, minScore, project, mode)."""

    query: Any
    top_k: Any = None
    path_prefix: Any = None
    language: Any = None
    min_score: Any = None
    project: Any = None
    history: list[dict[str, str]] = field(default_factory=list)  # [{role, content}], oldest first
    mode: Any = None  # hybrid | lexical | semantic; None = hybrid
    conversation_id: str | None = None
    active_file: str | None = None
    selection: Selection | None = None

    @classmethod
    def from_json(cls, params: dict[str, Any]) -> AskRequest:
        """From JSON-RPC / CLI / MCP params (contract names: topK, pathPrefix, minScore,
        conversationId, activeFile, selection)."""
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
            mode=params.get("mode"),
            conversation_id=_conversation_id(params.get("conversationId")),
            active_file=_optional_str(params.get("activeFile"), "activeFile"),
            selection=_selection(params.get("selection")),
        )

    def validated(self) -> SearchParams:
        """Query 1..500 chars, topK clamped 1..20 (default 5), pathPrefix safe,
        language lowercased <= 32, minScore finite (default 0.6, ask always filters),
        mode as sent (default hybrid)."""
        return validate_search(
            self.query,
            self.top_k,
            self.path_prefix,
            self.language,
            self.min_score,
            project=self.project,
            mode=self.mode,
            default_min_score=DEFAULT_MIN_SCORE,
        )


def _conversation_id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_CONVERSATION_ID:
        raise InputError(
            "conversationId", f"must be a string of at most {MAX_CONVERSATION_ID} characters"
        )
    return value


def _optional_str(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(name, "must be a string")
    return value[:MAX_ACTIVE_FILE_CHARS]


def _selection(value: Any) -> Selection | None:
    """Text, or {startLine, endLine, text} (1-based lines) of a range of the active file."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return Selection(value[:MAX_SELECTION_CHARS])
    if not isinstance(value, dict):
        raise InputError("selection", "must be text or {startLine, endLine, text}")
    text = value.get("text")
    start, end = value.get("startLine"), value.get("endLine")
    if not isinstance(text, str) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in (start, end)
    ):
        raise InputError("selection", "needs startLine and endLine (1-based) and text")
    a, b = sorted((int(value["startLine"]), int(value["endLine"])))
    # A selection that ends at the start of the next line does not include that line: the
    # evidence is exactly the lines the text spans.
    spanned = text.rstrip("\r\n").count("\n") + 1 if text.strip() else 1
    return Selection(text[:MAX_SELECTION_CHARS], a, min(b, a + spanned - 1))
