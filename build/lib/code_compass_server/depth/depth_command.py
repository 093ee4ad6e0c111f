"""`code-compass depth QUESTION [--history FILE.json] --json`: the decision alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from code_compass_server.depth.classifier import classify
from code_compass_server.depth.depth_records import Message
from code_compass_server.depth.retrieval_plan import plan_for
from code_compass_server.errors import InputError
from code_compass_server.validation import validate_query


def load_history(path: Path) -> list[Message]:
    """A JSON list of {role, content}; anything else is an InputError naming the problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError("history", f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            "history", f"{path} is not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from exc
    if not isinstance(data, list):
        raise InputError("history", "must be a JSON list of {role, content} messages")
    out: list[Message] = []
    for n, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise InputError("history", f"message {n} must be an object with a string 'content'")
        role = item.get("role", "user")
        if role not in ("user", "assistant"):
            raise InputError("history", f"message {n}: role must be 'user' or 'assistant'")
        out.append(Message(role, item["content"]))
    return out


def run_depth(question: str, history_path: Path | None) -> dict[str, Any]:
    """`{depth, signals, scores, latency_ms, plan}` for the question after the history."""
    q = validate_query(question)
    history = load_history(history_path) if history_path is not None else []
    decision = classify(q, history)
    out = decision.to_json()
    out["plan"] = plan_for(decision.depth).to_json()
    return out
