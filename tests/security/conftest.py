"""The fake Messages API and an engine over a workspace, for the security suites."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass.answer import LlmConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `fakes` importable
from fakes.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The SDK finds the fake through ANTHROPIC_BASE_URL, as in production."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
        yield fake


@pytest.fixture
def llm() -> LlmConfig:
    return LlmConfig(model="claude-test", max_retries=1, backoff_base_s=0.01, timeout_s=10.0)


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
