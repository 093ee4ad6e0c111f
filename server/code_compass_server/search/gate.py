"""List-level signals: does this workspace answer the question at all?

A single hit's evidence cannot tell "the best of a poor list" from "the answer": an unanswerable
question about the same repository (an option it lacks, a method it never had) still finds
chunks that share its common words. What separates the two is the list as a whole: how much of
the question's *rare* content the top hits hold (words weighted by IDF over this index), whether
a word or identifier it names exists anywhere in the index, whether the lexical and semantic
channels agree on the best chunk, and how far the best hit stands above the next. These go into
the fitted answerability probability (calibration.py) that multiplies every hit's relevance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from code_compass_server.index.lexical import body_words
from code_compass_server.index.tokens import is_stop_word, word_stem
from code_compass_server.search.candidates import Candidate

GATE_SIGNALS = (
    "cos_top",
    "cos_gap",
    "lex_top",
    "bm25_per_word",
    "z_top",
    "z_gap",
    "idf_cov1",
    "idf_cov3",
    "phrase3",
    "absent",
    "ident_named",
    "ident_missing",
    "ident_in_top",
    "kwarg_named",
    "kwarg_missing",
    "agree",
    "nwords",
)
# Code-looking tokens: backticked, snake_case, camelCase/PascalCase with an inner capital, an
# acronym glued to a word (JSONField, HTTPError; not a plural like "URLs"); dotted ones first.
_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_CODE = re.compile(
    r"\b(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
    r"|[A-Z]{2,}[a-z]{2,}\w*)\b"
)
_TOP_COVER = 3  # hits read for the coverage of the question's words
# A keyword argument the question passes (`field(private=True)`, "with aliases="): a near-miss
# option is a plain word that exists everywhere, so what tells it is whether the hits that
# match the question ever take it as a parameter (`name=`, `name:`).
_KWARG = re.compile(r"\b([A-Za-z_]\w*)=(?!=)")
_KWARG_TOP = 10
# Question words say what kind of answer is wanted, not what it is about: code rarely holds
# them, so a small workspace would count them "absent" (English stop words are already out).
_QUESTION_WORDS = frozenset(
    {"how", "what", "where", "why", "when", "which", "who", "whom", "whose", "does", "did", "do"}
    | {"happens", "happen"}
    # How a "where" question asks for a definition: code says `def`, not "declared".
    | {"declared", "declare", "defined", "implemented", "located"}
)


class TermCounter(Protocol):
    """The lexical index's document counts: of an identifier as a whole token, and of a word
    in any of its forms (LexicalIndex.count, LexicalIndex.word_count)."""

    def count(self, term: str) -> int: ...

    def word_count(self, word: str) -> int: ...

    def num_docs(self) -> int: ...


@dataclass(frozen=True, slots=True)
class QuestionTerms:
    """The question's content words with their IDF in this index, and the identifiers it names."""

    words: tuple[str, ...]  # lowercased content words
    idf: tuple[float, ...]
    present: tuple[bool, ...]  # the word (or a form of its stem) is somewhere in the index
    named: tuple[str, ...]  # code-looking names
    named_present: tuple[bool, ...]
    kwargs: tuple[str, ...] = ()  # keyword arguments the question passes (`name=`)


def named_identifiers(text: str) -> list[str]:
    found = [m.group(1).strip() for m in _BACKTICK.finditer(text)]
    found += [m.group(0) for m in _CODE.finditer(_BACKTICK.sub(" ", text))]
    out = []
    for tok in found:
        tok = tok.removesuffix("()").strip(".")
        # "e.g." and "i.e." are not dotted names: every part of one has two characters or more.
        if (
            re.fullmatch(r"[A-Za-z_][\w.]*", tok)
            and len(tok) > 2
            and min(map(len, tok.split("."))) > 1
        ):
            out.append(tok)
    return list(dict.fromkeys(out))


def question_terms(text: str, index: TermCounter | None) -> QuestionTerms:
    """Content words (and named identifiers) of the question, looked up in the index once.

    Without an index (tests, a store that cannot count) every word counts as present with IDF 1.
    """
    words = [
        w
        for w in dict.fromkeys(body_words(text))
        if len(w) > 2 and not is_stop_word(w) and w not in _QUESTION_WORDS
    ]
    named = named_identifiers(text)
    kwargs = tuple(dict.fromkeys(m.group(1) for m in _KWARG.finditer(text)))
    if index is None:
        return QuestionTerms(
            tuple(words),
            (1.0,) * len(words),
            (True,) * len(words),
            tuple(named),
            (True,) * len(named),
            kwargs,
        )
    n = max(index.num_docs(), 1)
    idf: list[float] = []
    present: list[bool] = []
    for w in words:
        df = index.word_count(w)
        present.append(df > 0)
        idf.append(math.log((n + 1) / (df + 1)))
    named_present = tuple(
        any(index.count(part) > 0 for part in (name, name.rsplit(".", 1)[-1])) for name in named
    )
    return QuestionTerms(
        tuple(words), tuple(idf), tuple(present), tuple(named), named_present, kwargs
    )


def with_names_from(terms: QuestionTerms, others: Sequence[TermCounter]) -> QuestionTerms:
    """`terms` with a named identifier counted present when another searched index has it."""
    if all(terms.named_present) or not others:
        return terms
    present = tuple(
        here or any(o.count(part) > 0 for o in others for part in (n, n.rsplit(".", 1)[-1]))
        for n, here in zip(terms.named, terms.named_present, strict=True)
    )
    return replace(terms, named_present=present)


def _covered(terms: QuestionTerms, texts: Sequence[str]) -> float:
    """IDF-weighted share of the question's words found (by stem, as substrings) in `texts`."""
    if not terms.words:
        return 0.0
    low = "\n".join(texts).lower()
    # Words in every chunk of a tiny index have IDF 0: then every word weighs the same.
    weights = terms.idf if sum(terms.idf) > 0 else (1.0,) * len(terms.words)
    got = sum(i for w, i in zip(terms.words, weights, strict=True) if word_stem(w) in low)
    return got / sum(weights)


def present_coverage(terms: QuestionTerms, ranked: Sequence[Candidate]) -> float:
    """IDF-weighted share of the question's words *that this index holds* found in the top
    hits: 1.0 when the list holds everything of the question the workspace has at all."""
    here = QuestionTerms(
        tuple(w for w, p in zip(terms.words, terms.present, strict=True) if p),
        tuple(i for i, p in zip(terms.idf, terms.present, strict=True) if p),
        (True,) * sum(terms.present),
        terms.named,
        terms.named_present,
        terms.kwargs,
    )
    return _covered(here, [_text(c) for c in ranked[:_TOP_COVER]])


def _phrases(terms: QuestionTerms, texts: Sequence[str]) -> float:
    """IDF-weighted share of the question's adjacent content-word pairs ("rate limit", "man
    pages") found next to each other (one word between at most, or glued into one identifier)
    in `texts`: words that each exist but never together mark a feature the workspace lacks."""
    pairs = list(zip(terms.words, terms.words[1:], strict=False))
    if not pairs:
        return 0.0
    weights = [min(a, b) for a, b in zip(terms.idf, terms.idf[1:], strict=False)]
    if sum(weights) <= 0:  # a tiny index: every pair weighs the same
        weights = [1.0] * len(pairs)
    low = "\n".join(texts).lower()
    got = 0.0
    for (a, b), w in zip(pairs, weights, strict=True):
        first, second = re.escape(word_stem(a)), re.escape(word_stem(b))
        if re.search(rf"{first}[a-z0-9]*(?:[\W_]+[a-z0-9]+)?[\W_]*{second}", low):
            got += w
    return got / sum(weights)


def _takes(name: str, texts: Sequence[str]) -> bool:
    """Some text takes `name` as a parameter or sets it as a keyword (`name=`, `name: int`)."""
    rx = re.compile(rf"\b{re.escape(name)}\s*[=:](?!=)")
    return any(rx.search(t) for t in texts)


def _holds(text: str, name: str) -> bool:
    """The chunk holds the named identifier: a dotted name (`BehaviorSubject.reset`) only when
    its owner and its last part are both there, as a method of another class is not it."""
    head, _, last = name.rpartition(".")
    return last in text and (not head or head.rsplit(".", 1)[-1] in text)


def _text(c: Candidate) -> str:
    return f"{c.row.symbol}\n{c.row.path}\n{c.row.text}"


def gate_signals(
    ranked: Sequence[Candidate],
    zs: Sequence[float],
    base: Mapping[str, float],
    terms: QuestionTerms,
) -> dict[str, float]:
    """The list's signals, each in [0, 1]. `ranked` and `zs` are best first (by relevance z);
    `base` holds calibration's own list signals (cos_top, lex_top, ...)."""
    texts = [_text(c) for c in ranked[:_TOP_COVER]]
    lex_best = min(
        ranked,
        key=lambda c: c.lexical_rank if c.lexical_rank is not None else 1 << 30,
        default=None,
    )
    sem_best = min(
        ranked,
        key=lambda c: c.semantic_rank if c.semantic_rank is not None else 1 << 30,
        default=None,
    )
    agree = 0.0
    if lex_best is not None and sem_best is not None and sem_best.semantic_rank is not None:
        both = lex_best is sem_best
        near = (sem_best.lexical_rank is not None and sem_best.lexical_rank < 5) or (
            lex_best.semantic_rank is not None and lex_best.semantic_rank < 5
        )
        agree = 1.0 if both else 0.5 if near else 0.0
    missing_words = sum(1 for p in terms.present if not p)
    named_in_top = [n for n in terms.named if any(_holds(t, n) for t in texts)]
    return {
        "cos_top": base.get("cos_top", 0.0),
        "cos_gap": min(1.0, 10.0 * base.get("cos_gap", 0.0)),
        "lex_top": base.get("lex_top", 0.0),
        "bm25_per_word": base.get("bm25_per_word", 0.0),
        "z_top": max(0.0, min(1.0, zs[0] / 10.0)) if zs else 0.0,
        "z_gap": max(0.0, min(1.0, zs[0] - zs[1])) if len(zs) > 1 else 1.0 if zs else 0.0,
        "idf_cov1": _covered(terms, texts[:1]),
        "idf_cov3": _covered(terms, texts),
        "phrase3": _phrases(terms, texts),
        "absent": missing_words / len(terms.words) if terms.words else 0.0,
        "ident_named": 1.0 if terms.named else 0.0,
        "ident_missing": 1.0 if not all(terms.named_present) else 0.0,
        "ident_in_top": len(named_in_top) / len(terms.named) if terms.named else 0.0,
        "kwarg_named": 1.0 if terms.kwargs else 0.0,
        "kwarg_missing": 1.0
        if terms.kwargs
        and not all(_takes(k, [c.row.text for c in ranked[:_KWARG_TOP]]) for k in terms.kwargs)
        else 0.0,
        "agree": agree,
        "nwords": base.get("nwords", 0.0),
    }
