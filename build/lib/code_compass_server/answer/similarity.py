"""Sentence-to-passage similarity with the engine's embedding model, when one is loaded.

The source offers `embed_texts(texts) -> vectors | None` (the engine does; test sources
need not): the vectors are L2-normalised, so a pair's dot product is its cosine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from code_compass_server.answer.source import EvidenceSource

# (sentences, passages) -> cosine of each pair.
Similarity = Callable[[Sequence[str], Sequence[str]], Sequence[float]]


def passage_similarity(source: EvidenceSource) -> Similarity | None:
    embed = getattr(source, "embed_texts", None)
    if not callable(embed):
        return None

    def similarity(sentences: Sequence[str], passages: Sequence[str]) -> list[float]:
        unique = list(dict.fromkeys([*sentences, *passages]))
        vectors = embed(unique)
        if vectors is None:
            raise RuntimeError("no embedding model loaded")
        row = {text: n for n, text in enumerate(unique)}
        pairs = zip(sentences, passages, strict=True)
        return [float(vectors[row[s]] @ vectors[row[p]]) for s, p in pairs]

    return similarity
