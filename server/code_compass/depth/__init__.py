"""Context depth controller (seed 004): classify D0-D4, plan retrieval, build the context pack."""

from code_compass.depth.classifier import classify
from code_compass.depth.conversation import ConversationStore, extract_claims
from code_compass.depth.decision_log import DecisionLog, DecisionRecord
from code_compass.depth.pack import ContextPack, build_pack
from code_compass.depth.plan import RetrievalPlan, plan_for
from code_compass.depth.records import Claim, DepthDecision, Message, Turn

__all__ = [
    "Claim",
    "ContextPack",
    "ConversationStore",
    "DecisionLog",
    "DecisionRecord",
    "DepthDecision",
    "Message",
    "RetrievalPlan",
    "Turn",
    "build_pack",
    "classify",
    "extract_claims",
    "plan_for",
]
