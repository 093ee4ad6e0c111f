"""Score stage of `ask`: the stages' facts gathered into an Assessment, then rated.

Each stage reports what it applied and what went wrong; this module is the one place that
turns those reports into the confidence components, caveats and blocking rules.
"""

from __future__ import annotations

from code_compass_server.answer.confidence import (
    RULE_ABSENT_CAP,
    RULE_FABRICATED,
    RULE_FABRICATED_CAP,
    RULE_LLM_FAILED,
    RULE_NO_LLM_CAP,
    RULE_UNGROUNDED_CAP,
    Assessment,
    assess,
    grounded_share,
)
from code_compass_server.answer.coverage import LOW
from code_compass_server.answer.generation import Generation
from code_compass_server.answer.grounds import Refusal
from code_compass_server.answer.messages import Messages, messages_for
from code_compass_server.answer.result import Confidence
from code_compass_server.answer.sentence_check import SUPPORTED, WEAK, SentenceVerdict
from code_compass_server.answer.stages import Stages
from code_compass_server.answer.verify import Verification
from code_compass_server.constants import GROUNDED_MIN_SHARE


def assessment(stages: Stages) -> Assessment:
    """Caveats in the question's language (answer/messages.py); rule names stay English."""
    msg = messages_for(stages.grounds.language)
    a = Assessment(applied=list(stages.scope.applied))
    _caveat(a, stages.found.caveat(msg))
    grounds = stages.grounds
    if grounds.refusal is not None:
        _refused(a, grounds.refusal)
        return a
    a.ambiguity, a.ambiguity_note = grounds.ambiguity.level, grounds.ambiguity.note
    if grounds.coverage == LOW:
        a.step_caveats.append(msg.low_coverage)
    if grounds.absent:
        a.caps.append(RULE_ABSENT_CAP)
    _generated(a, stages.generation, msg)
    if stages.verification is not None:
        _verified(a, stages.verification, {e.id for e in stages.found.evidences}, msg)
        _grounded(a, stages.sentences)
    return a


def score(stages: Stages) -> tuple[str, Confidence]:
    """(state, confidence) of the answer these stages produced."""
    return assess(assessment(stages), messages_for(stages.grounds.language))


def _caveat(a: Assessment, caveat: str | None) -> None:
    if caveat:
        a.step_caveats.append(caveat)


def _refused(a: Assessment, refusal: Refusal) -> None:
    a.critical_failure = refusal.critical_failure
    a.blocking.extend(refusal.blocking)
    a.extra_caveats.extend(refusal.caveats)


def _generated(a: Assessment, generation: Generation, msg: Messages) -> None:
    a.applied.extend(generation.applied())
    _caveat(a, generation.caveat(msg))
    if generation.extractive:
        a.caps.append(RULE_NO_LLM_CAP)
    if generation.error is not None:
        a.critical_failure = generation.error.message
        a.blocking.append(RULE_LLM_FAILED)


def _grounded(a: Assessment, sentences: tuple[SentenceVerdict, ...]) -> None:
    """The grounding component's facts and its caps (docs/rules.md: grounding-share)."""
    a.sentences = len(sentences)
    a.supported_sentences = sum(s.verdict == SUPPORTED for s in sentences)
    a.weak_sentences = sum(s.verdict == WEAK for s in sentences)
    a.applied.append(f"sentences checked against what they cite ({a.sentences})")
    if a.sentences and grounded_share(a) < GROUNDED_MIN_SHARE:
        a.caps.append(RULE_UNGROUNDED_CAP)
    if a.removed_citations:
        a.caps.append(RULE_FABRICATED_CAP)


def _verified(a: Assessment, v: Verification, sent: set[str], msg: Messages) -> None:
    a.applied.append("citations verified against the evidence sent")
    a.claims = v.claims
    a.uncited_claims = len(v.uncited_claims)
    a.wrong_language = v.wrong_language
    a.removed_citations = len(v.removed)
    a.unknown_identifiers = len(v.unknown_identifiers)
    a.invented_paths = len(v.invented_paths)
    flags = v.flags(msg)
    if flags:
        a.step_caveats.append(msg.verification.format(flags="; ".join(flags)))
    if any(c not in sent for c in v.citations_used):
        a.blocking.append(RULE_FABRICATED)  # unreachable by construction; kept as a guard
