"""Decision log (seed 004 REQ-CDC-019, :CDCDecision): one JSON line per decision, rotated."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from code_compass.constants import DECISION_LOG_BACKUPS, DECISION_LOG_MAX_BYTES


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
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = threading.Lock()

    def _rotate(self) -> None:
        for n in range(self.backups - 1, 0, -1):
            src = self.path.with_name(f"{self.path.name}.{n}")
            if src.exists():
                src.replace(self.path.with_name(f"{self.path.name}.{n + 1}"))
        if self.backups > 0:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()

    def write(self, record: DecisionRecord) -> None:
        line = json.dumps(record.to_json(), ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size + len(data) > self.max_bytes:
                self._rotate()
            with self.path.open("ab") as fh:
                fh.write(data)
