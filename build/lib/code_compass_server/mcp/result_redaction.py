"""Secrets masked in every MCP tool result (#32; docs/rules.md: redact-before-llm).

What a tool returns goes straight into an agent's model, so the same redaction as before the
LLM applies here, at the one boundary every tool result crosses: every string of the
structured content and the text the model reads. Keys and numbers are left as they are.
"""

from __future__ import annotations

import json
import re
from typing import Any

from code_compass_server.answer.redact import Redactor
from code_compass_server.mcp.calls import ToolOutput


def _walk(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {key: _walk(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, redactor) for item in value]
    return value


def redact_output(out: ToolOutput) -> ToolOutput:
    """The result with every secret-looking value replaced by [REDACTED]."""
    redactor = Redactor()
    data = _walk(out.data, redactor)
    try:
        # JSON text escapes quotes (`key = \"value\"`), which hides assignments from the
        # patterns: redact its decoded strings and encode it again.
        text = json.dumps(_walk(json.loads(out.text), redactor), ensure_ascii=False)
    except ValueError:
        text = _redact_numbered(out.text, redactor)
    return ToolOutput(data, text)


_NUMBERED = re.compile(r"^( *\d+\| )(.*)$")


def _redact_numbered(text: str, redactor: Redactor) -> str:
    """open_file's "head, then `  9| line`" text: the numbers would split a sentence that
    wraps ("the password for the / 9| dashboard is X"), so the lines are redacted together
    without them, then numbered again."""
    head, *lines = text.split("\n")
    found = [_NUMBERED.match(line) for line in lines]
    if not lines or any(m is None for m in found):
        return redactor.redact(text)
    prefixes = [m.group(1) for m in found if m is not None]
    body = redactor.redact("\n".join(m.group(2) for m in found if m is not None)).split("\n")
    if len(body) != len(lines):  # a multi-line key became one mask: keep numbers honest
        return redactor.redact(text)
    return "\n".join([redactor.redact(head), *(p + b for p, b in zip(prefixes, body, strict=True))])
