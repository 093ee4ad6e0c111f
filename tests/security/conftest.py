"""Helpers for the security suites (the fake Messages API fixtures live in tests/conftest.py)."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic


def sent_text(fake: FakeAnthropic) -> str:
    """Everything the requests carried, JSON-decoded: system prompt and every message."""
    parts: list[str] = []
    for req in fake.requests:
        body = req.json
        system = body.get("system", "")
        parts.append(system if isinstance(system, str) else repr(system))
        for msg in body.get("messages", []):
            content = msg.get("content", "")
            parts.append(content if isinstance(content, str) else repr(content))
        parts.append(req.body)  # and the raw body, in case a field above is not all of it
    return "\n".join(parts)
