"""How close two names are in meaning, with the engine's embedding model: `delete_key` and
`unset_key` share only `key` in spelling, as `set_key` and `get_key` do, but "delete key" is
nearer "unset key" (and its doc line, "Removes a given key…") than the others.

The names are compared as their split words ("delete key", "unset key"), a candidate also with
the first line of its documentation when its passage has one. The source offers
`embed_texts(texts) -> vectors | None` (the engine does; a source without a model gives no
scores, and the neighbour choice falls back on spelling alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from code_compass_server.answer.source import EvidenceSource

# (missing name's words, [(candidate's words, its doc line or "")]) -> cosine per candidate.
MeaningScores = Callable[[str, Sequence[tuple[str, str]]], list[float]]

# The first line of a docstring, a JSDoc/GoDoc/`#` comment in a passage's first lines.
_DOC = re.compile(
    r'(?:"""|\'\'\')\s*([^\n"\']{8,})|/\*\*?\s*(?:\n\s*\*\s*)?([^\n*@][^\n]{7,})'
    r"|^[ \t]*(?://|#)\s*([^\n!][^\n]{7,})",
    re.M,
)
_DOC_LINES = 12
_DOC_CHARS = 100


def doc_line(text: str) -> str:
    """The first documentation line among a passage's first lines ("" when none)."""
    head = "\n".join(text.splitlines()[:_DOC_LINES])
    m = _DOC.search(head)
    line = next((g for g in m.groups() if g), "") if m else ""
    return line.strip()[:_DOC_CHARS]


def name_meaning(source: EvidenceSource) -> MeaningScores | None:
    """Cosines of a missing name's words with each candidate's, None when the source has no
    embedding model (or it is off)."""
    embed: Callable[[Sequence[str]], Any] | None = getattr(source, "embed_texts", None)
    if not callable(embed):
        return None
    model = embed

    def scores(words: str, candidates: Sequence[tuple[str, str]]) -> list[float]:
        texts = [words]
        for cand, doc in candidates:
            texts += [cand, f"{cand}: {doc}"] if doc else [cand]
        unique = list(dict.fromkeys(texts))
        vectors = model(unique)
        if vectors is None:
            return [0.0] * len(candidates)
        row = {t: n for n, t in enumerate(unique)}
        want = vectors[row[words]]
        out: list[float] = []
        for cand, doc in candidates:
            near = float(vectors[row[cand]] @ want)
            # The doc line says what the name does when its words are terse (`unset`).
            out.append(max(near, float(vectors[row[f"{cand}: {doc}"]] @ want)) if doc else near)
        return out

    return scores
