"""Depth classification D0-D4 (docs/rules.md: depth-levels, depth-precedence, classify-fast).

Signals come from the wording (lexicons.py) and from the history (topic continuity, below).
Each level's score is its strongest signal; D0 always scores DEPTH_DIRECT_SCORE. The chosen
level is the first, in the seed's precedence D3 > D4 > D2 > D1 > D0, whose score is within
DEPTH_TIE_MARGIN of the best score: close calls go to the deeper level ("errar para cima").
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from code_compass_server.constants import (
    DEPTH_DIRECT_SCORE,
    DEPTH_EMBED_CONTINUITY_COS,
    DEPTH_MIN_SIGNAL,
    DEPTH_PRECEDENCE,
    DEPTH_RECENT_TURNS_FOR_TOPIC,
    DEPTH_TIE_MARGIN,
)
from code_compass_server.depth.depth_records import (
    DEPTHS,
    Depth,
    DepthDecision,
    Message,
    Signal,
    Turn,
)
from code_compass_server.depth.lexicons import lexical_signals
from code_compass_server.depth.terms import content_terms, normalize

# Signals that tie the question to the conversation: with any of them it is not a new topic.
_CONNECTING = frozenset(
    {
        "anaphora",
        "follow_up",
        "ellipsis",
        "topic_return",
        "disagreement",
        "correction",
        "temporal_reference",
    }
)


class TopicEmbedder(Protocol):
    def embed(self, texts: list[str]) -> Any: ...


def as_messages(history: Iterable[Message | Turn | Mapping[str, Any]]) -> list[Message]:
    """Accept Messages, stored Turns or {role, content} dicts; drop empty messages."""
    out: list[Message] = []
    for item in history:
        if isinstance(item, Message):
            msg = item
        elif isinstance(item, Turn):
            msg = item.message()
        else:
            msg = Message(str(item.get("role", "user")), str(item.get("content", "")))
        if msg.content.strip():
            out.append(msg)
    return out


def _cosine(embedder: TopicEmbedder, a: str, b: str) -> float:
    vecs = np.asarray(embedder.embed([a, b]), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1)
    if float(norms.min()) == 0.0:
        return 0.0
    return float(vecs[0] @ vecs[1] / (norms[0] * norms[1]))


def topic_signals(
    question: str,
    history: Sequence[Message],
    lexical: Sequence[Signal],
    embedder: TopicEmbedder | None = None,
) -> list[Signal]:
    """Continuity, return to an older topic, or shift, judged against the history.

    The recent window is D0's (last 2 messages): what the question leans on decides the level
    whose plan carries it. Overlap only with older turns is a return (D1, the episodic summary
    has it); no overlap, no anaphora and no follow-up marker is a topic shift (D4).
    """
    names = {s.name for s in lexical}
    q_terms = content_terms(_topic_text(question, lexical))
    recent = history[-DEPTH_RECENT_TURNS_FOR_TOPIC:]
    older = history[:-DEPTH_RECENT_TURNS_FOR_TOPIC]
    recent_terms: frozenset[str] = frozenset().union(*(content_terms(m.content) for m in recent))
    older_terms: frozenset[str] = frozenset().union(*(content_terms(m.content) for m in older))
    with_recent = q_terms & recent_terms
    with_older = (q_terms & older_terms) - recent_terms
    if "topic_shift" in names:
        if with_older and not with_recent:
            # "Different topic: back to the JWT check" - the topic is in episodic memory.
            return [Signal("topic_return", "D1", 1.0, ",".join(sorted(with_older)))]
        return []
    if not q_terms:
        # Nothing topical of its own ("Show me the line."): it can only mean the last topic.
        return [Signal("ellipsis", "D1", 0.7, "no content words")]
    if names & _CONNECTING:
        return []
    if with_recent:
        return [Signal("topic_continuity", "D0", DEPTH_DIRECT_SCORE, ",".join(sorted(with_recent)))]
    if with_older:
        return [Signal("topic_return", "D1", 0.8, ",".join(sorted(with_older)))]
    return [_embedded_continuity(question, recent, embedder)]


def _topic_text(question: str, lexical: Sequence[Signal]) -> str:
    """The question without a topic marker's own words ("different topic: ..."), which say
    nothing about which topic."""
    q_text = question
    for s in lexical:
        if s.name in ("topic_shift", "topic_return") and s.evidence:
            q_text = normalize(q_text).replace(s.evidence, " ")
    return q_text


def _embedded_continuity(
    question: str, recent: Sequence[Message], embedder: TopicEmbedder | None
) -> Signal:
    """No shared terms: continuity only if the embedder finds the question close enough to
    the recent turns, else a topic shift."""
    if embedder is not None and recent:
        cos = _cosine(embedder, question, "\n".join(m.content for m in recent))
        if cos >= DEPTH_EMBED_CONTINUITY_COS:
            return Signal("topic_continuity", "D0", DEPTH_DIRECT_SCORE, f"cos={cos:.2f}")
    return Signal("topic_shift", "D4", 0.8, "no connection with recent turns")


def choose(scores: Mapping[str, float]) -> Depth:
    """The first level in precedence order within the tie margin of the best score."""
    best = max(scores.values())
    for level in DEPTH_PRECEDENCE:
        score = scores.get(level, 0.0)
        if score >= DEPTH_MIN_SIGNAL and score >= best - DEPTH_TIE_MARGIN:
            return level  # type: ignore[return-value]
    return "D0"


def classify(
    question: str,
    history: Iterable[Message | Turn | Mapping[str, Any]] = (),
    *,
    embedder: TopicEmbedder | None = None,
) -> DepthDecision:
    """Choose the depth of `question` given the conversation before it.

    (docs/rules.md: depth-history.)
    """
    t0 = time.perf_counter()
    msgs = as_messages(history)
    norm = normalize(question)
    has_answer = any(m.role == "assistant" for m in msgs)
    found = lexical_signals(norm, question, has_history=bool(msgs), has_answer=has_answer)
    if msgs:
        found += topic_signals(question, msgs, found, embedder)
        if any(s.name == "topic_return" and s.strength >= 1.0 for s in found):
            found = [s for s in found if s.name != "topic_shift"]
    scores: dict[str, float] = {d: 0.0 for d in DEPTHS}
    scores["D0"] = DEPTH_DIRECT_SCORE
    for s in found:
        scores[s.level] = max(scores[s.level], s.strength)
    depth = choose(scores)
    names: list[str] = []
    if not any(s.level != "D0" for s in found):
        names.append("direct_question")
    for s in found:
        if s.name not in names:
            names.append(s.name)
    latency = (time.perf_counter() - t0) * 1000.0
    return DepthDecision(depth, names, scores, latency)
