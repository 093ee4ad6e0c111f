"""Suggestions as actions a client can perform (docs/protocol.md: the answer's `actions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OPEN, SCOPE, ASK, INFO = "open", "scope", "ask", "info"


@dataclass(frozen=True, slots=True)
class Action:
    """A suggestion as something to do; `label` is its text in the question's language."""

    kind: str  # open | scope | ask | info
    label: str
    path: str | None = None  # open
    start_line: int | None = None
    end_line: int | None = None
    project: str | None = None
    scope: tuple[tuple[str, str | None], ...] = ()  # scope: ("pathPrefix"|"language", value)
    question: str | None = None  # ask

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "label": self.label}
        if self.kind == OPEN:
            out.update(path=self.path, startLine=self.start_line, endLine=self.end_line)
            if self.project:
                out["project"] = self.project
        elif self.kind == SCOPE:
            out.update(dict(self.scope))
        elif self.kind == ASK:
            out["question"] = self.question
        return out


@dataclass(frozen=True, slots=True)
class Suggestions:
    actions: list[Action]
    searched: str | None = None  # what was searched and not found, in plain words

    @property
    def labels(self) -> list[str]:
        return [a.label for a in self.actions]
