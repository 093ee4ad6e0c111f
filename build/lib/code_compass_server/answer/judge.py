"""Verify stage, per sentence: the answer's sentences judged against what they cite."""

from __future__ import annotations

from code_compass_server.answer.extractive import extractive_frame
from code_compass_server.answer.generation import Generation
from code_compass_server.answer.reread import Evidence
from code_compass_server.answer.sentence_check import (
    SentenceVerdict,
    judge_sentences,
    removed_by_sentence,
)
from code_compass_server.answer.similarity import passage_similarity
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.answer.verify import Verification


def check_sentences(
    generation: Generation,
    verification: Verification | None,
    evidences: list[Evidence],
    source: EvidenceSource,
) -> tuple[SentenceVerdict, ...]:
    """Verify stage, per sentence: the verdicts of the answer as the user will see it (its
    unknown citations removed), marking the sentences that lost one. A refusal cites
    nothing and claims nothing: no sentences to judge."""
    if verification is None:
        return ()
    valid = {e.id for e in evidences}
    extractive = generation.extractive
    original = extractive_frame(generation.text)[1] if extractive else generation.text
    removed = removed_by_sentence(original, valid) if verification.removed else {}
    return tuple(
        judge_sentences(
            verification.text,
            evidences,
            extractive=extractive,
            similarity=passage_similarity(source),
            removed=removed,
        )
    )
