"""Per-sentence support of an answer: each claim-making sentence, where it is in the answer
text, the evidence it cites, and whether that evidence backs it.

Offline (docs/rules.md: sentence-verdicts). Three checks against the passages a sentence cites:
- terms: the share of the sentence's topic terms (stems of its words and identifier parts,
  stop words out) found in the cited passages: "supported" from SUPPORTED_SHARE, "weak" from
  WEAK_SHARE, else "unsupported";
- meaning: when the engine's embedding model is loaded, the cosine of the sentence and its
  closest cited passage moves the verdict one step: up for a paraphrase the terms miss
  (>= SEMANTIC_UP), down for a sentence about something else (< SEMANTIC_DOWN);
- facts: a number or a path the sentence states that the cited passages do not contain makes
  it "unsupported" whatever the rest says.
"uncited" when it cites nothing; a sentence whose citations were removed (they named evidence
never sent) carries them in `removedCitations`. The supported share is the confidence's
grounding component (answer/confidence.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from code_compass_server.answer.extractive import extractive_frame
from code_compass_server.answer.reread import Evidence
from code_compass_server.answer.similarity import Similarity
from code_compass_server.answer.verify import CITE_ID, LIST_MARKER, is_claim, path_known, paths
from code_compass_server.depth.terms import content_terms

SUPPORTED, WEAK, UNSUPPORTED, UNCITED = "supported", "weak", "unsupported", "uncited"
SUPPORTED_SHARE = 0.6  # of a sentence's topic terms found in what it cites
WEAK_SHARE = 0.3
SEMANTIC_UP = 0.6  # cosine (MiniLM) from which a paraphrase gains one step
SEMANTIC_DOWN = 0.25  # cosine under which a sentence is about something else: one step down
PASSAGE_CHARS = 1500  # of a cited passage given to the embedding model

_FENCE = re.compile(r"^\s*```")
# A sentence ends at . ! or ? followed by space, unless what follows is its own citation.
_BREAK = re.compile(r"(?<=[.!?])\s+(?!\[E\d+\])")
# Numbers a sentence states: two digits or more, or decimals; not parts of names or ids.
_NUMBER = re.compile(r"(?<![\w.:/-])\d+(?:\.\d+)?(?![\w/])")
_STEPS = (UNSUPPORTED, WEAK, SUPPORTED)


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    text: str
    start: int  # character offsets in the answer text, end exclusive
    end: int
    verdict: str  # supported | weak | unsupported | uncited
    citations: tuple[str, ...]
    support: float  # share of the sentence's topic terms found in what it cites
    similarity: float | None = None  # cosine with the closest cited passage, when measured
    mismatches: tuple[str, ...] = ()  # numbers / paths stated but not in what it cites
    removed_citations: tuple[str, ...] = field(default=())  # fabricated ids stripped from it

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "verdict": self.verdict,
            "citations": list(self.citations),
            "support": round(self.support, 2),
        }
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 2)
        if self.mismatches:
            out["mismatches"] = list(self.mismatches)
        if self.removed_citations:
            out["removedCitations"] = list(self.removed_citations)
        return out


def sentence_key(sentence: str) -> str:
    """A sentence with its citations and spacing normalised: the same before and after
    unknown citations are stripped from the answer."""
    bare = " ".join(re.sub(r"\[\s*E\d+(?:\s*[,;]\s*E\d+)*\s*\]", " ", sentence).split())
    return re.sub(r"\s+([.,;:!?])", r"\1", bare)


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


def removed_by_sentence(original: str, valid: set[str]) -> dict[str, tuple[str, ...]]:
    """For each sentence of the model's text citing unknown ids: its key -> those ids."""
    out: dict[str, tuple[str, ...]] = {}
    for start, end in sentence_spans(original):
        sentence = original[start:end]
        bad = tuple(dict.fromkeys(i for i in re.findall(r"E\d+", sentence) if i not in valid))
        if bad and re.search(r"\[\s*E\d+", sentence):
            out[sentence_key(sentence)] = bad
    return out


def stated_facts(sentence: str) -> tuple[list[str], list[str]]:
    """(numbers, paths) the sentence states, citations left out."""
    bare = CITE_ID.sub(" ", sentence)
    found_paths = paths(sentence)
    plain = bare
    for p in found_paths:
        plain = plain.replace(p, " ")
    numbers = [n for n in _NUMBER.findall(plain) if len(n) >= 2]
    return list(dict.fromkeys(numbers)), found_paths


def _number_in(number: str, text: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


def _spellings(number: str, sentence: str) -> list[str]:
    """How code may write a number the sentence states: "20%" is also 0.2 (or .2, 0.20)."""
    forms = [number]
    if re.search(rf"(?<![\d.]){re.escape(number)}\s*(?:%|percent|por cento)", sentence):
        fraction = f"{float(number) / 100:g}"
        forms += [fraction, fraction.removeprefix("0"), f"{float(number) / 100:.2f}"]
    return forms


def _mismatches(sentence: str, cited: list[Evidence]) -> tuple[str, ...]:
    numbers, found_paths = stated_facts(sentence)
    text = "\n".join(e.text for e in cited)
    missing = [
        n for n in numbers if not any(_number_in(form, text) for form in _spellings(n, sentence))
    ]
    missing += [p for p in found_paths if not path_known(p, cited)]
    return tuple(missing)


def _passage(e: Evidence) -> str:
    return f"{e.path} {e.hit.symbol}\n{e.text}"[:PASSAGE_CHARS]


def sentence_verdicts(
    text: str,
    evidences: list[Evidence],
    *,
    similarity: Similarity | None = None,
    removed: Mapping[str, tuple[str, ...]] | None = None,
) -> list[SentenceVerdict]:
    by_id = {e.id: e for e in evidences}
    removed = removed or {}
    rows: list[tuple[int, int, str, tuple[str, ...]]] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if is_claim(sentence):
            cited = tuple(dict.fromkeys(i for i in CITE_ID.findall(sentence) if i in by_id))
            rows.append((start, end, sentence, cited))
    cosines = _cosines(rows, by_id, similarity)
    out: list[SentenceVerdict] = []
    for (start, end, sentence, cited), cosine in zip(rows, cosines, strict=True):
        gone = removed.get(sentence_key(sentence), ())
        if not cited:
            out.append(SentenceVerdict(sentence, start, end, UNCITED, (), 0.0, None, (), gone))
            continue
        passages = [by_id[i] for i in cited]
        terms = content_terms(CITE_ID.sub(" ", sentence))
        backing: set[str] = set()
        for e in passages:
            backing |= content_terms(f"{e.path}\n{e.hit.symbol}\n{e.text}")
        share = len(terms & backing) / len(terms) if terms else 1.0
        step = 2 if share >= SUPPORTED_SHARE else 1 if share >= WEAK_SHARE else 0
        if cosine is not None:
            step += 1 if cosine >= SEMANTIC_UP else -1 if cosine < SEMANTIC_DOWN else 0
        wrong = _mismatches(sentence, passages)
        verdict = UNSUPPORTED if wrong else _STEPS[max(0, min(2, step))]
        out.append(
            SentenceVerdict(sentence, start, end, verdict, cited, share, cosine, wrong, gone)
        )
    return out


def _cosines(
    rows: list[tuple[int, int, str, tuple[str, ...]]],
    by_id: Mapping[str, Evidence],
    similarity: Similarity | None,
) -> list[float | None]:
    """Per row, the cosine with its closest cited passage (None: uncited, or no model)."""
    pairs = [(n, sentence, i) for n, (_, _, sentence, cited) in enumerate(rows) for i in cited]
    best: list[float | None] = [None] * len(rows)
    if similarity is None or not pairs:
        return best
    try:
        values = similarity(
            [CITE_ID.sub(" ", s) for _, s, _ in pairs], [_passage(by_id[i]) for _, _, i in pairs]
        )
    except Exception:  # a model failure leaves the lexical verdicts standing
        return best
    for (n, _, _), v in zip(pairs, values, strict=True):
        prev = best[n]
        best[n] = float(v) if prev is None else max(prev, float(v))
    return best


def judge_sentences(
    text: str,
    evidences: list[Evidence],
    *,
    extractive: bool = False,
    similarity: Similarity | None = None,
    removed: Mapping[str, tuple[str, ...]] | None = None,
) -> list[SentenceVerdict]:
    """The verdicts of an answer's sentences; an extractive answer's label and footer are its
    own framing, not claims: only its body is judged (offsets stay those of `text`)."""
    if not extractive:
        return sentence_verdicts(text, evidences, similarity=similarity, removed=removed)
    head, body, _ = extractive_frame(text)
    shift = len(head) + 1 if head else 0
    verdicts = sentence_verdicts(body, evidences, similarity=similarity, removed=removed)
    return [replace(v, start=v.start + shift, end=v.end + shift) for v in verdicts]
