"""Context depth controller: classify D0-D4, plan retrieval, build the pack (docs/depth.md)."""

from code_compass_server.depth.classifier import classify
from code_compass_server.depth.conversation import ConversationStore, extract_claims
from code_compass_server.depth.depth_log import DecisionRecord, DepthDecisionLog
from code_compass_server.depth.depth_records import Claim, DepthDecision, Message, Turn
from code_compass_server.depth.pack import ContextPack, build_pack
from code_compass_server.depth.retrieval_plan import RetrievalPlan, plan_for

__all__ = [
    "Claim",
    "ContextPack",
    "ConversationStore",
    "DecisionRecord",
    "DepthDecision",
    "DepthDecisionLog",
    "Message",
    "RetrievalPlan",
    "Turn",
    "build_pack",
    "classify",
    "extract_claims",
    "plan_for",
]
