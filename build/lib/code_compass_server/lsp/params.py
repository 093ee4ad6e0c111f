"""JSON-RPC params -> validated records. Bad input -> JSON-RPC -32602 naming field and fix.

Custom methods receive their params as plain JSON (see `server.converter_factory`); the
seed-000 rules themselves live in `code_compass_server.validation`, shared with the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from code_compass_server.constants import DEFAULT_TOP_K
from code_compass_server.errors import InputError
from code_compass_server.records import SearchParams
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_project as project_param
from code_compass_server.validation import validate_query, validate_search


def invalid_params(err: InputError) -> JsonRpcInvalidParams:
    """-32602 whose message reads as a sentence a person can act on."""
    return JsonRpcInvalidParams(
        message=f"Invalid params: '{err.field}' {err.message}",
        data={"field": err.field, "reason": err.message},
    )


def as_object(raw: Any, method: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError("params", f"of {method} must be a JSON object such as {{'query': '…'}}")
    return raw


def search_params(raw: Any, settings: EngineSettings, projects: Iterable[str]) -> SearchParams:
    obj = as_object(raw, "codeCompass/search")
    project = project_param(obj.get("project"), projects)
    top_k = obj.get("topK")
    params = validate_search(
        obj.get("query"),
        settings.top_k if top_k is None else top_k,
        obj.get("pathPrefix"),
        obj.get("language"),
        obj.get("minScore"),
        mode=obj.get("mode"),
        project=project,
        default_min_score=None,  # search shows everything ranked; ask applies minScore
    )
    return params


def reindex_project(raw: Any, projects: Iterable[str]) -> str | None:
    obj = as_object(raw, "codeCompass/reindex")
    return project_param(obj.get("project"), projects)


@dataclass(frozen=True, slots=True)
class AskParams:
    """What `codeCompass/ask` hands to `Engine.ask` (as a dict) plus the stream id."""

    body: dict[str, Any]
    request_id: str | int | None  # echoed in codeCompass/answerDelta; default: JSON-RPC id


def ask_request(raw: Any, settings: EngineSettings, projects: Iterable[str]) -> AskParams:
    obj = as_object(raw, "codeCompass/ask")
    question = obj.get("question", obj.get("query"))
    if question is None:
        raise InputError("question", 'is missing; send {"question": "How does X work?"}')
    try:
        validate_query(question)
    except InputError as err:
        raise InputError("question", err.message) from None
    project = project_param(obj.get("project"), projects)
    top_k = obj.get("topK")
    min_score = obj.get("minScore")
    # Same seed-000 rules as search; ask always filters by minScore (default from settings).
    checked = validate_search(
        question,
        settings.top_k if top_k is None else top_k,
        obj.get("pathPrefix"),
        obj.get("language"),
        min_score,
        mode=obj.get("mode"),
        project=project,
        default_min_score=settings.min_score,
    )
    request_id = obj.get("requestId")
    bad_id = isinstance(request_id, bool) or not isinstance(request_id, str | int)
    if request_id is not None and bad_id:
        raise InputError("requestId", "must be a string or an integer")
    conversation = obj.get("conversationId")
    if conversation is not None and not isinstance(conversation, str):
        raise InputError("conversationId", "must be a string")
    body: dict[str, Any] = {
        "query": checked.query,
        "project": project,
        # Unset topK lets the depth plan choose (D2 wants more evidence than D0).
        "topK": checked.top_k if top_k is not None or settings.top_k != DEFAULT_TOP_K else None,
        "pathPrefix": checked.path_prefix,
        "language": checked.language,
        "minScore": checked.min_score,
        "mode": checked.mode,
        "conversationId": conversation,
    }
    for key in ("history", "activeFile", "selection"):
        if key in obj:
            body[key] = obj[key]
    return AskParams(body=body, request_id=request_id)
