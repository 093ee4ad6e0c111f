"""One JSON line per question (docs/rules.md: decision-log, transparency).

The raw question is NOT written: logs outlive sessions and questions may carry code or
secrets. A hash (to group repeats) and the length are kept, plus everything needed to
audit the decision: depth, sources, evidence ids/paths/scores, tokens, latency, state.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from code_compass_server.answer.reread import Dropped
from code_compass_server.answer.result import Answer
from code_compass_server.jsonl_log import RotatingJsonl
from code_compass_server.records import SearchParams


def question_hash(question: str) -> str:
    return hashlib.blake2b(question.encode("utf-8"), digest_size=8).hexdigest()


class AnswerDecisionLog:
    """Appends records to `path` (JSON lines, rotated by size); also keeps the last records in
    memory."""

    def __init__(self, path: Path | None = None, *, keep: int = 100) -> None:
        self.path = path
        self._file = RotatingJsonl(path) if path is not None else None
        self.records: list[dict[str, Any]] = []
        self._keep = keep
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        record = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
        with self._lock:
            self.records.append(record)
            del self.records[: -self._keep]
            if self._file is not None:
                self._file.append(record)


def answer_record(params: SearchParams, answer: Answer, dropped: list[Dropped]) -> dict[str, Any]:
    """The log line for one answer: no raw question, everything needed to audit it."""
    question = params.query
    return {
        "questionHash": question_hash(question),
        "questionChars": len(question),
        "questionLanguage": answer.meta.get("questionLanguage"),
        "depth": answer.depth,
        "sources": sorted({e.hit.project for e in answer.evidences}),
        "filters": {
            "topK": params.top_k,
            "minScore": params.min_score,
            "pathPrefix": params.path_prefix,
            "language": params.language,
            "project": params.project,
        },
        "evidences": [
            {
                "id": e.id,
                "path": e.path,
                "lines": [e.start_line, e.end_line],
                "score": round(e.score, 4),
                "status": e.status,
            }
            for e in answer.evidences
        ],
        "dropped": len(dropped),
        "citations": answer.citations_used,
        "tokensIn": answer.meta.get("tokensIn", 0),
        "tokensOut": answer.meta.get("tokensOut", 0),
        "latencyMs": answer.meta.get("tookMs"),
        "llmCalled": answer.meta.get("llmCalled"),
        "model": answer.meta.get("model"),
        "coverage": answer.coverage,
        "state": answer.state,
        "confidence": answer.confidence.score,
        "rules": answer.confidence.rules,
        "redactions": answer.meta.get("redactions", 0),
    }
