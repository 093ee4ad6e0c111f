from __future__ import annotations

import zlib

import numpy as np
import pytest

from code_compass_server.depth.classifier import choose, classify
from code_compass_server.depth.depth_records import Message

TIMEOUT_HISTORY = [
    Message("user", "Where is the request timeout configured?"),
    Message(
        "assistant",
        "The timeout is hard-coded in `api/session.py`: `DEFAULT_TIMEOUT = 30` seconds [E1].",
    ),
]


@pytest.mark.parametrize(
    ("question", "depth", "signal"),
    [
        ("Where is the retry logic?", "D0", "direct_question"),
        ("Onde fica a lógica de retry?", "D0", "direct_question"),
        ("Why does the indexer use a thread?", "D2", "explanation_request"),
        ("Por que o indexador usa uma thread?", "D2", "explanation_request"),
        ("Por quê?", "D2", "explanation_request"),
        ("What's the difference between Index and Catalog?", "D2", "comparison_request"),
        ("Qual a diferença entre Index e Catalog?", "D2", "comparison_request"),
        ("List all CLI commands", "D2", "list_summary_request"),
        ("Liste todos os comandos da CLI", "D2", "list_summary_request"),
        ("What changed in the parser last week?", "D1", "temporal_reference"),
        ("O que mudou no parser semana passada?", "D1", "temporal_reference"),
    ],
)
def test_first_message_signals_en_pt(question: str, depth: str, signal: str) -> None:
    d = classify(question, [])
    assert d.depth == depth
    assert signal in d.signals


@pytest.mark.parametrize(
    ("question", "depth", "signal"),
    [
        ("No, that's wrong, the timeout is set in settings.py.", "D3", "correction"),
        ("Não, o timeout fica no settings.py.", "D3", "correction"),
        ("Nao, o timeout fica no settings.py.", "D3", "correction"),  # accents optional
        ("Acho que não é bem assim, é 60.", "D3", "correction"),
        ("Are you sure? I thought it was 60.", "D3", "disagreement"),
        ("Tem certeza?", "D3", "disagreement"),
        ("And the tests?", "D1", "follow_up"),
        ("E os testes?", "D1", "follow_up"),
        ("Can it be overridden per request?", "D1", "anaphora"),
        ("Dá para mudar esse valor por requisição?", "D1", "anaphora"),
        ("Why is it hard-coded?", "D2", "explanation_request"),
        ("Different topic: how are PDFs chunked?", "D4", "topic_shift"),
        ("Mudando de assunto: como os PDFs são divididos?", "D4", "topic_shift"),
        ("Which CSS framework does the dashboard use?", "D4", "topic_shift"),
    ],
)
def test_signals_with_history_en_pt(question: str, depth: str, signal: str) -> None:
    d = classify(question, TIMEOUT_HISTORY)
    assert d.depth == depth, d
    assert signal in d.signals


def test_first_message_is_never_a_topic_shift() -> None:
    d = classify("Which CSS framework does the dashboard use?", [])
    assert d.depth == "D0"
    assert "topic_shift" not in d.signals


def test_no_is_not_disagreement_without_punctuation_or_answer() -> None:
    assert classify("No tests for it?", TIMEOUT_HISTORY).depth == "D1"
    # nobody said anything yet: nothing to disagree with
    assert "correction" not in classify("No, where is the timeout?", []).signals


def test_return_to_older_topic_is_d1() -> None:
    history = [
        *TIMEOUT_HISTORY,
        Message("user", "Unrelated: how do we run database migrations?"),
        Message("assistant", "`scripts/migrate.sh` calls `alembic upgrade head` [E1]."),
    ]
    d = classify("Where is DEFAULT_TIMEOUT tested?", history)
    assert d.depth == "D1"
    assert "topic_return" in d.signals
    # the same question right after the timeout answer is a direct one
    assert classify("Where is DEFAULT_TIMEOUT tested?", TIMEOUT_HISTORY).depth == "D0"


def test_ties_err_upward() -> None:
    # equal evidence: precedence order decides, deeper first
    assert choose({"D0": 0.5, "D1": 0.7, "D2": 0.7, "D3": 0.0, "D4": 0.0}) == "D2"
    assert choose({"D0": 0.5, "D1": 0.0, "D2": 0.8, "D3": 0.0, "D4": 0.8}) == "D4"
    # a hedge within the margin of the best still wins over the direct answer
    assert choose({"D0": 0.5, "D1": 0.0, "D2": 0.0, "D3": 0.4, "D4": 0.0}) == "D3"
    # ... but not when clearly weaker than another signal
    assert choose({"D0": 0.5, "D1": 0.8, "D2": 0.0, "D3": 0.6, "D4": 0.0}) == "D1"
    # a hedged correction (negated statement) wins the tie with anaphora
    d = classify("It isn't hard-coded anymore.", TIMEOUT_HISTORY)
    assert d.depth == "D3"
    assert "anaphora" in d.signals


class BagEmbedder:
    """Deterministic bag-of-words vectors: cosine > 0 only for shared words."""

    def embed(self, texts: list[str]) -> np.ndarray:
        # crc32, not hash(): str hashes change per process, and so would the collisions.
        vecs = np.zeros((len(texts), 4096), dtype=np.float32)
        for n, t in enumerate(texts):
            for w in t.lower().split():
                vecs[n, zlib.crc32(w.strip("?.,`").encode()) % 4096] += 1.0
        return vecs


class SynonymEmbedder:
    """Says everything is about the same topic."""

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 8), dtype=np.float32)


def test_optional_embedder_can_rescue_continuity() -> None:
    q = "Which CSS framework does the dashboard use?"
    assert classify(q, TIMEOUT_HISTORY, embedder=BagEmbedder()).depth == "D4"
    d = classify(q, TIMEOUT_HISTORY, embedder=SynonymEmbedder())
    assert d.depth == "D0"
    assert "topic_continuity" in d.signals


def test_classification_is_fast() -> None:
    classify("warm up", TIMEOUT_HISTORY)
    d = classify("Why does it take a lock there?", TIMEOUT_HISTORY * 20)
    assert d.latency_ms < 100  # (docs/rules.md: classify-fast)
