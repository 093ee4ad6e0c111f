"""The `ask` pipeline: validate → plan (query builder, scope) → retrieve → re-read → prompt →
call → verify → score.

Each stage is a function of its own module, testable alone; `ask` only runs them in order.
docs/answers.md maps each rule to the code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from code_compass_server.answer.absent import absence_fact, needs_neighbour, neighbour_hits
from code_compass_server.answer.answer_log import AnswerDecisionLog, answer_record
from code_compass_server.answer.assembly import assemble
from code_compass_server.answer.generation import generate
from code_compass_server.answer.grounds import check_grounds
from code_compass_server.answer.judge import check_sentences
from code_compass_server.answer.llm import LlmConfig
from code_compass_server.answer.prompt import PromptInput
from code_compass_server.answer.query_rewrite import rewrite_query
from code_compass_server.answer.request import AskRequest
from code_compass_server.answer.reread import reread
from code_compass_server.answer.result import Answer
from code_compass_server.answer.retrieval import embedding_eta, retrieve
from code_compass_server.answer.scope import FixedPlan, plan_scope, whole_scope
from code_compass_server.answer.scoring import score
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.answer.stages import Stages
from code_compass_server.answer.suggestions import suggest
from code_compass_server.answer.verify import verify_answer
from code_compass_server.cancellation import cancellable, check_cancelled
from code_compass_server.records import SearchHit, SearchResult


def ask(
    request: AskRequest,
    source: EvidenceSource,
    *,
    llm: LlmConfig | None = None,
    plan: FixedPlan | None = None,
    on_text: Callable[[str], None] | None = None,
    context_pack_text: str | None = None,
    log: AnswerDecisionLog | None = None,
    extra_hits: list[SearchHit] | None = None,
    search_query: str | None = None,
) -> Answer:
    """Answer one question from evidence. Raises InputError on invalid input, before any
    search or call. `search_query` is what the one retrieval searches (the depth
    controller's, built from the conversation), default the question; `extra_hits` are
    evidence added without searching (the selection, what a disputed claim cited);
    `context_pack_text` goes to the prompt as context, redacted."""
    started = time.monotonic()
    params = whole_scope(request.validated(), source)
    llm = llm or LlmConfig()
    on_text = cancellable(on_text)  # cancellation: a cancelled ask stops its LLM stream
    rewrite = rewrite_query(search_query or params.query, llm)
    check_cancelled()
    searched = replace(params, query=search_query or params.query, rewrite=rewrite.query)
    scope = plan_scope(params, plan)
    hits = retrieve(source, searched, scope.top_k, extra_hits)
    check_cancelled()
    found = reread(hits, source)
    grounds = check_grounds(params, source, found, rewrite.query.language)
    # A near miss whose real neighbour (the definition of the owner it names) did not clear
    # minScore: the neighbour is added and cited, the member said absent, and no model is
    # called (below minScore nothing is sent: docs/rules.md, min-score gate).
    below_gate = False
    if needs_neighbour(found.evidences, grounds.absent, params.query, grounds.missing):
        extra = neighbour_hits(params.query, searched, source)
        near = reread([*hits, *extra], source) if extra else found
        near_grounds = check_grounds(params, source, near, rewrite.query.language)
        # Kept when it says something absent and is not the no-evidence refusal (an unknown
        # bare name is refused, citing its neighbour).
        if near_grounds.absent and (near_grounds.refusal is None or near.evidences):
            found, grounds, below_gate = near, near_grounds, True
    check_cancelled()
    given = PromptInput(
        params.query,
        found.evidences,
        grounds.language,
        request.history,
        context_pack_text,
        (*scope.instructions, *(absence_fact(a) for a in grounds.absent)),
        tuple(grounds.absent),
    )
    generation = generate(grounds.refusal, given, llm, on_text, offline=below_gate)
    check_cancelled()
    verification = (
        verify_answer(
            generation.text, found.evidences, params.query, extractive=generation.extractive
        )
        if generation.verifiable
        else None
    )
    sentences = check_sentences(generation, verification, found.evidences, source)
    partial = isinstance(hits, SearchResult) and hits.partial_index
    eta = embedding_eta(source) if partial else None
    stages = Stages(
        scope, found, grounds, generation, verification, rewrite, partial, eta, sentences
    )
    state, confidence = score(stages)
    suggestions = suggest(searched, source, grounds, kept=hits, query=rewrite.query)
    took_ms = int((time.monotonic() - started) * 1000)
    answer = assemble(
        stages, state=state, confidence=confidence, suggestions=suggestions, took_ms=took_ms
    )
    if log is not None:
        log.write(answer_record(params, answer, found.dropped))
    return answer
