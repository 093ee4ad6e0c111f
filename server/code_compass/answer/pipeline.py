"""The `ask` pipeline: validate → retrieve → re-read → (refuse | answer) → verify → score.

Seeds: 000 (validation, minScore, scope caps, no evidence = no LLM, re-read, grounding
prompt), 001 (citations, coverage, suggestions, language), 002 (confidence, states,
blocking rules). docs/answers.md maps each rule to the code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from code_compass.answer.ambiguity import assess_ambiguity
from code_compass.answer.answer_log import AnswerDecisionLog, question_hash
from code_compass.answer.confidence import (
    RULE_FABRICATED,
    RULE_LLM_FAILED,
    RULE_NO_EVIDENCE,
    RULE_NO_LLM_CAP,
    RULE_UNKNOWN_SYMBOL,
    Assessment,
    assess,
)
from code_compass.answer.coverage import coverage_level, needs_suggestions
from code_compass.answer.extractive import extractive_answer, extractive_frame
from code_compass.answer.language import detect_language
from code_compass.answer.llm import LlmConfig, LlmError, LlmResult, complete
from code_compass.answer.plan import FixedPlan, RetrievalPlan, plan_depth
from code_compass.answer.prompt import build_prompt
from code_compass.answer.redact import Redactor
from code_compass.answer.request import AskRequest
from code_compass.answer.reread import CURRENT, PAGE, Dropped, Evidence, refresh
from code_compass.answer.result import Answer, Citation
from code_compass.answer.source import EvidenceSource
from code_compass.answer.suggestions import build_suggestions
from code_compass.answer.verify import Verification, identifiers, verify
from code_compass.constants import (
    EVIDENCE_MAX_CHARS,
    HISTORY_MAX_TURNS,
    MAX_CONTEXTS_PER_PROJECT_WIDE,
    MAX_TOP_K,
    MIN_TOP_K,
    NO_EVIDENCE_ANSWER,
)
from code_compass.records import SearchHit, SearchParams

ALL_PROJECTS = "*"


def retrieve(source: EvidenceSource, params: SearchParams, top_k: int) -> list[SearchHit]:
    """Hybrid search, then seed 000's filters: score >= minScore, per-project cap when
    several projects are searched, top_k overall."""
    hits = source.search(replace(params, top_k=top_k, mode="hybrid"))
    min_score = params.min_score if params.min_score is not None else 0.0
    hits = [h for h in hits if h.score >= min_score]
    hits.sort(key=lambda h: h.score, reverse=True)
    if params.project == ALL_PROJECTS:
        per: dict[str, int] = {}
        capped = []
        for h in hits:
            if per.get(h.project, 0) < MAX_CONTEXTS_PER_PROJECT_WIDE:
                per[h.project] = per.get(h.project, 0) + 1
                capped.append(h)
        hits = capped
    return hits[:top_k]


def named_symbols(question: str) -> list[str]:
    """Code symbols the question names: backticked, snake_case, camelCase, dotted, calls."""
    return identifiers(question)


def missing_symbols(
    named: list[str], source: EvidenceSource, evidences: list[Evidence]
) -> list[str]:
    texts = "\n".join(f"{e.hit.symbol}\n{e.text}" for e in evidences)
    missing = []
    for name in named:
        candidates = [name, name.rsplit(".", 1)[-1]]
        if any(c in texts for c in candidates):
            continue
        if any(source.symbol_exists(c) for c in dict.fromkeys(candidates)):
            continue
        missing.append(name)
    return missing


def ask(
    request: AskRequest,
    source: EvidenceSource,
    *,
    llm: LlmConfig | None = None,
    plan: RetrievalPlan | None = None,
    on_text: Callable[[str], None] | None = None,
    context_pack_text: str | None = None,
    log: AnswerDecisionLog | None = None,
    extra_hits: list[SearchHit] | None = None,
) -> Answer:
    """Answer one question from evidence. Raises InputError on invalid input (seed 000)."""
    started = time.monotonic()
    llm = llm or LlmConfig()
    params = request.validated()
    question = params.query
    plan = plan or FixedPlan(top_k=params.top_k)
    depth = plan_depth(plan)
    top_k = max(MIN_TOP_K, min(MAX_TOP_K, int(plan.top_k)))
    a = Assessment(
        applied=[
            f"minScore >= {params.min_score:g}" if params.min_score is not None else "no minScore",
            f"top {top_k}"
            + (
                f", at most {MAX_CONTEXTS_PER_PROJECT_WIDE} per project"
                if params.project == ALL_PROJECTS
                else ""
            ),
            "evidence re-read from the current text",
        ]
    )
    meta: dict[str, Any] = {"llmCalled": False, "model": None, "depth": depth}

    hits = retrieve(source, params, top_k)
    if extra_hits:  # the depth controller's context (e.g. what an earlier claim cited, D3)
        floor = params.min_score if params.min_score is not None else 0.0
        seen = {(h.project, h.path, h.start_line, h.end_line) for h in hits}
        for h in extra_hits:
            key = (h.project, h.path, h.start_line, h.end_line)
            if key not in seen and h.score >= floor and len(hits) < MAX_TOP_K:
                seen.add(key)
                hits.append(h)
    evidences, dropped = refresh(hits, source, max_chars=EVIDENCE_MAX_CHARS)
    moved = [e for e in evidences if e.status not in (CURRENT, PAGE)]
    if dropped or moved:
        parts = []
        if dropped:
            parts.append(
                f"{len(dropped)} evidence(s) dropped ("
                + "; ".join(f"{d.path}:{d.start_line}-{d.end_line} {d.reason}" for d in dropped)
                + ")"
            )
        if moved:
            parts.append(
                f"{len(moved)} evidence(s) re-located in edited files ("
                + ", ".join(
                    f"{e.id} {e.path}:{e.hit.start_line}->{e.start_line} {e.status}" for e in moved
                )
                + ")"
            )
        a.step_caveats.append("re-read: " + "; ".join(parts))

    named = named_symbols(question)
    missing = missing_symbols(named, source, evidences)
    coverage = coverage_level([e.score for e in evidences])
    q_lang = detect_language(question)
    redactor = Redactor()
    verification: Verification | None = None
    llm_result: LlmResult | None = None

    if not evidences:
        # Seed 000 layer 4: no context -> fixed answer, no LLM call.
        text = NO_EVIDENCE_ANSWER
        a.critical_failure = "retrieval: no evidence above minScore" + (
            f" ({len(dropped)} hit(s) dropped as stale)" if dropped else ""
        )
        a.blocking.append(RULE_NO_EVIDENCE)
        if missing:
            a.blocking.append(RULE_UNKNOWN_SYMBOL)
            a.extra_caveats.append(_missing_caveat(missing))
    elif missing:
        # Seed 002 "Entidade inexistente": the question is about something that is not there.
        text = (
            "Cannot answer from the indexed code: "
            + ", ".join(f"`{m}`" for m in missing)
            + " exists nowhere in the index (no symbol or text matches it)."
        )
        a.blocking.append(RULE_UNKNOWN_SYMBOL)
        a.extra_caveats.append(_missing_caveat(missing))
    else:
        amb = assess_ambiguity(question, named, evidences, params.path_prefix)
        a.ambiguity, a.ambiguity_note = amb.level, amb.note
        if coverage == "low":
            a.step_caveats.append("retrieval: low coverage (weak or single evidence)")
        if not llm.configured:
            text = extractive_answer(evidences)
            a.caps.append(RULE_NO_LLM_CAP)
            a.step_caveats.append(
                "answer: no LLM configured (set ANTHROPIC_API_KEY); extractive answer"
            )
        else:
            prompt = build_prompt(
                redactor(question),
                [replace(e, text=redactor(e.text)) for e in evidences],
                question_language=q_lang,
                history=[
                    {"role": h["role"], "content": redactor(h["content"])}
                    for h in request.history[-HISTORY_MAX_TURNS:]
                ],
                context_pack=redactor(context_pack_text) if context_pack_text else None,
                instructions=list(plan.instructions),
            )
            a.applied.append(f"secrets redacted before sending ({redactor.total})")
            meta.update(llmCalled=True, model=llm.model)
            try:
                llm_result = complete(llm, prompt.system, prompt.messages, on_text=on_text)
                text = llm_result.text
                meta["model"] = llm_result.model
                if llm_result.retries:
                    a.step_caveats.append(
                        f"llm: answered after {llm_result.retries} retr"
                        f"{'y' if llm_result.retries == 1 else 'ies'}"
                    )
            except LlmError as err:
                a.critical_failure = err.message
                a.blocking.append(RULE_LLM_FAILED)
                meta["retries"] = err.retries
                meta["error"] = err.message
                text = (
                    f"No answer: {err.message}. The evidence found is listed below; "
                    "try again later or check the API settings."
                )
        if llm_result is not None or not llm.configured:
            head, body, foot = extractive_frame(text) if not llm.configured else ("", text, "")
            verification = verify(body, evidences, question)
            text = "\n".join(part for part in (head, verification.text, foot) if part)
            a.applied.append("citations verified against the evidence sent")
            a.claims = verification.claims
            a.uncited_claims = len(verification.uncited_claims)
            a.wrong_language = verification.wrong_language
            a.removed_citations = len(verification.removed)
            a.unknown_identifiers = len(verification.unknown_identifiers)
            a.invented_paths = len(verification.invented_paths)
            flags = verification.flags()
            if flags:
                a.step_caveats.append("verification: " + "; ".join(flags))
            valid = {e.id for e in evidences}
            if any(c not in valid for c in verification.citations_used):
                a.blocking.append(RULE_FABRICATED)  # unreachable by construction; kept as a guard

    state, confidence = assess(a)
    suggestions: list[str] = []
    if needs_suggestions(coverage) or missing:
        suggestions = build_suggestions(question, params, source, kept=hits)
    by_id = {e.id: e for e in evidences}
    citations = (
        [
            Citation(i, by_id[i].path, by_id[i].start_line, by_id[i].end_line)
            for i in verification.citations_used
        ]
        if verification
        else []
    )
    took_ms = int((time.monotonic() - started) * 1000)
    meta.update(
        tookMs=took_ms,
        contextsUsed=len(evidences),
        dropped=[d.to_json() for d in dropped],
        redactions=redactor.total,
        citationsRemoved=list(verification.removed) if verification else [],
        flags=verification.flags() if verification else [],
        questionLanguage=q_lang,
        tokensIn=llm_result.input_tokens if llm_result else 0,
        tokensOut=llm_result.output_tokens if llm_result else 0,
    )
    if llm_result is not None:
        meta["retries"] = llm_result.retries
    answer = Answer(
        state=state,
        confidence=confidence,
        coverage=coverage,
        depth=depth,
        answer=text,
        citations=citations,
        evidences=evidences,
        suggestions=suggestions,
        meta=meta,
    )
    if log is not None:
        log.write(_log_record(question, params, answer, dropped))
    return answer


def _missing_caveat(missing: list[str]) -> str:
    return "not in the index: " + ", ".join(f"`{m}`" for m in missing)


def _log_record(
    question: str, params: SearchParams, answer: Answer, dropped: list[Dropped]
) -> dict[str, Any]:
    return {
        "questionHash": question_hash(question),
        "questionChars": len(question),
        "questionLanguage": answer.meta.get("questionLanguage"),
        "depth": answer.depth,
        "sources": sorted({e.hit.project for e in answer.evidences}),
        "filters": {
            "topK": params.top_k,
            "minScore": params.min_score,
            "pathPrefix": params.path_prefix,
            "language": params.language,
            "project": params.project,
        },
        "evidences": [
            {
                "id": e.id,
                "path": e.path,
                "lines": [e.start_line, e.end_line],
                "score": round(e.score, 4),
                "status": e.status,
            }
            for e in answer.evidences
        ],
        "dropped": len(dropped),
        "citations": answer.citations_used,
        "tokensIn": answer.meta.get("tokensIn", 0),
        "tokensOut": answer.meta.get("tokensOut", 0),
        "latencyMs": answer.meta.get("tookMs"),
        "llmCalled": answer.meta.get("llmCalled"),
        "model": answer.meta.get("model"),
        "coverage": answer.coverage,
        "state": answer.state,
        "confidence": answer.confidence.score,
        "rules": answer.confidence.rules,
        "redactions": answer.meta.get("redactions", 0),
    }
