"""The retrieval plan the pipeline follows (the depth controller, seed 004, supplies real ones)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class RetrievalPlan(Protocol):
    """Anything with these attributes works (the depth controller's plan does)."""

    @property
    def top_k(self) -> int: ...

    @property
    def instructions(self) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class FixedPlan:
    """Used when no plan is given: the request's own top_k, no extra instructions."""

    top_k: int
    instructions: list[str] = field(default_factory=list)
    depth: str = "fixed"


def plan_depth(plan: RetrievalPlan) -> str:
    """The plan's depth label (`D0`..`D4` from the controller, `fixed` otherwise)."""
    depth = getattr(plan, "depth", None)
    if depth is None:
        level = getattr(plan, "level", None)
        depth = level if level is not None else "fixed"
    return str(getattr(depth, "value", depth))
