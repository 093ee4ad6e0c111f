"""Three suggestions that are actions, drawn from what the index contains, and what was searched.

(docs/rules.md: low-coverage-suggestions.)

Each suggestion is an `Action` a client can perform: open a location ("open"), ask again with
another scope ("scope": a folder or a language, or none), ask a question that uses names that
exist ("ask"). Order of preference: a spelling fix of a code name the question used that the
index lacks, the closest match to open, what a filter cut out, where the material is (folder,
language), names that share words with the question. No guesses between unrelated words: a
spelling fix keeps the name's first letter and nearly all of its letters; a nearby name must
share a word with the question. Generic advice ("info") fills the rest; "nothing indexed
shares these words" (or, while indexing runs, "not finished") only when nothing was found.
Written in the question's language (answer/messages.py); a Portuguese question's words are
matched against the index in their English rendering (the query builder's).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import replace

from code_compass_server.answer.actions import ASK, INFO, OPEN, SCOPE, Action, Suggestions
from code_compass_server.answer.coverage import needs_suggestions
from code_compass_server.answer.grounds import Grounds, named_symbols
from code_compass_server.answer.messages import EN, Messages, messages_for
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.constants import NEARBY_TERMS_LIMIT, SUGGESTION_COUNT
from code_compass_server.depth.terms import content_terms
from code_compass_server.records import RetrievalQuery, SearchHit, SearchParams
from code_compass_server.validation import ALL_PROJECTS

SPELLING_RATIO = 0.8  # difflib ratio a spelling fix needs (and the same first letter)


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


def _defined(
    term: str, probe: list[SearchHit], source: EvidenceSource, params: SearchParams
) -> SearchHit | None:
    """The hit defining `term`, from the probe or one search for the name."""
    for h in probe:
        if h.symbol and (h.symbol == term or h.symbol.endswith("." + term)):
            return h
    try:
        hits = source.search(
            replace(params, query=term, min_score=None, path_prefix=None, language=None, top_k=3)
        )
    except Exception:
        return None
    for h in hits:
        if h.symbol and (h.symbol == term or h.symbol.endswith("." + term)):
            return h
    return None


def _unfinished(source: EvidenceSource) -> bool:
    try:
        return source.index_unfinished()
    except Exception:  # a suggestion must never break the answer
        return False


class _Picks:
    """The suggestions so far: deduplicated by label, at most SUGGESTION_COUNT."""

    def __init__(self) -> None:
        self.items: list[Action] = []

    def add(self, action: Action) -> None:
        if len(self.items) < SUGGESTION_COUNT and all(a.label != action.label for a in self.items):
            self.items.append(action)


def is_spelling_fix(word: str, name: str) -> bool:
    """`name` is `word` misspelt: same first letter, nearly all letters in common. Keeps
    `parse_confg` -> `parse_config`; refuses `click` -> `cli`, `build` -> `Guild`."""
    if word == name or not word or not name or word[0] != name[0]:
        return False
    if abs(len(word) - len(name)) > 2:
        return False
    return difflib.SequenceMatcher(None, word.lower(), name.lower()).ratio() >= SPELLING_RATIO


def build_suggestions(
    question: str,
    params: SearchParams,
    source: EvidenceSource,
    *,
    kept: list[SearchHit] | None = None,
    msg: Messages = EN,
    translated: frozenset[str] = frozenset(),
    probe: list[SearchHit] | None = None,
) -> list[Action]:
    """Exactly SUGGESTION_COUNT actions (deduplicated), concrete when the index has data.
    `question` is the text whose words are compared with the index's names; `translated`
    are its words the query builder supplied, never offered a spelling fix (the asker did
    not write them)."""
    picks = _Picks()
    try:
        terms = source.nearby_terms(question, NEARBY_TERMS_LIMIT)
    except Exception:  # a suggestion must never break the answer
        terms = []
    probe = _probe(source, params) if probe is None else probe
    _spelling(picks, question, terms, probe, source, params, msg, translated)
    _closest(picks, params, probe, msg)
    _filtered_out(picks, params, probe, msg)
    _narrower(picks, params, (kept or []) + probe, msg)
    _related_names(picks, question, terms, probe, msg)
    for h in probe[1:]:  # 6. the next closest passages, to open
        label = msg.open_passage.format(path=h.path, start=h.start_line, end=h.end_line)
        picks.add(Action(OPEN, label, h.path, h.start_line, h.end_line, h.project or None))
    # Generic advice fills what is left. "Nothing shares these words" only when the probe
    # found nothing, and then "not indexed yet" instead while indexing runs.
    first, *rest = msg.generic
    if not probe:
        picks.add(Action(INFO, msg.generic_unfinished if _unfinished(source) else first))
    for generic in rest:
        picks.add(Action(INFO, generic))
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
    """1. A code name of the question that the index lacks, misspelt from one it has."""
    for word in named_symbols(question):
        if word in translated or word in terms:
            continue
        fixed = next((t for t in terms if not _is_path(t) and is_spelling_fix(word, t)), None)
        if fixed is None:
            continue
        at = _defined(fixed, probe, source, params)
        where = f" ({at.path})" if at else ""
        picks.add(
            Action(
                ASK,
                msg.spelling.format(word=word, fixed=fixed, where=where),
                question=question.replace(word, fixed),
            )
        )


def _closest(picks: _Picks, params: SearchParams, probe: list[SearchHit], msg: Messages) -> None:
    """2. The closest match, to open (it did not reach minScore, or a filter cut it out)."""
    if not probe:
        return
    best = probe[0]
    score = f"{best.score:.2f}"
    # A "closest match" that scores 0.00 is not close: it is only the nearest passage there is.
    label = (
        msg.open_passage.format(path=best.path, start=best.start_line, end=best.end_line)
        if score == "0.00"
        else msg.closest_match.format(
            name=best.symbol or best.path,
            path=best.path,
            start=best.start_line,
            end=best.end_line,
            score=score,
        )
    )
    picks.add(
        Action(
            OPEN,
            label,
            path=best.path,
            start_line=best.start_line,
            end_line=best.end_line,
            project=best.project or None,
        )
    )


def _filtered_out(
    picks: _Picks, params: SearchParams, probe: list[SearchHit], msg: Messages
) -> None:
    """3. Ask again without the filter that cut the matches out."""
    if not probe:
        return
    if params.language and all(h.language != params.language for h in probe):
        langs = ", ".join(sorted({h.language for h in probe if h.language}))
        label = msg.drop_language.format(
            language=params.language, languages=langs or msg.other_languages
        )
        picks.add(Action(SCOPE, label, scope=(("language", None),)))
    if params.path_prefix and all(not h.path.startswith(params.path_prefix) for h in probe):
        label = msg.remove_prefix.format(prefix=params.path_prefix, path=probe[0].path)
        picks.add(Action(SCOPE, label, scope=(("pathPrefix", None),)))


def _narrower(picks: _Picks, params: SearchParams, pool: list[SearchHit], msg: Messages) -> None:
    """4. Ask again where the material is: the folder, else the language, most hits share."""
    if not pool:
        return
    dirs = Counter(d for d in (_top_dir(h.path) for h in pool) if d)
    if not params.path_prefix and dirs:
        prefix, _ = dirs.most_common(1)[0]
        picks.add(Action(SCOPE, msg.narrow.format(prefix=prefix), scope=(("pathPrefix", prefix),)))
    langs = Counter(h.language for h in pool if h.language)
    if not params.language and len(langs) > 1:
        language, _ = langs.most_common(1)[0]
        label = msg.only_language.format(language=language)
        picks.add(Action(SCOPE, label, scope=(("language", language),)))


def _related_names(
    picks: _Picks, question: str, terms: list[str], probe: list[SearchHit], msg: Messages
) -> None:
    """5. A question about a name that exists and shares a word with the question."""
    wanted = content_terms(question)
    names = [h.symbol for h in probe if h.symbol] + [t for t in terms if not _is_path(t)]
    for name in dict.fromkeys(names):
        if wanted & content_terms(name.replace(".", " ")):
            asked = msg.about_symbol_question.format(symbol=name)
            picks.add(Action(ASK, asked, question=asked))


def searched_text(params: SearchParams, source: EvidenceSource, msg: Messages) -> str:
    """What was searched and what came of it, in plain words."""
    if params.project in (None, ALL_PROJECTS):
        names = source.projects()
        scope = (
            msg.searched_one.format(name=names[0])
            if len(names) == 1
            else msg.searched_all.format(n=len(names))
        )
    else:
        scope = msg.searched_one.format(name=params.project)
    if params.path_prefix:
        scope += msg.searched_under.format(prefix=params.path_prefix)
    if params.language:
        scope += msg.searched_in.format(language=params.language)
    return scope


def _outcome(params: SearchParams, probe: list[SearchHit], msg: Messages) -> str:
    if not probe:
        return msg.searched_nothing
    best = probe[0]
    floor = params.min_score if params.min_score is not None else 0.0
    where = f"{best.path}:{best.start_line}-{best.end_line}"
    return msg.searched_below.format(
        min_score=f"{floor:.2f}", score=f"{best.score:.2f}", where=where
    )


def suggest(
    params: SearchParams,
    source: EvidenceSource,
    grounds: Grounds,
    kept: list[SearchHit],
    query: RetrievalQuery | None = None,
) -> Suggestions:
    """Suggestions when coverage is low or none, or the question names a missing symbol; in
    the question's language, matched against the index by the query's English rendering.
    `searched` is set when nothing reached minScore."""
    if not (needs_suggestions(grounds.coverage) or grounds.missing):
        return Suggestions([])
    words = query.rewritten if query is not None else params.query
    added = frozenset(query.added) if query is not None else frozenset()
    msg = messages_for(grounds.language)
    probe = _probe(source, params)
    actions = build_suggestions(
        words, params, source, kept=kept, msg=msg, translated=added, probe=probe
    )
    searched = None
    if not kept:
        searched = msg.searched.format(
            scope=searched_text(params, source, msg),
            query=params.query[:120],
            outcome=_outcome(params, probe, msg),
        )
    return Suggestions(actions, searched)
