"""The answer record and its JSON shape (docs/protocol.md, `codeCompass/ask`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from code_compass_server.answer.absent import Absence
from code_compass_server.answer.actions import Action
from code_compass_server.answer.reread import Evidence
from code_compass_server.answer.sentence_check import SentenceVerdict


@dataclass(frozen=True, slots=True)
class Citation:
    id: str
    path: str
    start_line: int
    end_line: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
        }


@dataclass(slots=True)
class Confidence:
    """Score 0-100 from objective components, the rules applied, the caveats.

    (docs/rules.md: transparency.)
    """

    score: int
    components: dict[str, int]
    caveats: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "components": dict(self.components),
            "caveats": list(self.caveats),
            "rules": list(self.rules),
        }


@dataclass(slots=True)
class Answer:
    state: str  # OK | PARTIAL | AMBIGUOUS | FAIL
    confidence: Confidence
    coverage: str  # high | medium | low | none
    depth: str
    answer: str
    citations: list[Citation]
    evidences: list[Evidence]
    suggestions: list[str]
    meta: dict[str, Any]
    # Each claim-making sentence with its support verdict (answer/sentence_check.py).
    sentences: list[SentenceVerdict] = field(default_factory=list)
    # The suggestions as actions a client can perform (answer/suggestions.py); `suggestions`
    # holds their labels.
    actions: list[Action] = field(default_factory=list)
    searched: str | None = None  # what was searched and not found, in plain words
    # What the question names that the workspace lacks, each with its real neighbour.
    absent: list[Absence] = field(default_factory=list)

    @property
    def citations_used(self) -> list[str]:
        """The evidence ids the answer cites, in order (docs/rules.md: citations-used)."""
        return [c.id for c in self.citations]

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "confidence": self.confidence.to_json(),
            "coverage": self.coverage,
            "depth": self.depth,
            "answer": self.answer,
            "citations": [c.to_json() for c in self.citations],
            "citationsUsed": self.citations_used,
            "evidences": [e.to_json() for e in self.evidences],
            "suggestions": list(self.suggestions),
            "actions": [a.to_json() for a in self.actions],
            "searched": self.searched,
            "absent": [a.to_json() for a in self.absent],
            "sentences": [s.to_json() for s in self.sentences],
            "meta": dict(self.meta),
        }
