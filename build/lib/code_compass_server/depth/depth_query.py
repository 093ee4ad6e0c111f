"""The one query an ask searches, built from the conversation (docs/rules.md: retrieval-plan).

D0 and D4 search the question alone (D4 is a new anchor: nothing of the previous topic).
D1 and D2 carry the subject of the thread: the names the last questions used and the symbols
the last answer cited, so "and its tests?" after "where is parse_config defined?" searches
for the tests of parse_config. D3 adds the disputed claim, and the evidence that claim cited
comes along as hits (no search), so the correction and the claim are weighed side by side.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from code_compass_server.constants import DEPTH_EPISODIC_ITEM_CHARS, MAX_QUERY_CHARS
from code_compass_server.depth.conversation import extract_claims, strip_citations
from code_compass_server.depth.depth_records import Claim, Turn
from code_compass_server.depth.terms import content_terms, normalize
from code_compass_server.records import SearchHit

# Code-looking names: snake_case, camelCase / PascalCase, dotted, backticked.
_NAME = re.compile(
    r"`([^`\n]{2,60})`"
    r"|(?<![\w.])([A-Za-z_]\w*(?:_\w+)+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)"
)
_SUBJECT_NAMES = 3  # names carried from the thread
_CITED_SYMBOLS = 2  # symbols of the last answer's first citations


@dataclass(frozen=True, slots=True)
class DepthQuery:
    """What the ask searches, and what the conversation contributed to it."""

    text: str
    subject: tuple[str, ...] = ()  # D1/D2: names carried from the previous turns
    claim: str = ""  # D3: the disputed claim's text
    claim_hits: tuple[SearchHit, ...] = ()  # D3: the evidence that claim cited

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        if self.subject:
            out["subject"] = list(self.subject)
        if self.claim:
            out["claim"] = self.claim
        return out


def code_names(text: str) -> list[str]:
    """Identifiers a text names, in order, without repeats."""
    out = [(m.group(1) or m.group(2)).strip().removesuffix("()") for m in _NAME.finditer(text)]
    return list(dict.fromkeys(n for n in out if n))


def thread_subject(turns: Sequence[Turn]) -> tuple[str, ...]:
    """The names the thread is about: the newest user question that names code, plus the
    symbols the last answer cited first; else the last question's topic words."""
    names: list[str] = []
    for t in reversed(turns):
        if t.role == "user" and (found := code_names(t.content)):
            names.extend(found)
            break
    for t in reversed(turns):
        if t.role == "assistant":
            cited = [str(c.get("symbol") or "") for c in t.citations or []]
            names.extend(s.rsplit(".", 1)[-1] for s in cited[:_CITED_SYMBOLS] if s)
            break
    names = list(dict.fromkeys(names))[:_SUBJECT_NAMES]
    if names:
        return tuple(names)
    for t in reversed(turns):
        if t.role == "user":
            words = [w for w in normalize(t.content).split() if content_terms(w)]
            return tuple(words[:_SUBJECT_NAMES])
    return ()


def disputed_claim(turns: Sequence[Turn], correction: str) -> Claim | None:
    """The earlier system claim most related to the correction, newest on ties."""
    claims: list[Claim] = []
    for n, t in enumerate(turns):
        if t.role == "assistant":
            claims.extend(t.claims or extract_claims(t.content, [], n))
    if not claims:
        return None
    q = content_terms(correction)
    return max(claims, key=lambda c: (len(q & content_terms(c.text)), c.turn_index))


def claim_hits(claim: Claim) -> tuple[SearchHit, ...]:
    return tuple(hit_from_json(d) for d in claim.evidence)


def hit_from_json(d: Mapping[str, Any]) -> SearchHit:
    """A hit stored as answer JSON (contract field names) back as a SearchHit."""
    return SearchHit(
        path=str(d.get("path", "")),
        start_line=int(d.get("startLine", d.get("start_line", 0)) or 0),
        end_line=int(d.get("endLine", d.get("end_line", 0)) or 0),
        score=float(d.get("score", 0.0) or 0.0),
        symbol=str(d.get("symbol", "")),
        kind=str(d.get("kind", "")),
        language=str(d.get("language", "")),
        project=str(d.get("project", "")),
        snippet=str(d.get("snippet", "")),
    )


def depth_query(
    depth: str, question: str, turns: Sequence[Turn], *, extra_terms: Sequence[str] = ()
) -> DepthQuery:
    """The query for `question` at `depth`; `extra_terms` (the selection's names) follow it."""
    tail = " ".join(t for t in extra_terms if t.lower() not in question.lower())
    base = f"{question} {tail}".strip()
    if depth in ("D1", "D2"):
        subject = tuple(s for s in thread_subject(turns) if s.lower() not in base.lower())
        return DepthQuery(_cut(f"{base} {' '.join(subject)}"), subject=subject)
    if depth == "D3":
        claim = disputed_claim(turns, question)
        if claim is None:
            return DepthQuery(_cut(base))
        text = strip_citations(claim.text)[:DEPTH_EPISODIC_ITEM_CHARS]
        return DepthQuery(_cut(f"{base} {text}"), claim=text, claim_hits=claim_hits(claim))
    return DepthQuery(_cut(base))


def _cut(text: str) -> str:
    return text.strip()[:MAX_QUERY_CHARS]
