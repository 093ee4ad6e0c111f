"""Three concrete suggestions drawn from what the index contains (seed 001, low/none coverage).

Order of preference: a spelling fix for a word of the question, "did you mean" a nearby
symbol/path (with where it lives), the closest match that minScore or a filter cut out,
a pathPrefix to narrow to where the material is. Generic advice only when the index is empty.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import replace

from code_compass.answer.coverage import needs_suggestions
from code_compass.answer.grounds import Grounds
from code_compass.answer.source import EvidenceSource
from code_compass.constants import NEARBY_TERMS_LIMIT, SUGGESTION_COUNT
from code_compass.records import SearchHit, SearchParams

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
) -> list[str]:
    """Exactly SUGGESTION_COUNT suggestions (deduplicated), concrete when the index has data."""
    picks = _Picks()
    try:
        terms = source.nearby_terms(params.query, NEARBY_TERMS_LIMIT)
    except Exception:  # a suggestion must never break the answer
        terms = []
    probe = _probe(source, params)
    _spelling(picks, question, terms, probe, source, params)
    _nearby(picks, terms, probe, source, params)
    _filtered_out(picks, params, probe)
    _narrower(picks, params, terms, (kept or []) + probe)
    for generic in _GENERIC:
        picks.add(generic)
    return picks.items


def _spelling(
    picks: _Picks,
    question: str,
    terms: list[str],
    probe: list[SearchHit],
    source: EvidenceSource,
    params: SearchParams,
) -> None:
    """1. A question word close to, but not equal to, an indexed name."""
    lowered = {t.lower(): t for t in terms}
    for word in dict.fromkeys(_WORD.findall(question)):
        if word.lower() in _STOP or word.lower() in lowered:
            continue
        close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.75)
        if close:
            fixed = lowered[close[0]]
            where = _where(fixed, probe, source, params)
            picks.add(
                f"Check the spelling: `{word}` → `{fixed}`" + (f" ({where})" if where else "")
            )


def _nearby(
    picks: _Picks,
    terms: list[str],
    probe: list[SearchHit],
    source: EvidenceSource,
    params: SearchParams,
) -> None:
    """2. Nearby symbols / paths the index does contain (leaving room for other kinds)."""
    for term in terms:
        if len(picks.items) >= 2:
            break
        if any(f"`{term}`" in s for s in picks.items):
            continue
        if _is_path(term):
            picks.add(_ask_about_path(term))
        else:
            where = _where(term, probe, source, params)
            picks.add(f"Did you mean `{term}`" + (f" ({where})?" if where else "?"))


def _filtered_out(picks: _Picks, params: SearchParams, probe: list[SearchHit]) -> None:
    """3. What minScore, the language filter or pathPrefix cut out."""
    if not probe:
        return
    best = probe[0]
    if params.min_score is not None and best.score < params.min_score:
        floor = math.floor(best.score * 100) / 100
        picks.add(
            f"The closest match is `{best.symbol or best.path}` in {best.path}:"
            f"{best.start_line}-{best.end_line} (score {best.score:.2f}, below minScore "
            f"{params.min_score:g}); lower minScore to {floor:.2f} "
            "to include it"
        )
    if params.language and all(h.language != params.language for h in probe):
        langs = sorted({h.language for h in probe if h.language})
        picks.add(
            f"Drop the language filter '{params.language}': matches exist in "
            f"{', '.join(langs) or 'other'} files"
        )
    if params.path_prefix and all(not h.path.startswith(params.path_prefix) for h in probe):
        picks.add(
            f"Remove pathPrefix '{params.path_prefix}': the closest matches are in {best.path}"
        )


def _narrower(picks: _Picks, params: SearchParams, terms: list[str], pool: list[SearchHit]) -> None:
    """4. Narrow the scope to where the material is; name what is indexed nearby."""
    if not params.path_prefix:
        dirs = [d for d in (_top_dir(h.path) for h in pool) if d]
        if dirs:
            top = max(set(dirs), key=dirs.count)
            picks.add(f"Narrow with pathPrefix '{top}' (where the closest matches are)")
    for term in terms:
        if _is_path(term):
            picks.add(_ask_about_path(term))
        else:
            picks.add(f"Ask about `{term}` by name: it is defined in the index")
    for h in pool:
        if h.symbol:
            picks.add(
                f"Ask about `{h.symbol}` ({h.path}:{h.start_line}), the nearest indexed symbol"
            )
        picks.add(f"Open {h.path}:{h.start_line}-{h.end_line}, the nearest indexed passage")


def _ask_about_path(term: str) -> str:
    return f"Ask about `{term}`: it is in the index and close to your words"


# 5. Nothing in the index at all: say how to get material in.
_GENERIC = (
    "The index has no matching material yet: run `code-compass index` or wait for "
    "indexing to finish (see `code-compass status`)",
    "Name a function, class or file you expect to exist, e.g. in backticks",
    "Check that the workspace folder is the project you mean",
)


def suggest(
    params: SearchParams, source: EvidenceSource, grounds: Grounds, kept: list[SearchHit]
) -> list[str]:
    """Suggestions when coverage is low or none, or the question names a missing symbol."""
    if needs_suggestions(grounds.coverage) or grounds.missing:
        return build_suggestions(params.query, params, source, kept=kept)
    return []
