"""The question as retrieval reads it: its language, and an English rendering of a Portuguese
question from a developer-vocabulary lexicon (no model, no network)."""

from code_compass.query.builder import SOURCE_LEXICON, SOURCE_LLM, build_query, passthrough
from code_compass.query.language import detect_language, language_name, question_language

__all__ = [
    "SOURCE_LEXICON",
    "SOURCE_LLM",
    "build_query",
    "detect_language",
    "language_name",
    "passthrough",
    "question_language",
]
