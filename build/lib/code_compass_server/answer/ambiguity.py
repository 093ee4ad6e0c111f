"""Ambiguity signals for the confidence score (docs/rules.md: ambiguity).

Ambiguous = the same name is defined in several files among the evidence: either a name the
question mentions (`parse` defined in two modules), or the same qualified symbol at the top
of the ranking. It is resolved implicitly when one definition clearly wins on score or the
request's pathPrefix / the question's words pick a file; otherwise it is unresolved.
"""

from __future__ import annotations

from dataclasses import dataclass

from code_compass_server.answer.confidence import (
    AMBIGUITY_NONE,
    AMBIGUITY_RESOLVED,
    AMBIGUITY_UNRESOLVED,
)
from code_compass_server.answer.messages import EN, Messages
from code_compass_server.answer.reread import Evidence
from code_compass_server.constants import AMBIGUITY_CLEAR_MARGIN

DEF_KINDS = {"function", "method", "class", "interface", "struct", "enum", "type", "trait"}


@dataclass(frozen=True, slots=True)
class AmbiguityResult:
    level: str
    note: str = ""


def _bare(symbol: str) -> str:
    return symbol.rsplit(".", 1)[-1]


def assess_ambiguity(
    question: str,
    named: list[str],
    evidences: list[Evidence],
    path_prefix: str | None,
    msg: Messages = EN,
) -> AmbiguityResult:
    """The worst ambiguity among the names: the first unresolved one, else the first
    resolved one, else none."""
    worst = AmbiguityResult(AMBIGUITY_NONE)
    for name, evs in _definitions(named, evidences).items():
        found = _judge(name, evs, question, path_prefix, msg)
        if found is None:
            continue
        if found.level == AMBIGUITY_UNRESOLVED:
            return found
        if worst.level == AMBIGUITY_NONE:
            worst = found
    return worst


def _definitions(named: list[str], evidences: list[Evidence]) -> dict[str, list[Evidence]]:
    """Definitions among the evidence, grouped by name: the names the question mentions,
    and the qualified symbols of the top three hits."""
    groups: dict[str, list[Evidence]] = {}
    bare_named = {_bare(n) for n in named}
    for i, ev in enumerate(evidences):
        sym = ev.hit.symbol
        if not sym or ev.hit.kind not in DEF_KINDS:
            continue
        if _bare(sym) in bare_named:
            groups.setdefault(_bare(sym), []).append(ev)
        elif i < 3:
            groups.setdefault(sym, []).append(ev)
    return groups


def _judge(
    name: str, evs: list[Evidence], question: str, path_prefix: str | None, msg: Messages
) -> AmbiguityResult | None:
    """None when `name` is defined in one file only; otherwise resolved or unresolved."""
    by_path: dict[str, Evidence] = {}
    for ev in evs:  # best per file (evidences are in rank order)
        by_path.setdefault(ev.path, ev)
    if len(by_path) < 2:
        return None
    ranked = sorted(by_path.values(), key=lambda e: e.score, reverse=True)
    where = ", ".join(f"{e.path}:{e.start_line} ({e.score:.2f})" for e in ranked[:3])
    picked = bool(path_prefix) or any(e.path in question for e in ranked)
    if picked or ranked[0].score - ranked[1].score >= AMBIGUITY_CLEAR_MARGIN:
        note = msg.ambiguity_resolved.format(
            name=name, n=len(by_path), where=where, best=ranked[0].path
        )
        return AmbiguityResult(AMBIGUITY_RESOLVED, note)
    note = msg.ambiguity_unresolved.format(name=name, n=len(by_path), where=where)
    return AmbiguityResult(AMBIGUITY_UNRESOLVED, note)
