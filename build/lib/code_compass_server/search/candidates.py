"""A candidate chunk as the searchers see it before fusion and calibration."""

from __future__ import annotations

from dataclasses import dataclass, field

from code_compass_server.index.catalog import ChunkRow


@dataclass(slots=True)
class Candidate:
    row: ChunkRow
    project: str
    bm25: float | None = None  # raw BM25 (lexical channel)
    lexical_rank: int | None = None  # 0-based rank in the lexical list
    cosine: float | None = None  # best cosine of the chunk's pieces (semantic channel)
    semantic_rank: int | None = None
    features: dict[str, float] = field(default_factory=dict)
    # Name channel (names.py): the chunk holds the definition of a name the query uses, and how
    # surely the name means it (1.0: the only definitions, or a qualified `Class.method` match).
    exact_definition: bool = False
    name_match: float = 0.0
    name_guess: bool = False  # the name was guessed from the question's words, not written
    score: float = 0.0  # calibrated, in [0, 1]: the best hit reads P(the workspace answers)
    relevance: float = 0.0  # calibrated P(this hit is relevant)
