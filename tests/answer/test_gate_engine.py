"""The answerability gate through the real engine: nothing relevant gives an empty search with a
reason, a question about an option that does not exist is refused without an LLM call, and a
question asked while the index is still being embedded is answered from lexical evidence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.confidence import RULE_UNKNOWN_SYMBOL
from code_compass_server.engine import Engine
from code_compass_server.records import SearchResult
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search


@pytest.fixture
def lexical_engine(workspace: Path, tmp_path: Path) -> Iterator[Engine]:
    eng = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    eng.add_project(workspace)
    eng.index(embed=False)
    yield eng
    eng.close()


@pytest.fixture
def embedding_engine(workspace: Path, tmp_path: Path) -> Iterator[Engine]:
    """Embeddings on, but not one chunk embedded yet: the first minutes of a new workspace."""
    eng = Engine.open(tmp_path / "storage", EngineSettings(embeddings=True))
    eng.add_project(workspace)
    if eng.embeddings.error:
        eng.close()
        pytest.skip(f"the embedding model is not built: {eng.embeddings.error}")
    eng.index(embed=False, background_embed=False)
    yield eng
    eng.close()


def test_nothing_relevant_is_an_empty_search_with_a_reason(lexical_engine: Engine) -> None:
    hits = lexical_engine.search(validate_search("kubernetes helm chart ingress annotations", 10))
    assert isinstance(hits, SearchResult)
    assert list(hits) == []
    assert hits.reason.startswith("nothing in this workspace matches")
    assert "kubernetes helm chart" in hits.reason
    found = lexical_engine.search(validate_search("parse the TOML configuration file", 10))
    assert found and found.reason == "" and found[0].symbol == "parse_config"
    assert all(h.score >= 0.005 for h in found)  # no row reads 0.00


def test_a_nonexistent_option_is_said_absent_without_an_llm_call(lexical_engine, fake_api, llm):
    ans = ask(
        AskRequest("What does the `CONFIG_STRICT_KEYS` option of parse_config reject?"),
        lexical_engine,
        llm=llm,
    )
    # The gate leaves no evidence above minScore (the option exists nowhere): the owner's
    # definition is the near miss's neighbour, cited, and nothing is sent to the model
    # (docs/answers.md: near misses; docs/rules.md: no evidence above minScore, no LLM).
    assert fake_api.requests == []
    assert ans.state != "OK"
    assert [a.name for a in ans.absent] == ["CONFIG_STRICT_KEYS"]
    assert ans.absent[0].nearest is not None
    assert ans.absent[0].nearest.hit.symbol == "parse_config"
    assert "`parse_config` has no `CONFIG_STRICT_KEYS` option" in ans.answer
    assert RULE_UNKNOWN_SYMBOL not in ans.confidence.rules


def test_ask_while_embedding_answers_from_lexical_evidence(embedding_engine, fake_api, llm):
    assert embedding_engine.status().projects[0].embedded == 0
    fake_api.script("`parse_config` reads the TOML configuration file at path {cite:E1}.")
    ans = ask(AskRequest("how is the TOML configuration file parsed?"), embedding_engine, llm=llm)
    assert ans.state != "FAIL", ans.to_json()
    assert ans.meta["partialIndex"] is True
    assert ans.evidences and ans.evidences[0].hit.symbol == "parse_config"
    assert fake_api.message_requests, "the lexical evidence must reach the model"
    hits = embedding_engine.search(validate_search("how is the TOML configuration file parsed?", 5))
    assert isinstance(hits, SearchResult) and hits.partial_index
