"""One JSON line per question (seed 004 decision log, seed 002 transparency).

The raw question is NOT written: logs outlive sessions and questions may carry code or
secrets. A hash (to group repeats) and the length are kept, plus everything needed to
audit the decision: depth, sources, evidence ids/paths/scores, tokens, latency, state.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any


def question_hash(question: str) -> str:
    return hashlib.blake2b(question.encode("utf-8"), digest_size=8).hexdigest()


class AnswerDecisionLog:
    """Appends records to `path` (JSON lines); also keeps the last records in memory."""

    def __init__(self, path: Path | None = None, *, keep: int = 100) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self._keep = keep
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        record = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
        line = json.dumps(record, ensure_ascii=False, sort_keys=False)
        with self._lock:
            self.records.append(record)
            del self.records[: -self._keep]
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
