"""Per-sentence support of an answer: each claim-making sentence, where it is in the answer
text, the evidence it cites, and whether that evidence backs it.

Offline and lexical (docs/rules.md: sentence-verdicts): a sentence's topic terms (stems of its
words and identifier parts, stop words out) are looked up in the terms of the passages it
cites. "supported" when most are there, "weak" when some are, "unsupported" when few are,
"uncited" when it cites nothing. It reports; it does not change the state or the confidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from code_compass.answer.reread import Evidence
from code_compass.answer.verify import CITE_ID, LIST_MARKER, is_claim
from code_compass.depth.terms import content_terms

SUPPORTED_SHARE = 0.6  # of a sentence's topic terms found in what it cites
WEAK_SHARE = 0.3

_FENCE = re.compile(r"^\s*```")
# A sentence ends at . ! or ? followed by space, unless what follows is its own citation.
_BREAK = re.compile(r"(?<=[.!?])\s+(?!\[E\d+\])")


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    text: str
    start: int  # character offsets in the answer text, end exclusive
    end: int
    verdict: str  # supported | weak | unsupported | uncited
    citations: tuple[str, ...]
    support: float  # share of the sentence's topic terms found in what it cites

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "verdict": self.verdict,
            "citations": list(self.citations),
            "support": round(self.support, 2),
        }


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or list item outside code blocks and headings."""
    spans: list[tuple[int, int]] = []
    in_code = False
    offset = 0
    for line in text.splitlines(keepends=True):
        line_start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        if _FENCE.match(body):
            in_code = not in_code
            continue
        if in_code or not body.strip() or body.lstrip().startswith("#"):
            continue
        bullet = LIST_MARKER.match(body)
        pos = bullet.end() if bullet else len(body) - len(body.lstrip())
        for piece in _BREAK.split(body[pos:]):
            at = body.find(piece, pos)
            if piece.strip():
                spans.append((line_start + at, line_start + at + len(piece.rstrip())))
            pos = at + len(piece)
    return spans


def sentence_verdicts(text: str, evidences: list[Evidence]) -> list[SentenceVerdict]:
    by_id = {e.id: e for e in evidences}
    out: list[SentenceVerdict] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if not is_claim(sentence):
            continue
        cited = tuple(dict.fromkeys(i for i in CITE_ID.findall(sentence) if i in by_id))
        if not cited:
            out.append(SentenceVerdict(sentence, start, end, "uncited", (), 0.0))
            continue
        terms = content_terms(CITE_ID.sub(" ", sentence))
        backing: set[str] = set()
        for i in cited:
            e = by_id[i]
            backing |= content_terms(f"{e.path}\n{e.hit.symbol}\n{e.text}")
        share = len(terms & backing) / len(terms) if terms else 1.0
        verdict = (
            "supported"
            if share >= SUPPORTED_SHARE
            else "weak"
            if share >= WEAK_SHARE
            else "unsupported"
        )
        out.append(SentenceVerdict(sentence, start, end, verdict, cited, share))
    return out
