"""Conversation memory kept by the server: per id, bounded, least recently used dropped.

Bounds (constants.py): CONV_MAX_CONVERSATIONS conversations, CONV_MAX_TURNS turns each,
CONV_MAX_MESSAGE_CHARS per message. Answers are stored with their claims: the sentences
that cite evidence ([E1]) and the evidence they cite (docs/rules.md: claims-and-contradictions).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from code_compass_server.constants import (
    CONV_MAX_CONVERSATIONS,
    CONV_MAX_MESSAGE_CHARS,
    CONV_MAX_TURNS,
)
from code_compass_server.depth.depth_records import Claim, Message, Turn
from code_compass_server.records import SearchHit

_CITATION = re.compile(r"\[(E\d+(?:\s*,\s*E\d+)*)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def _evidence_json(evidences: Sequence[Mapping[str, Any] | SearchHit]) -> dict[str, dict[str, Any]]:
    """Evidence by id ("E1"...): dicts keep their "id", hits are numbered in order."""
    out: dict[str, dict[str, Any]] = {}
    for n, ev in enumerate(evidences, 1):
        if isinstance(ev, SearchHit):
            d = ev.to_json()
            d["id"] = f"E{n}"
        else:
            d = dict(ev)
            d.setdefault("id", f"E{n}")
        out[str(d["id"])] = d
    return out


def split_sentences(text: str) -> list[str]:
    parts = (_BULLET.sub("", p).strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def strip_citations(text: str) -> str:
    text = re.sub(r"\s+", " ", _CITATION.sub("", text))
    return re.sub(r"\s+([.,;:!?])", r"\1", text).strip()


def extract_claims(
    answer_text: str,
    evidences: Sequence[Mapping[str, Any] | SearchHit],
    turn_index: int,
) -> list[Claim]:
    """Sentences of an answer that cite evidence, with the evidence they cite."""
    by_id = _evidence_json(evidences)
    claims: list[Claim] = []
    for sentence in split_sentences(answer_text):
        ids: list[str] = []
        for group in _CITATION.findall(sentence):
            ids.extend(i.strip() for i in group.split(","))
        if not ids:
            continue
        ids = list(dict.fromkeys(ids))
        cited = tuple(by_id[i] for i in ids if i in by_id)
        claims.append(Claim(strip_citations(sentence), "system", turn_index, tuple(ids), cited))
    return claims


class ConversationStore:
    """Thread-safe LRU of conversations; each is a bounded list of turns."""

    def __init__(
        self,
        max_conversations: int = CONV_MAX_CONVERSATIONS,
        max_turns: int = CONV_MAX_TURNS,
        max_message_chars: int = CONV_MAX_MESSAGE_CHARS,
    ) -> None:
        self.max_conversations = max_conversations
        self.max_turns = max_turns
        self.max_message_chars = max_message_chars
        self._convs: OrderedDict[str, list[Turn]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._convs)

    def __contains__(self, conv_id: object) -> bool:
        return conv_id in self._convs

    def _conv(self, conv_id: str) -> list[Turn]:
        turns = self._convs.get(conv_id)
        if turns is None:
            turns = self._convs[conv_id] = []
            while len(self._convs) > self.max_conversations:
                self._convs.popitem(last=False)
        self._convs.move_to_end(conv_id)
        return turns

    def _cut(self, text: str) -> str:
        return text if len(text) <= self.max_message_chars else text[: self.max_message_chars]

    def _append(self, turns: list[Turn], turn: Turn) -> None:
        turns.append(turn)
        if len(turns) > self.max_turns:
            del turns[: len(turns) - self.max_turns]

    def turns(self, conv_id: str) -> list[Turn]:
        """A copy of the turns (marks the conversation as recently used)."""
        with self._lock:
            if conv_id not in self._convs:
                return []
            return list(self._conv(conv_id))

    def messages(self, conv_id: str) -> list[Message]:
        return [t.message() for t in self.turns(conv_id)]

    def claims(self, conv_id: str) -> list[Claim]:
        return [c for t in self.turns(conv_id) for c in t.claims]

    def add_user(self, conv_id: str, text: str, *, depth: str | None = None) -> Turn:
        with self._lock:
            turns = self._conv(conv_id)
            turn = Turn("user", self._cut(text), depth=depth)
            if depth == "D3":
                # A correction is the user's claim (seed: user_claims_in_session).
                turn.claims.append(Claim(turn.content, "user", len(turns)))
            self._append(turns, turn)
            return turn

    def record_answer(
        self,
        conv_id: str,
        question: str,
        answer_text: str,
        evidences: Sequence[Mapping[str, Any] | SearchHit],
        *,
        depth: str | None = None,
    ) -> Turn:
        """Store the question and the answer, extracting the answer's cited claims."""
        self.add_user(conv_id, question, depth=depth)
        with self._lock:
            turns = self._conv(conv_id)
            text = self._cut(answer_text)
            by_id = _evidence_json(evidences)
            cited = sorted({i for c in _CITATION.findall(text) for i in re.split(r"\s*,\s*", c)})
            turn = Turn(
                "assistant",
                text,
                citations=[by_id[i] for i in cited if i in by_id],
                claims=extract_claims(text, evidences, len(turns)),
                depth=depth,
            )
            self._append(turns, turn)
            return turn

    def drop(self, conv_id: str) -> None:
        with self._lock:
            self._convs.pop(conv_id, None)
