"""Plan stage of `ask`: how many hits to fetch, the depth label, the extra instructions.

The depth controller decides the plan (answer/service.py turns its decision into a
`FixedPlan`); the pipeline itself only follows one, so it does not import the controller.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from code_compass_server.answer.source import EvidenceSource
from code_compass_server.constants import MAX_CONTEXTS_PER_PROJECT_WIDE, MAX_TOP_K, MIN_TOP_K
from code_compass_server.records import SearchParams
from code_compass_server.validation import ALL_PROJECTS


@dataclass(frozen=True, slots=True)
class FixedPlan:
    """A plan fixed before the pipeline runs; without one, the request's own top_k."""

    top_k: int
    instructions: list[str] = field(default_factory=list)
    depth: str = "fixed"  # `D0`..`D4` from the depth controller


@dataclass(frozen=True, slots=True)
class Scope:
    """What the pipeline will fetch and tell the model, and the rules that implies."""

    top_k: int  # clamped to MIN_TOP_K..MAX_TOP_K
    depth: str
    instructions: tuple[str, ...]
    applied: tuple[str, ...]  # the retrieval rules, as reported in confidence.rules


def whole_scope(params: SearchParams, source: EvidenceSource) -> SearchParams:
    """No project named while several are open means all of them: the per-project cap applies
    (docs/rules.md: ask-per-project-cap), whichever front door left `project` unset."""
    if params.project is None and len(source.projects()) > 1:
        return replace(params, project=ALL_PROJECTS)
    return params


def plan_scope(params: SearchParams, plan: FixedPlan | None = None) -> Scope:
    plan = plan or FixedPlan(top_k=params.top_k)
    top_k = max(MIN_TOP_K, min(MAX_TOP_K, int(plan.top_k)))
    min_score = (
        f"minScore >= {params.min_score:g}" if params.min_score is not None else "no minScore"
    )
    per_project = (
        f", at most {MAX_CONTEXTS_PER_PROJECT_WIDE} per project"
        if params.project == ALL_PROJECTS
        else ""
    )
    return Scope(
        top_k=top_k,
        depth=str(plan.depth),
        instructions=tuple(plan.instructions),
        applied=(min_score, f"top {top_k}{per_project}", "evidence re-read from the current text"),
    )
