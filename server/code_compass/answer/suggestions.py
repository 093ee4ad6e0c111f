"""Three concrete suggestions drawn from what the index contains.

(docs/rules.md: low-coverage-suggestions.)

Order of preference: a spelling fix for a word of the question, "did you mean" a nearby
symbol/path (with where it lives), the closest match that minScore or a filter cut out,
a pathPrefix to narrow to where the material is. Generic advice only when the index is empty.
Written in the question's language (answer/messages.py); a Portuguese question's words are
matched against the index in their English rendering (the query builder's).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import replace

from code_compass.answer.coverage import needs_suggestions
from code_compass.answer.grounds import Grounds
from code_compass.answer.messages import EN, Messages, messages_for
from code_compass.answer.source import EvidenceSource
from code_compass.constants import NEARBY_TERMS_LIMIT, SUGGESTION_COUNT
from code_compass.records import RetrievalQuery, SearchHit, SearchParams

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{3,}")
_STOP = {
    "what",
    "where",
    "which",
    "does",
    "that",
    "this",
    "with",
    "from",
    "file",
    "function",
    "class",
    "method",
    "defined",
    "define",
    "there",
    "when",
    "have",
    "used",
    "uses",
}


def _is_path(term: str) -> bool:
    return "/" in term or bool(re.search(r"\.\w{1,5}$", term))


def _top_dir(path: str) -> str | None:
    head = path.split("/", 1)
    return head[0] + "/" if len(head) == 2 else None


def _probe(source: EvidenceSource, params: SearchParams) -> list[SearchHit]:
    """The same question without minScore, path or language filters: what is out there."""
    try:
        return source.search(
            replace(params, min_score=None, path_prefix=None, language=None, top_k=5)
        )
    except Exception:  # a suggestion must never break the answer
        return []


def _where(
    term: str, probe: list[SearchHit], source: EvidenceSource, params: SearchParams
) -> str | None:
    for h in probe:
        if h.symbol and (h.symbol == term or h.symbol.endswith("." + term)):
            return h.path
    try:
        hits = source.search(
            replace(params, query=term, min_score=None, path_prefix=None, language=None, top_k=3)
        )
    except Exception:
        return None
    for h in hits:
        if h.symbol and (h.symbol == term or h.symbol.endswith("." + term)):
            return h.path
    return None


class _Picks:
    """The suggestions so far: deduplicated, at most SUGGESTION_COUNT."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items and len(self.items) < SUGGESTION_COUNT:
            self.items.append(text)


def build_suggestions(
    question: str,
    params: SearchParams,
    source: EvidenceSource,
    *,
    kept: list[SearchHit] | None = None,
    msg: Messages = EN,
    translated: frozenset[str] = frozenset(),
) -> list[str]:
    """Exactly SUGGESTION_COUNT suggestions (deduplicated), concrete when the index has data.
    `question` is the text whose words are compared with the index's names; `translated`
    are its words the query builder supplied, never offered a spelling fix (the asker did
    not write them)."""
    picks = _Picks()
    try:
        terms = source.nearby_terms(question, NEARBY_TERMS_LIMIT)
    except Exception:  # a suggestion must never break the answer
        terms = []
    probe = _probe(source, params)
    _spelling(picks, question, terms, probe, source, params, msg, translated)
    _nearby(picks, terms, probe, source, params, msg)
    _filtered_out(picks, params, probe, msg)
    _narrower(picks, params, terms, (kept or []) + probe, msg)
    for generic in msg.generic:
        picks.add(generic)
    return picks.items


def _spelling(
    picks: _Picks,
    question: str,
    terms: list[str],
    probe: list[SearchHit],
    source: EvidenceSource,
    params: SearchParams,
    msg: Messages,
    translated: frozenset[str],
) -> None:
    """1. A question word close to, but not equal to, an indexed name."""
    lowered = {t.lower(): t for t in terms}
    for word in dict.fromkeys(_WORD.findall(question)):
        if word.lower() in _STOP or word.lower() in lowered or word in translated:
            continue
        close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.75)
        if close:
            fixed = lowered[close[0]]
            where = _where(fixed, probe, source, params)
            picks.add(msg.spelling.format(word=word, fixed=fixed, where=_at(where)))


def _nearby(
    picks: _Picks,
    terms: list[str],
    probe: list[SearchHit],
    source: EvidenceSource,
    params: SearchParams,
    msg: Messages,
) -> None:
    """2. Nearby symbols / paths the index does contain (leaving room for other kinds)."""
    for term in terms:
        if len(picks.items) >= 2:
            break
        if any(f"`{term}`" in s for s in picks.items):
            continue
        if _is_path(term):
            picks.add(msg.ask_about_path.format(term=term))
        else:
            where = _where(term, probe, source, params)
            picks.add(msg.did_you_mean.format(term=term, where=_at(where)))


def _at(where: str | None) -> str:
    return f" ({where})" if where else ""


def _filtered_out(
    picks: _Picks, params: SearchParams, probe: list[SearchHit], msg: Messages
) -> None:
    """3. What minScore, the language filter or pathPrefix cut out."""
    if not probe:
        return
    best = probe[0]
    if params.min_score is not None and best.score < params.min_score:
        floor = math.floor(best.score * 100) / 100
        picks.add(
            msg.closest_match.format(
                name=best.symbol or best.path,
                path=best.path,
                start=best.start_line,
                end=best.end_line,
                score=f"{best.score:.2f}",
                min_score=f"{params.min_score:g}",
                floor=f"{floor:.2f}",
            )
        )
    if params.language and all(h.language != params.language for h in probe):
        langs = ", ".join(sorted({h.language for h in probe if h.language}))
        picks.add(
            msg.drop_language.format(
                language=params.language, languages=langs or msg.other_languages
            )
        )
    if params.path_prefix and all(not h.path.startswith(params.path_prefix) for h in probe):
        picks.add(msg.remove_prefix.format(prefix=params.path_prefix, path=best.path))


def _narrower(
    picks: _Picks, params: SearchParams, terms: list[str], pool: list[SearchHit], msg: Messages
) -> None:
    """4. Narrow the scope to where the material is; name what is indexed nearby."""
    if not params.path_prefix:
        dirs = [d for d in (_top_dir(h.path) for h in pool) if d]
        if dirs:
            picks.add(msg.narrow.format(prefix=max(set(dirs), key=dirs.count)))
    for term in terms:
        if _is_path(term):
            picks.add(msg.ask_about_path.format(term=term))
        else:
            picks.add(msg.ask_by_name.format(term=term))
    for h in pool:
        if h.symbol:
            picks.add(msg.ask_about_symbol.format(symbol=h.symbol, path=h.path, line=h.start_line))
        picks.add(msg.open_passage.format(path=h.path, start=h.start_line, end=h.end_line))


def suggest(
    params: SearchParams,
    source: EvidenceSource,
    grounds: Grounds,
    kept: list[SearchHit],
    query: RetrievalQuery | None = None,
) -> list[str]:
    """Suggestions when coverage is low or none, or the question names a missing symbol; in
    the question's language, matched against the index by the query's English rendering."""
    if needs_suggestions(grounds.coverage) or grounds.missing:
        words = query.rewritten if query is not None else params.query
        added = frozenset(query.added) if query is not None else frozenset()
        msg = messages_for(grounds.language)
        return build_suggestions(words, params, source, kept=kept, msg=msg, translated=added)
    return []
