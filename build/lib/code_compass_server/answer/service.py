"""Ask as the front doors see it: depth decision → context pack → grounded pipeline → memory.

One instance per engine. It keeps conversations (bounded, per id), writes the depth decision log
and the answer decision log beside the index (docs/rules.md: decision-log).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from code_compass_server.answer.answer_log import AnswerDecisionLog
from code_compass_server.answer.llm import LlmConfig
from code_compass_server.answer.pipeline import ask as run_pipeline
from code_compass_server.answer.request import AskRequest
from code_compass_server.answer.scope import FixedPlan
from code_compass_server.answer.selection import selection_context
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.depth import (
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
from code_compass_server.depth.depth_query import depth_query
from code_compass_server.records import SearchParams


class AskService:
    def __init__(self, log_dir: Path) -> None:
        self.conversations = ConversationStore()
        self.depth_log = DepthDecisionLog(log_dir / "depth-decisions.jsonl")
        self.answer_log = AnswerDecisionLog(log_dir / "answers.jsonl")

    def ask(
        self,
        source: EvidenceSource,
        request: AskRequest,
        llm: LlmConfig,
        *,
        on_text: Callable[[str], None] | None = None,
        workspace: str | None = None,
    ) -> dict[str, Any]:
        search_params = request.validated()  # seed-000 errors surface before any work
        conv_id = request.conversation_id
        selected = selection_context(
            request.selection, request.active_file, source, search_params.project
        )

        t0 = time.perf_counter()
        history = self.conversations.turns(conv_id) if conv_id else []
        decision = classify(search_params.query, history)
        plan = plan_for(decision.depth)
        # The one retrieval of this ask searches what the depth controller makes of the
        # conversation (docs/rules.md: retrieval-plan); the pack itself searches nothing.
        query = depth_query(
            decision.depth,
            search_params.query,
            history,
            extra_terms=selected.terms if selected else (),
        )
        pack = build_pack(
            decision,
            plan,
            search_params.query,
            history,
            search=None,
            active_file=request.active_file,
            selection=selected.text if selected else None,
            workspace=workspace,
            selection_where=selected.where if selected else None,
        )
        cdc_ms = (time.perf_counter() - t0) * 1000
        pinned = [selected.hit] if selected and selected.hit else []
        answer = run_pipeline(
            request,
            source,
            llm=llm,
            plan=FixedPlan(
                _top_k(request, search_params, plan), list(plan.llm_instructions), decision.depth
            ),
            on_text=on_text,
            context_pack_text=pack.render(include_hits=False) if history or selected else None,
            log=self.answer_log,
            extra_hits=pinned + list(query.claim_hits),
            search_query=query.text,
        )
        out = answer.to_json()
        out.update(
            depth=decision.depth, depthSignals=list(decision.signals), conversationId=conv_id
        )
        out["meta"]["depthQuery"] = query.to_json()
        if selected is not None:
            out["selection"] = selected.to_json()
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


def _top_k(request: AskRequest, params: SearchParams, plan: RetrievalPlan) -> int:
    """The request's topK when it sent one, else the larger of the default and the plan's."""
    if request.top_k is None:
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
