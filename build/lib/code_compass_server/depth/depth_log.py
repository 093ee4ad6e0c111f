"""Depth decision log: one JSON line per decision, rotated (docs/rules.md: decision-log)."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from code_compass_server.constants import DECISION_LOG_BACKUPS, DECISION_LOG_MAX_BYTES
from code_compass_server.jsonl_log import RotatingJsonl


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    conversation_id: str
    message_id: str
    signals: list[str]
    depth: str
    query_profile: str | None
    sources: list[str]  # sections used, e.g. "semantic:8"
    tokens: int
    latency_ms: float
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class DepthDecisionLog:
    """Append-only JSON lines; at `max_bytes` the file becomes .1 (then .2, ...)."""

    def __init__(
        self,
        path: Path,
        max_bytes: int = DECISION_LOG_MAX_BYTES,
        backups: int = DECISION_LOG_BACKUPS,
    ) -> None:
        self._file = RotatingJsonl(path, max_bytes, backups)

    def write(self, record: DecisionRecord) -> None:
        self._file.append(record.to_json())
