"""Re-read stage of `ask`: evidence comes from the current text before it is shown or sent.

The index may be stale: the file may have been edited (saved or not) since it was indexed.
Each hit's snippet is checked against the current text at its lines; if it moved it is
re-located (the range shifts), if it was edited in place the current lines are used, and if
it vanished the hit is dropped and the drop is reported. What is shown is never stale.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from code_compass_server.answer.messages import EN, Messages, reason_text
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.constants import (
    EVIDENCE_EDITED_MIN_RATIO,
    EVIDENCE_MAX_CHARS,
    EVIDENCE_RELOCATE_MIN_MATCH,
)
from code_compass_server.index.textio import split_lines
from code_compass_server.records import SearchHit

# Why a hit's text is what it is.
CURRENT = "current"  # indexed text still at the same lines
MOVED = "moved"  # found elsewhere in the file; range shifted
EDITED = "edited"  # same place, text changed a little; current lines used
PAGE = "page"  # PDF page: not line-addressable, checked by containment


@dataclass(slots=True)
class Evidence:
    """One piece of evidence as sent to the model: id E1..En, current text, current range."""

    id: str
    hit: SearchHit
    text: str
    start_line: int
    end_line: int
    status: str = CURRENT

    @property
    def path(self) -> str:
        return self.hit.path

    @property
    def score(self) -> float:
        return self.hit.score

    def to_json(self) -> dict[str, Any]:
        data = self.hit.to_json()
        data.update(
            id=self.id,
            startLine=self.start_line,
            endLine=self.end_line,
            snippet=self.text,
            status=self.status,
        )
        if self.status in (MOVED, EDITED):
            data["indexedLines"] = [self.hit.start_line, self.hit.end_line]
        return data


@dataclass(frozen=True, slots=True)
class Dropped:
    path: str
    start_line: int
    end_line: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "reason": self.reason,
        }


def _norm(lines: list[str]) -> list[str]:
    return [ln.strip() for ln in lines]


def _match_share(snippet: list[str], current: list[str], at: int) -> float:
    """Share of the snippet's non-blank lines equal (stripped) at offset `at` in `current`."""
    window = current[at : at + len(snippet)]
    relevant = [(i, s) for i, s in enumerate(snippet) if s]
    if not relevant:
        return 0.0
    hits = sum(1 for i, s in relevant if i < len(window) and window[i] == s)
    return hits / len(relevant)


def _anchors(snippet: list[str]) -> list[int]:
    """Indexes of the snippet's most distinctive lines (long, not just punctuation)."""
    ranked = sorted(
        (i for i, s in enumerate(snippet) if len(s) >= 6 and any(c.isalnum() for c in s)),
        key=lambda i: -len(snippet[i]),
    )
    # Prefer early lines (signatures) but keep a couple of long ones as fall-backs.
    early = [i for i in range(min(3, len(snippet))) if i in ranked]
    return list(dict.fromkeys(early[:2] + ranked[:3]))


def locate(snippet_text: str, current_text: str, start_line: int) -> tuple[int, str] | None:
    """Where the snippet's text is now: (new 1-based start line, status) or None if gone."""
    snippet = _norm(split_lines(snippet_text))
    while snippet and not snippet[-1]:
        snippet.pop()
    current = _norm(split_lines(current_text))
    if not any(snippet):
        return None
    at = start_line - 1
    if _match_share(snippet, current, at) == 1.0:
        return start_line, CURRENT
    candidates: set[int] = set()
    for a in _anchors(snippet):
        for j, line in enumerate(current):
            if line == snippet[a] and j - a >= 0:
                candidates.add(j - a)
    scored = sorted(
        ((_match_share(snippet, current, c), -abs(c - at), c) for c in candidates), reverse=True
    )
    if scored and scored[0][0] >= EVIDENCE_RELOCATE_MIN_MATCH:
        return scored[0][2] + 1, (EDITED if scored[0][2] == at else MOVED)
    window = current[at : at + len(snippet)]
    if window:
        ratio = difflib.SequenceMatcher(None, "\n".join(snippet), "\n".join(window)).ratio()
        if ratio >= EVIDENCE_EDITED_MIN_RATIO:
            return start_line, EDITED
    return None


def refresh(
    hits: list[SearchHit], source: EvidenceSource, *, max_chars: int
) -> tuple[list[Evidence], list[Dropped]]:
    """Re-read every hit; ids E1..En are given to the survivors in rank order."""
    kept: list[Evidence] = []
    dropped: list[Dropped] = []
    cache: dict[tuple[str, str], str | None] = {}
    for hit in hits:
        key = (hit.project, hit.path)
        if key not in cache:
            cache[key] = source.read_text(hit.project, hit.path)
        current = cache[key]
        if current is None:
            dropped.append(Dropped(hit.path, hit.start_line, hit.end_line, "file no longer exists"))
            continue
        ev_id = f"E{len(kept) + 1}"
        if hit.kind == "page" or hit.path.lower().endswith(".pdf"):
            # PDF "lines" are page numbers; the extracted text is checked by containment.
            probe = next((s.strip() for s in hit.snippet.splitlines() if len(s.strip()) > 8), "")
            if probe and probe not in current:
                dropped.append(
                    Dropped(
                        hit.path, hit.start_line, hit.end_line, "text no longer in the document"
                    )
                )
                continue
            kept.append(
                Evidence(ev_id, hit, hit.snippet[:max_chars], hit.start_line, hit.end_line, PAGE)
            )
            continue
        found = locate(hit.text or hit.snippet, current, hit.start_line)
        if found is None:
            dropped.append(
                Dropped(hit.path, hit.start_line, hit.end_line, "snippet no longer in the file")
            )
            continue
        new_start, status = found
        length = hit.end_line - hit.start_line
        lines = split_lines(current)
        new_end = min(len(lines), new_start + length)
        text = "\n".join(lines[new_start - 1 : new_end])
        kept.append(Evidence(ev_id, hit, text[:max_chars], new_start, new_end, status))
    return kept, dropped


@dataclass(frozen=True, slots=True)
class Reread:
    """The hits as they read now: surviving evidence (E1..En) and what had to go."""

    evidences: list[Evidence]
    dropped: list[Dropped]

    def caveat(self, msg: Messages = EN) -> str | None:
        """The re-read step's caveat when anything was dropped or re-located, else None."""
        moved = [e for e in self.evidences if e.status not in (CURRENT, PAGE)]
        parts = []
        if self.dropped:
            items = "; ".join(
                f"{d.path}:{d.start_line}-{d.end_line} {reason_text(msg, d.reason)}"
                for d in self.dropped
            )
            parts.append(msg.reread_dropped.format(n=len(self.dropped), items=items))
        if moved:
            items = ", ".join(
                f"{e.id} {e.path}:{e.hit.start_line}->{e.start_line} {e.status}" for e in moved
            )
            parts.append(msg.reread_moved.format(n=len(moved), items=items))
        return msg.reread.format(parts="; ".join(parts)) if parts else None


def reread(hits: list[SearchHit], source: EvidenceSource) -> Reread:
    evidences, dropped = refresh(hits, source, max_chars=EVIDENCE_MAX_CHARS)
    return Reread(evidences, dropped)
