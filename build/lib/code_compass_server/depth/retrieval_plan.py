"""Retrieval plan per depth (docs/rules.md: retrieval-plan).

Seed sources mapped to code: working set = recent messages + the active file and selection;
episodic = an extractive summary of this conversation; semantic = hits of the hybrid index;
claims = cited statements of earlier answers and the evidence for and against them;
persona = the assistant's role and the workspace (the seed's user profile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from code_compass_server.constants import (
    DEPTH_RECENT_MESSAGES,
    DEPTH_TOKEN_BUDGET,
    DEPTH_TOKEN_SAFETY,
    DEPTH_TOP_K,
)
from code_compass_server.depth.depth_records import Depth

# Sections each level's pack carries, in render order (docs/rules.md: context-pack-sections).
SECTIONS: dict[str, tuple[str, ...]] = {
    "D0": ("persona", "working_set"),
    "D1": ("persona", "working_set", "episodic"),
    "D2": ("persona", "working_set", "episodic", "semantic"),
    "D3": ("persona", "working_set", "episodic", "semantic", "claims"),
    "D4": ("persona", "working_set", "semantic"),
}

# Each level's `strategy` and `query_profile` (what is searched: the question, question + thread,
# claims + correction; docs/rules.md: retrieval-plan).
STRATEGY = {
    "D0": "direct_answer",
    "D1": "continue_thread",
    "D2": "explain_with_context",
    "D3": "verify_and_reconcile",
    "D4": "fresh_start_with_context",
}
QUERY_PROFILE: dict[str, str | None] = {
    "D0": "question",  # the question alone, few hits: answer from what is in front of us
    "D1": "question+thread",  # question enriched with the last user question's terms
    "D2": "question+thread",
    "D3": "claims+correction",  # the earlier claims' text and the user's correction
    "D4": "question",  # a new anchor: nothing from the previous topic
}

INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "D0": ("Answer directly and briefly from the evidence; cite each statement with its [E#].",),
    "D1": (
        "Continue the current thread: resolve references such as 'it' or 'that' from the "
        "recent messages and the conversation summary.",
        "Do not repeat what was already explained; add what the new question asks.",
    ),
    "D2": (
        "Explain with context: say why and how, not only where, citing the evidence.",
        "For comparisons, set the items side by side; for lists, be exhaustive over the "
        "evidence and say if it may be incomplete.",
    ),
    "D3": (
        "The user disputes an earlier answer: identify the original claim first.",
        "Look for conflicting evidence: weigh the evidence for the claim against the "
        "evidence for the user's correction.",
        "Do not defend the earlier answer blindly; if the evidence supports the user, say "
        "the earlier claim was wrong and correct it; if it is unclear, say so.",
    ),
    "D4": (
        "The user changed topic: acknowledge it and do not carry assumptions from the "
        "previous topic.",
        "Keep only the persona context; answer from the new evidence (a new semantic anchor).",
    ),
}


@dataclass(frozen=True, slots=True)
class RetrievalPlan:
    depth: Depth
    sections: tuple[str, ...]
    recent_messages: int | None  # None = the full session
    top_k: int
    max_tokens: int  # the seed's budget
    strategy: str
    query_profile: str | None
    llm_instructions: tuple[str, ...]

    @property
    def effective_budget(self) -> int:
        """What the pack may use as we count it: the budget minus the tokenizer headroom."""
        return int(self.max_tokens * (1.0 - DEPTH_TOKEN_SAFETY))

    def to_json(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "sections": list(self.sections),
            "recentMessages": "full_session"
            if self.recent_messages is None
            else self.recent_messages,
            "topK": self.top_k,
            "maxTokens": self.max_tokens,
            "effectiveBudget": self.effective_budget,
            "strategy": self.strategy,
            "queryProfile": self.query_profile,
            "llmInstructions": list(self.llm_instructions),
        }


def plan_for(depth: Depth) -> RetrievalPlan:
    if depth not in SECTIONS:
        raise ValueError(f"unknown depth {depth!r}")
    return RetrievalPlan(
        depth=depth,
        sections=SECTIONS[depth],
        recent_messages=DEPTH_RECENT_MESSAGES[depth],
        top_k=DEPTH_TOP_K[depth],
        max_tokens=DEPTH_TOKEN_BUDGET[depth],
        strategy=STRATEGY[depth],
        query_profile=QUERY_PROFILE[depth],
        llm_instructions=INSTRUCTIONS[depth],
    )
