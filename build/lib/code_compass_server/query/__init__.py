"""The question as retrieval reads it: its language, and an English rendering of a Portuguese
question from a developer-vocabulary lexicon and, per workspace, the English cognates its index
holds (no model, no network)."""

from code_compass_server.query.builder import (
    SOURCE_LEXICON,
    SOURCE_LLM,
    build_query,
    fit_to_index,
    looks_portuguese,
    passthrough,
)
from code_compass_server.query.language import detect_language, language_name, question_language

__all__ = [
    "SOURCE_LEXICON",
    "SOURCE_LLM",
    "build_query",
    "detect_language",
    "fit_to_index",
    "language_name",
    "looks_portuguese",
    "passthrough",
    "question_language",
]
