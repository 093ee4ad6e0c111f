"""The records one `ask` produces, stage by stage, for scoring and assembly to read."""

from __future__ import annotations

from dataclasses import dataclass

from code_compass_server.answer.generation import Generation
from code_compass_server.answer.grounds import Grounds
from code_compass_server.answer.query_rewrite import QueryRewrite
from code_compass_server.answer.reread import Reread
from code_compass_server.answer.scope import Scope
from code_compass_server.answer.sentence_check import SentenceVerdict
from code_compass_server.answer.verify import Verification


@dataclass(frozen=True, slots=True)
class Stages:
    scope: Scope  # plan
    found: Reread  # retrieve + re-read
    grounds: Grounds  # coverage, missing symbols, ambiguity, refusal
    generation: Generation  # prompt + call (or extractive, or refused)
    verification: Verification | None  # None when there was no answer to check
    rewrite: QueryRewrite | None = None  # plan: the question as retrieval read it
    partial_index: bool = False  # retrieve: some project searched is still being embedded
    embed_eta_s: float | None = None  # its embedding's estimated seconds to go, when known
    sentences: tuple[SentenceVerdict, ...] = ()  # verify: each claim-making sentence's support
