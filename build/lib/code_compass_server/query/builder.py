"""The offline query builder: a Portuguese question becomes English text the index can match.

The embedding model and the code are English, so "onde o flask registra as rotas?" finds
little as written. Word by word, in order: identifiers and code stay verbatim; Portuguese
function words are dropped or become their English counterparts (onde -> where); everything
else goes through the developer-vocabulary lexicon (lexicon_pt.tsv), phrases first, each word
in any inflection ("variáveis de ambiente" -> environment variable). The result keeps the
order and the question words an English question has, so the fitted score reads it as one.

A word the lexicon lacks stays as written (a loanword or a name: "cookie", "flask"). Per
workspace, `fit_to_index` renders such a word, when the workspace's lexical index does not hold
it, by its English cognate if the index holds that (query/cognates.py: sessão -> session,
serializável -> serializable); with no such cognate it is left out of the rendering (BM25 still
gets it). A word the index holds (a name, a loanword) stays as written.

An English question (or one whose language is unsure) goes through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from code_compass_server.query.cognates import first_known
from code_compass_server.query.language import question_language
from code_compass_server.query.lexicon import Entry, fold, portuguese_lexicon
from code_compass_server.records import RetrievalQuery

SOURCE_LEXICON, SOURCE_LLM = "lexicon", "llm"  # RetrievalQuery.source; "none": as written
CACHE_SIZE = 1024
# Code-looking tokens: snake_case, dotted, calls, decorators, paths, numbers, options, tags.
_CODE_CHARS = re.compile(r"[_.()=/@\\{}\[\]<>:#$%*+0-9]")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_EDGE_PUNCT = "?!,.;:\"'“”‘’()[]«»…"
# Backticked code and quoted text (an error message, a label) are kept whole, as written.
_VERBATIM = re.compile(r"`([^`]*)`|\"([^\"]*)\"|“([^”]*)”")
# How Portuguese words end once accents are folded (a vowel, a plural, an infinitive, -em/-am,
# -or, -l, -z: "tramela", "despachador", "portatil"), unlike "websocket" or "backoff".
_PORTUGUESE_ENDING = re.compile(
    r"(?:[aeiou]s?|[aei]r|[aeiou]m|or(?:es)?|[aeiou]l|[aeiou]is|[aeiou]z(?:es)?)$"
)
# Spellings Portuguese words do not have: k, w, y, or a doubled consonant other than rr/ss
# ("worker", "cookie", "buffer", "logger": English, whatever they end in).
_NOT_PORTUGUESE = re.compile(r"[kwy]|([b-df-hj-np-qtv-z])\1")
# "como" starts a question as "how"; elsewhere it means "like" / "as" and is dropped.
_QUESTION_OPENERS = {"como": "how"}


@dataclass(slots=True)
class _Rendering:
    """The pieces of the rewrite as they are produced, in question order."""

    primary: list[str] = field(default_factory=list)  # the English rendering
    senses: list[str] = field(default_factory=list)  # other renderings of ambiguous words
    untranslated: list[str] = field(default_factory=list)  # Portuguese words kept for BM25

    def add_entry(self, entry: Entry) -> None:
        if entry.english:
            self.primary.append(entry.english[0])
            self.senses.extend(entry.english[1:])


class Vocabulary(Protocol):
    """What `fit_to_index` reads of a workspace's lexical index (LexicalIndex.word_count: the
    chunks holding a word in any of its English forms, as the gate counts a question's words)."""

    def word_count(self, word: str) -> int: ...


Counter = Callable[[str], int]  # chunks of the index holding a word


def passthrough(question: str) -> RetrievalQuery:
    """The question as written: what retrieval searched before there was a query builder."""
    return RetrievalQuery(question, question_language(question), question, question)


@lru_cache(maxsize=CACHE_SIZE)
def build_query(question: str) -> RetrievalQuery:
    """The retrieval query of a question (see the module doc). Pure and cached: the search
    front doors and `ask` build the same query for the same text."""
    language = question_language(question)
    if language != "pt":
        return RetrievalQuery(question, language, question, question)
    return _query(question, language, _render(question, None))


def fit_to_index(query: RetrievalQuery, index: Vocabulary) -> RetrievalQuery:
    """The offline rendering of `query` for one workspace: each word the lexicon lacks and the
    index does not hold becomes its English cognate when the index holds one (see the module
    doc). Any other query (English, the model's rewrite) is returned as it is."""
    if query.source != SOURCE_LEXICON or not _unknown_words(query.original):
        return query
    counts: dict[str, int] = {}

    def count(word: str) -> int:
        if word not in counts:
            counts[word] = index.word_count(word)
        return counts[word]

    if all(count(w) for w in _unknown_words(query.original)):
        return query  # every such word is the workspace's own (a name, a loanword)
    return _query(query.original, query.language, _render(query.original, count))


def _query(question: str, language: str | None, out: _Rendering) -> RetrievalQuery:
    rewritten = " ".join(out.primary) or question
    lexical = " ".join(dict.fromkeys([*out.primary, *out.senses, *out.untranslated]))
    asked = {fold(w) for w in re.findall(r"\w+", question)}
    added = tuple(
        dict.fromkeys(
            w for r in (*out.primary, *out.senses) for w in r.split() if fold(w) not in asked
        )
    )
    return RetrievalQuery(
        question, language, rewritten, lexical or question, added, source=SOURCE_LEXICON
    )


@lru_cache(maxsize=CACHE_SIZE)
def _unknown_words(question: str) -> tuple[str, ...]:
    """The question's plain words the lexicon has no entry for (folded), as `_word` sees them."""
    found: list[str] = []
    _render(question, None, found)
    return tuple(found)


def _render(question: str, count: Counter | None, unknown: list[str] | None = None) -> _Rendering:
    """Translate a Portuguese question word by word (phrases first), code kept verbatim.
    With `count`, a word the lexicon lacks is matched against the index (`fit_to_index`);
    `unknown` collects those words."""
    lexicon = portuguese_lexicon()
    out = _Rendering()
    run: list[str] = []  # consecutive natural-language words (phrases never span code)

    def flush() -> None:
        i = 0
        while i < len(run):
            phrase = lexicon.phrase_at(run, i)
            if phrase is not None:
                out.add_entry(phrase)
                i += len(phrase.words)
                continue
            _word(run[i], out, count, unknown, first=not out.primary)
            i += 1
        run.clear()

    for token in _tokens(question):
        if _is_code(token):
            flush()
            out.primary.append(token)
        else:
            run.append(fold(token))
    flush()
    return out


def _word(
    word: str,
    out: _Rendering,
    count: Counter | None,
    unknown: list[str] | None,
    *,
    first: bool,
) -> None:
    opener = _QUESTION_OPENERS.get(word)
    if opener is not None:
        if first:
            out.primary.append(opener)
        return
    entry = portuguese_lexicon().lookup(word)
    if entry is not None:
        out.add_entry(entry)
        if entry.english:
            out.untranslated.append(word)
        return
    if unknown is not None:
        unknown.append(word)
    cognate = first_known(word, count) if count is not None and not count(word) else None
    if cognate is not None:
        out.primary.append(cognate)
        out.untranslated.append(word)
    elif count is not None and not count(word) and looks_portuguese(word):
        # Portuguese the lexicon lacks, with no cognate here: BM25 may still match it, but in
        # the embedded rendering it is noise (measured on a held-out lexicon: kept 86 -> 90 %).
        # An English-looking word ("websocket", "backoff") still means something to the model.
        out.untranslated.append(word)
    elif word.isascii():
        out.primary.append(word)  # a loanword or a name ("cookie", "streaming", "flask")
    else:
        out.untranslated.append(word)


def looks_portuguese(word: str) -> bool:
    """A plain word (accents folded or not) that reads as Portuguese, not as an English
    loanword: it ends as Portuguese words do ("tramela", "portátil"; unlike "websocket",
    "backoff", "pool"), is spelt as they are (not "worker", "buffer") and is not one of the
    English words the lexicon renders to ("paginate", "cache")."""
    folded = fold(word)
    return (
        _PORTUGUESE_ENDING.search(folded) is not None
        and _NOT_PORTUGUESE.search(folded) is None
        and folded not in portuguese_lexicon().english_words
    )


def _tokens(question: str) -> list[str]:
    """Whitespace tokens without edge punctuation; backticked or quoted text as one token."""
    out: list[str] = []
    at = 0
    for m in _VERBATIM.finditer(question):
        out.extend(_words(question[at : m.start()]))
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner:
            out.append(inner)
        at = m.end()
    out.extend(_words(question[at:]))
    return out


def _words(text: str) -> list[str]:
    return [tok for raw in text.split() if (tok := raw.strip(_EDGE_PUNCT))]


def _is_code(token: str) -> bool:
    """Identifiers, calls, paths and numbers; capitalised words the lexicon does not know
    (Flask, QuerySet, Linux) too: a name in a Portuguese sentence is kept as written."""
    if _CODE_CHARS.search(token) or _CAMEL.search(token) or " " in token:
        return True
    if token[:1].isupper():
        low = fold(token)
        lexicon = portuguese_lexicon()
        return lexicon.lookup(low) is None and low not in lexicon.phrases
    return False
