"""The grounded `ask` pipeline (seeds 000, 001, 002): evidence first, verified citations.

Entry point: `ask(AskRequest(...), source, llm=LlmConfig())` -> `Answer` (see pipeline.py).
"""

from code_compass_server.answer.answer_log import AnswerDecisionLog
from code_compass_server.answer.llm import LlmConfig, LlmError
from code_compass_server.answer.pipeline import ask
from code_compass_server.answer.request import AskRequest
from code_compass_server.answer.result import Answer, Citation, Confidence
from code_compass_server.answer.scope import FixedPlan
from code_compass_server.answer.source import EvidenceSource

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
