"""Conversations through AskService: one retrieval per ask, with the depth controller's query.

A follow-up keeps the subject of the previous turn (D1), a correction brings the disputed
claim's evidence and the evidence for the correction (D3), a selection drives the search.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from code_compass_server.answer import LlmConfig
from code_compass_server.answer.request import AskRequest
from code_compass_server.answer.service import AskService

from .conftest import FileSource

TESTS_PY = '''\
"""Tests of the configuration loader."""

from server.config import parse_config


def test_parse_config_reads_toml(tmp_path):
    path = tmp_path / "app.toml"
    path.write_text("Name = 1")
    assert parse_config(path) == {"name": 1}
'''

SETTINGS_PY = '''\
"""Server settings."""

REQUEST_TIMEOUT = 60  # seconds a request may take before the server gives up


def effective_timeout(override):
    """The request timeout: the override when one is given, else REQUEST_TIMEOUT."""
    return override or REQUEST_TIMEOUT
'''

DEFAULTS_PY = '''\
"""Defaults of the client."""

DEFAULT_TIMEOUT = 30  # the client's default timeout, in seconds
'''


@pytest.fixture
def convo_source(workspace: Path) -> FileSource:
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_config.py").write_text(TESTS_PY, encoding="utf-8")
    (workspace / "server" / "settings.py").write_text(SETTINGS_PY, encoding="utf-8")
    (workspace / "server" / "defaults.py").write_text(DEFAULTS_PY, encoding="utf-8")
    return FileSource({"main": workspace}).index()


def _ask(service: AskService, source: FileSource, **params: object) -> dict:
    request = AskRequest.from_json({"conversationId": "c1", "minScore": 0.3, **params})
    return service.ask(source, request, LlmConfig(api_key=None))


def test_each_ask_searches_once(convo_source: FileSource, tmp_path: Path) -> None:
    service = AskService(tmp_path / "logs")
    _ask(service, convo_source, query="where is parse_config defined?")
    assert len(convo_source.searches) == 1
    _ask(service, convo_source, query="and its tests?")
    assert len(convo_source.searches) == 2


def test_follow_up_about_its_tests_finds_the_tests_of_that_symbol(
    convo_source: FileSource, tmp_path: Path
) -> None:
    service = AskService(tmp_path / "logs")
    first = _ask(service, convo_source, query="where is parse_config defined?")
    assert first["evidences"][0]["symbol"] == "parse_config"
    follow = _ask(service, convo_source, query="and its tests?")
    assert follow["depth"] == "D1"
    assert "parse_config" in convo_source.searches[-1].query
    assert follow["meta"]["depthQuery"]["subject"] == ["parse_config"]
    assert follow["evidences"][0]["path"] == "tests/test_config.py"
    assert "test_parse_config_reads_toml" in [e["symbol"] for e in follow["evidences"]]


def test_correction_retrieves_the_contradicting_evidence(
    convo_source: FileSource, tmp_path: Path
) -> None:
    service = AskService(tmp_path / "logs")
    first = _ask(service, convo_source, query="what is the default timeout?")
    assert first["evidences"][0]["path"] == "server/defaults.py"
    # The stored answer is extractive; its cited claim names defaults.py.
    fix = _ask(
        service,
        convo_source,
        query="No, that's wrong: the request timeout is 60 seconds in settings.py",
    )
    assert fix["depth"] == "D3"
    paths = [e["path"] for e in fix["evidences"]]
    assert "server/settings.py" in paths  # the correction's side
    assert "server/defaults.py" in paths  # the disputed claim's own evidence
    assert fix["meta"]["depthQuery"]["claim"]


def test_topic_change_searches_the_question_alone(convo_source: FileSource, tmp_path: Path) -> None:
    service = AskService(tmp_path / "logs")
    _ask(service, convo_source, query="where is parse_config defined?")
    shift = _ask(
        service, convo_source, query="Different topic: how does check_token compare tokens?"
    )
    assert shift["depth"] == "D4"
    assert "parse_config" not in convo_source.searches[-1].query


def test_mode_reaches_the_search(convo_source: FileSource, tmp_path: Path) -> None:
    _ask(AskService(tmp_path / "logs"), convo_source, query="parse_config", mode="lexical")
    assert convo_source.searches[-1].mode == "lexical"


def test_selection_drives_retrieval_and_is_exactly_the_selected_lines(
    convo_source: FileSource, workspace: Path, tmp_path: Path
) -> None:
    text = (workspace / "server" / "config.py").read_text().splitlines()
    body = "\n".join(text[7:9]) + "\n"  # lines 8-9, ending at the start of line 10
    answer = _ask(
        AskService(tmp_path / "logs"),
        convo_source,
        query="What does this code do?",
        activeFile="server/config.py",
        selection={"startLine": 8, "endLine": 10, "text": body},
    )
    sel = answer["selection"]
    assert (sel["path"], sel["startLine"], sel["endLine"]) == ("server/config.py", 8, 9)
    assert sel["symbol"] == "parse_config"
    searched = convo_source.searches[-1].query
    assert "parse_config" in searched and "load" in searched  # the symbol, what it calls
    pinned = [e for e in answer["evidences"] if e["kind"] == "selection"]
    assert [(e["startLine"], e["endLine"]) for e in pinned] == [(8, 9)]
    assert "server/config.py:8-9" in answer["answer"]
