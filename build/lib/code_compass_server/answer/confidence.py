"""Confidence score, state and blocking rules.

(docs/rules.md: confidence-components, confidence-bands, blocking-rules.)

Components (see docs/answers.md for the full table):
- pipeline (0-40): every step clean 40; one step with a caveat 25; two or more 15;
  a critical step failed (no evidence, LLM error) 0.
- ambiguity (0-30): none 30; resolved implicitly (a clear winner, or near-equal hits
  the answer can cover) 15; unresolved (a named symbol with several near-equal
  definitions) 0.
- rules (0-20), grounding: 20 x the share of claim-making sentences the passages they cite
  support (answer/sentence_check.py; weak ones count half, uncited and unsupported none),
  minus 10 for an answer in another language than the question and 10 for invented files.
- citations (0-10): all valid 10; unknown identifiers 5; fabricated citations removed or
  invented paths 0.
Bands: >= 90 OK, 70-89 OK with a caveat, 50-69 PARTIAL, 30-49 AMBIGUOUS, < 30 FAIL.
Blocking rules force FAIL whatever the score; caps bound the state: an answer fewer than half
of whose sentences are supported, or that cited evidence never sent, is at most PARTIAL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from code_compass_server.answer.messages import EN, Messages
from code_compass_server.answer.result import Confidence
from code_compass_server.constants import (
    CONF_AMBIGUITY_MAX,
    CONF_AMBIGUOUS_MIN,
    CONF_MAPPING_MAX,
    CONF_OK_MIN,
    CONF_PARTIAL_MIN,
    CONF_PIPELINE_MAX,
    CONF_RULES_MAX,
    CONF_WARN_MIN,
)

OK, PARTIAL, AMBIGUOUS, FAIL = "OK", "PARTIAL", "AMBIGUOUS", "FAIL"
_ORDER = {FAIL: 0, AMBIGUOUS: 1, PARTIAL: 2, OK: 3}

AMBIGUITY_NONE, AMBIGUITY_RESOLVED, AMBIGUITY_UNRESOLVED = "none", "resolved", "unresolved"

# Blocking rules (docs/rules.md: blocking-rules).
RULE_NO_EVIDENCE = "blocked: no evidence above minScore (no LLM call)"
RULE_UNKNOWN_SYMBOL = "blocked: the question names a symbol that exists nowhere in the index"
RULE_LLM_FAILED = "blocked: pipeline violated (the LLM call failed)"
RULE_FABRICATED = "blocked: a citation to evidence never sent survived verification"
# Caps (not blocking).
RULE_NO_LLM_CAP = "cap: extractive answer (no LLM configured) is at most PARTIAL"
RULE_AMBIGUOUS_CAP = "cap: unresolved ambiguity is at most AMBIGUOUS"
RULE_UNGROUNDED_CAP = (
    "cap: under half of the answer's sentences are supported by what they cite: at most PARTIAL"
)
RULE_ABSENT_CAP = "cap: the question names something the workspace lacks: at most PARTIAL"
RULE_FABRICATED_CAP = "cap: a citation to evidence never sent was removed: at most PARTIAL"
_PARTIAL_CAPS = (RULE_ABSENT_CAP, RULE_NO_LLM_CAP, RULE_UNGROUNDED_CAP, RULE_FABRICATED_CAP)


@dataclass(slots=True)
class Assessment:
    """The objective facts the score is computed from; filled in by the pipeline."""

    step_caveats: list[str] = field(default_factory=list)  # one entry per step with a caveat
    critical_failure: str | None = None
    ambiguity: str = AMBIGUITY_NONE
    ambiguity_note: str = ""
    claims: int = 0
    uncited_claims: int = 0
    sentences: int = 0  # claim-making sentences judged (answer/sentence_check.py)
    supported_sentences: int = 0
    weak_sentences: int = 0
    wrong_language: bool = False
    removed_citations: int = 0
    unknown_identifiers: int = 0
    invented_paths: int = 0
    applied: list[str] = field(default_factory=list)  # pipeline rules that ran (transparency)
    blocking: list[str] = field(default_factory=list)
    caps: list[str] = field(default_factory=list)
    extra_caveats: list[str] = field(default_factory=list)


def pipeline_points(a: Assessment) -> int:
    if a.critical_failure:
        return 0
    if not a.step_caveats:
        return CONF_PIPELINE_MAX
    return 25 if len(a.step_caveats) == 1 else 15


def ambiguity_points(a: Assessment) -> int:
    return {AMBIGUITY_NONE: CONF_AMBIGUITY_MAX, AMBIGUITY_RESOLVED: 15}.get(a.ambiguity, 0)


def grounded_share(a: Assessment) -> float:
    """Share of judged sentences that are supported, weak ones counting half; 1.0 when none
    makes a claim."""
    if not a.sentences:
        return 1.0
    return (a.supported_sentences + 0.5 * a.weak_sentences) / a.sentences


def rules_points(a: Assessment) -> int:
    """Grounding: the supported share of the answer's sentences, less the other rules broken
    (the question's language; rule 1, "never invent files")."""
    if a.critical_failure:
        return 0
    points = round(CONF_RULES_MAX * grounded_share(a))
    broken = int(a.wrong_language) + int(bool(a.invented_paths))
    return max(0, points - 10 * broken)


def citation_points(a: Assessment) -> int:
    if a.critical_failure:
        return 0
    if a.removed_citations or a.invented_paths:
        return 0
    return 5 if a.unknown_identifiers else CONF_MAPPING_MAX


def band(score: int) -> str:
    if score >= CONF_WARN_MIN:
        return OK
    if score >= CONF_PARTIAL_MIN:
        return PARTIAL
    if score >= CONF_AMBIGUOUS_MIN:
        return AMBIGUOUS
    return FAIL


def assess(a: Assessment, msg: Messages = EN) -> tuple[str, Confidence]:
    components = {
        "pipeline": pipeline_points(a),
        "ambiguity": ambiguity_points(a),
        "rules": rules_points(a),
        "citations": citation_points(a),
    }
    score = sum(components.values())
    state = band(score)
    rules: list[str] = list(a.applied)
    caveats = list(a.step_caveats) + list(a.extra_caveats)
    if a.critical_failure:
        caveats.insert(0, a.critical_failure)
    if a.ambiguity_note:
        caveats.append(a.ambiguity_note)
    if state == OK and score < CONF_OK_MIN:
        caveats.append(msg.answer_with_care.format(score=score))
    if a.ambiguity == AMBIGUITY_UNRESOLVED and _ORDER[state] > _ORDER[AMBIGUOUS]:
        state = AMBIGUOUS
        rules.append(RULE_AMBIGUOUS_CAP)
    for cap in a.caps:
        rules.append(cap)
        if cap in _PARTIAL_CAPS and _ORDER[state] > _ORDER[PARTIAL]:
            state = PARTIAL
    if a.blocking:
        rules.extend(a.blocking)
        state = FAIL
    return state, Confidence(score=score, components=components, caveats=caveats, rules=rules)
