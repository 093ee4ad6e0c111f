"""Assemble stage of `ask`: the stages' records become the Answer (and its `meta`)."""

from __future__ import annotations

from typing import Any

from code_compass_server.answer.actions import Suggestions
from code_compass_server.answer.reread import Evidence
from code_compass_server.answer.result import Answer, Citation, Confidence
from code_compass_server.answer.stages import Stages
from code_compass_server.answer.verify import Verification


def citations(verification: Verification | None, evidences: list[Evidence]) -> list[Citation]:
    """The cited evidence's current ranges, in the order the answer cites them."""
    if verification is None:
        return []
    by_id = {e.id: e for e in evidences}
    return [
        Citation(i, by_id[i].path, by_id[i].start_line, by_id[i].end_line)
        for i in verification.citations_used
    ]


def answer_meta(stages: Stages, took_ms: int) -> dict[str, Any]:
    """The answer's `meta` object; its keys keep the order clients have always seen."""
    generation, verification = stages.generation, stages.verification
    meta: dict[str, Any] = {
        "llmCalled": generation.llm_called,
        "model": generation.model,
        "depth": stages.scope.depth,
    }
    if generation.error is not None:
        meta["retries"] = generation.error.retries
        meta["error"] = generation.error.message
    result = generation.result
    meta.update(
        tookMs=took_ms,
        contextsUsed=len(stages.found.evidences),
        dropped=[d.to_json() for d in stages.found.dropped],
        redactions=generation.redactions,
        citationsRemoved=list(verification.removed) if verification else [],
        flags=verification.flags() if verification else [],
        questionLanguage=stages.grounds.language,
        tokensIn=result.input_tokens if result else 0,
        tokensOut=result.output_tokens if result else 0,
    )
    if result is not None:
        meta["retries"] = result.retries
    if stages.rewrite is not None:
        meta["query"] = stages.rewrite.to_json()
    meta["partialIndex"] = stages.partial_index
    if stages.partial_index and stages.embed_eta_s is not None:
        meta["embedEtaS"] = round(stages.embed_eta_s, 1)
    return meta


def assemble(
    stages: Stages,
    *,
    state: str,
    confidence: Confidence,
    suggestions: Suggestions,
    took_ms: int,
) -> Answer:
    verification = stages.verification
    text = verification.text if verification else stages.generation.text
    return Answer(
        state=state,
        confidence=confidence,
        coverage=stages.grounds.coverage,
        depth=stages.scope.depth,
        answer=text,
        citations=citations(verification, stages.found.evidences),
        evidences=stages.found.evidences,
        suggestions=suggestions.labels,
        meta=answer_meta(stages, took_ms),
        sentences=list(stages.sentences),
        actions=list(suggestions.actions),
        searched=suggestions.searched,
        absent=list(stages.grounds.absent),
    )
