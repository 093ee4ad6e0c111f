"""The calibrated score of lexical mode (no embeddings): the "lexical" model of calibration.py.

Raw BM25 is unbounded and depends on the corpus; what says "this chunk answers the query" is
how strong the match is per query word (BM25 strength), how many of the query's content words
the chunk holds (coverage), and whether they are in its symbol name or path. Those signals go
through the same fitted logistic model as the other modes, with the lexical mode's weights.
"""

from __future__ import annotations

from collections.abc import Iterable

from code_compass_server.search.calibration import score_candidates
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.gate import QuestionTerms
from code_compass_server.search.signals import query_info


def score_lexical(
    cands: Iterable[Candidate], query: str, terms: QuestionTerms | None = None
) -> list[Candidate]:
    """Signals and calibrated lexical-mode score for each candidate, best first."""
    return score_candidates(cands, query_info(query), "lexical", terms)
