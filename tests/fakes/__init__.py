"""Test doubles that speak real protocols (used by several test areas)."""

from .fake_anthropic import FakeAnthropic, RecordedRequest, Reply, evidence_blocks

__all__ = ["FakeAnthropic", "RecordedRequest", "Reply", "evidence_blocks"]
