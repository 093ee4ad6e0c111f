"""The grounded `ask` pipeline (seeds 000, 001, 002): evidence first, verified citations.

Entry point: `ask(AskRequest(...), source, llm=LlmConfig())` -> `Answer` (see pipeline.py).
"""

from code_compass.answer.answer_log import AnswerDecisionLog
from code_compass.answer.llm import LlmConfig, LlmError
from code_compass.answer.pipeline import ask
from code_compass.answer.request import AskRequest
from code_compass.answer.result import Answer, Citation, Confidence
from code_compass.answer.scope import FixedPlan
from code_compass.answer.source import EvidenceSource

__all__ = [
    "Answer",
    "AnswerDecisionLog",
    "AskRequest",
    "Citation",
    "Confidence",
    "EvidenceSource",
    "FixedPlan",
    "LlmConfig",
    "LlmError",
    "ask",
]
