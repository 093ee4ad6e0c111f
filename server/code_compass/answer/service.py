"""Ask as the front doors see it: depth decision → context pack → grounded pipeline → memory.

One instance per engine. It keeps conversations (bounded, per id), writes the depth decision log
(seed 004 REQ-CDC-019) and the answer decision log (issue 6 item 11) beside the index.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from code_compass.answer.answer_log import AnswerDecisionLog
from code_compass.answer.llm import LlmConfig
from code_compass.answer.pipeline import ask as run_pipeline
from code_compass.answer.request import AskRequest
from code_compass.answer.scope import FixedPlan
from code_compass.answer.source import EvidenceSource
from code_compass.depth import (
    ContextPack,
    ConversationStore,
    DecisionRecord,
    DepthDecision,
    DepthDecisionLog,
    RetrievalPlan,
    build_pack,
    classify,
    plan_for,
)
from code_compass.errors import InputError
from code_compass.index.textio import split_lines
from code_compass.records import SearchHit, SearchParams

MAX_CONVERSATION_ID = 128
MAX_SELECTION_CHARS = 20_000


class AskService:
    def __init__(self, log_dir: Path) -> None:
        self.conversations = ConversationStore()
        self.depth_log = DepthDecisionLog(log_dir / "depth-decisions.jsonl")
        self.answer_log = AnswerDecisionLog(log_dir / "answers.jsonl")

    def ask(
        self,
        source: EvidenceSource,
        params: dict[str, Any],
        llm: LlmConfig,
        *,
        on_text: Callable[[str], None] | None = None,
        workspace: str | None = None,
    ) -> dict[str, Any]:
        request = AskRequest.from_json(params)
        search_params = request.validated()  # seed-000 errors surface before any work
        conv_id = _conversation_id(params.get("conversationId"))
        active_file = _optional_str(params.get("activeFile"), "activeFile", 1000)
        selection, selected = _selection(
            params.get("selection"), active_file, source, search_params
        )

        t0 = time.perf_counter()
        history = self.conversations.turns(conv_id) if conv_id else []
        decision = classify(search_params.query, history)
        plan = plan_for(decision.depth)
        pack = build_pack(
            decision,
            plan,
            search_params.query,
            history,
            search=_pack_search(source, search_params),
            active_file=active_file,
            selection=selection,
            workspace=workspace,
        )
        cdc_ms = (time.perf_counter() - t0) * 1000
        answer = run_pipeline(
            request,
            source,
            llm=llm,
            plan=FixedPlan(
                _top_k(params, search_params, plan), list(plan.llm_instructions), decision.depth
            ),
            on_text=on_text,
            context_pack_text=pack.render(include_hits=False) if history or selection else None,
            log=self.answer_log,
            extra_hits=selected + [h for i in pack.items if i.section == "claims" and (h := i.hit)],
        )
        out = answer.to_json()
        out.update(
            depth=decision.depth, depthSignals=list(decision.signals), conversationId=conv_id
        )
        if conv_id:
            self.conversations.record_answer(
                conv_id,
                search_params.query,
                answer.answer,
                out.get("evidences", []),
                depth=decision.depth,
            )
        self.depth_log.write(_depth_record(conv_id, decision, plan, pack, cdc_ms))
        return out

    def forget(self, conv_id: str) -> None:
        self.conversations.drop(conv_id)


def _pack_search(
    source: EvidenceSource, params: SearchParams
) -> Callable[[str, int], list[SearchHit]]:
    """The context pack's own searches: the request's scope, no minScore."""

    def search(query: str, k: int) -> list[SearchHit]:
        return source.search(replace(params, query=query[:500], top_k=k, min_score=None))

    return search


def _top_k(raw: dict[str, Any], params: SearchParams, plan: RetrievalPlan) -> int:
    """The request's topK when it sent one, else the larger of the default and the plan's."""
    if raw.get("topK") is None:
        return max(int(params.top_k), plan.top_k)
    return int(params.top_k)


def _depth_record(
    conv_id: str | None,
    decision: DepthDecision,
    plan: RetrievalPlan,
    pack: ContextPack,
    latency_ms: float,
) -> DecisionRecord:
    return DecisionRecord(
        conversation_id=conv_id or "",
        message_id=uuid.uuid4().hex,
        signals=list(decision.signals),
        depth=decision.depth,
        query_profile=plan.query_profile,
        sources=[f"{s}:{sum(1 for i in pack.items if i.section == s)}" for s in pack.sections],
        tokens=pack.tokens,
        latency_ms=round(latency_ms, 2),
    )


def _selection(
    value: Any, active_file: str | None, source: EvidenceSource, params: SearchParams
) -> tuple[str | None, list[SearchHit]]:
    """The editor selection as text for the pack and, when it is a range of a workspace file,
    as evidence in its own right: the user is pointing at it (score 1)."""
    if value is None or value == "":
        return None, []
    if isinstance(value, str):
        return value[:MAX_SELECTION_CHARS], []
    text, first, last = _selection_range(value)
    if not active_file:
        return text, []
    return text, _selection_hit(source, params, active_file, first, last)


def _selection_range(value: Any) -> tuple[str, int, int]:
    """(text, first line, last line) of a {startLine, endLine, text} selection."""
    if not isinstance(value, dict):
        raise InputError("selection", "must be text or {startLine, endLine, text}")
    text = value.get("text")
    start, end = value.get("startLine"), value.get("endLine")
    if not isinstance(text, str) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in (start, end)
    ):
        raise InputError("selection", "needs startLine and endLine (1-based) and text")
    a, b = int(value["startLine"]), int(value["endLine"])
    return text[:MAX_SELECTION_CHARS], min(a, b), max(a, b)


def _selection_hit(
    source: EvidenceSource, params: SearchParams, path: str, first: int, last: int
) -> list[SearchHit]:
    """The selected lines of `path` as a hit, from the first project that has the file."""
    project = params.project if params.project not in (None, "*") else None
    for name in [project] if project else source.projects():
        current = source.read_text(name, path)
        if current is None:
            continue
        # Evidence is whole lines: a selection may start or end mid-line.
        lines = split_lines(current)[first - 1 : last]
        if not lines:
            return []
        whole = "\n".join(lines)
        hit = SearchHit(
            path=path, start_line=first, end_line=last, score=1.0,
            symbol="selection", kind="selection", language="", project=name, snippet=whole,
            text=whole,
        )  # fmt: skip
        return [hit]
    return []


def _conversation_id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_CONVERSATION_ID:
        raise InputError(
            "conversationId", f"must be a string of at most {MAX_CONVERSATION_ID} characters"
        )
    return value


def _optional_str(value: Any, name: str, limit: int) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(name, "must be a string")
    return value[:limit]
