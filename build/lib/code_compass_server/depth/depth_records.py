"""Records of the depth controller: messages, claims, turns and the decision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Depth = Literal["D0", "D1", "D2", "D3", "D4"]
DEPTHS: tuple[Depth, ...] = ("D0", "D1", "D2", "D3", "D4")


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation as the classifier sees it."""

    role: str  # "user" | "assistant"
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class Claim:
    """A statement made in the conversation (docs/rules.md: claims-and-contradictions).

    System claims are sentences of an answer that cite evidence ([E1]); `evidence` holds the
    cited hits as JSON (contract field names). User claims are the user's corrections (D3).
    """

    text: str
    source: str  # "system" | "user"
    turn_index: int
    evidence_ids: tuple[str, ...] = ()
    evidence: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "source": self.source,
            "turn": self.turn_index,
            "evidenceIds": list(self.evidence_ids),
            "evidence": [dict(e) for e in self.evidence],
        }


@dataclass(slots=True)
class Turn:
    """A stored turn; citations are the answer's citations (assistant turns only)."""

    role: str
    content: str
    citations: list[dict[str, Any]] | None = None
    claims: list[Claim] = field(default_factory=list)
    depth: str | None = None

    def message(self) -> Message:
        return Message(self.role, self.content)


@dataclass(frozen=True, slots=True)
class Signal:
    """A detected depth signal: a stable name, the level it points to, and its strength."""

    name: str
    level: Depth
    strength: float
    evidence: str = ""  # the matched text, for debugging and the decision log


@dataclass(frozen=True, slots=True)
class DepthDecision:
    depth: Depth
    signals: list[str]
    scores: dict[str, float]
    latency_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "signals": list(self.signals),
            "scores": {k: round(v, 3) for k, v in self.scores.items()},
            "latency_ms": round(self.latency_ms, 3),
        }
