"""Near misses (answer/absent.py): a question naming an option, parameter or method that does
not exist next to one that does is answered "does not exist", with the real neighbour cited,
over the real engine (Tantivy + catalog) on real files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.absent import named_members
from code_compass_server.engine import Engine

DATES_PY = '''\
"""Parsing of ISO 8601 dates."""

import datetime


def parse_iso(text, *, fold=False, default_tz=None):
    """Parse an ISO 8601 date or datetime string into a datetime.

    fold picks the second of two ambiguous local times; default_tz is the time zone of a
    string that names none.
    """
    value = datetime.datetime.fromisoformat(text)
    if value.tzinfo is None and default_tz is not None:
        value = value.replace(tzinfo=default_tz)
    return value.replace(fold=1) if fold else value


def format_iso(value):
    """Format a datetime as an ISO 8601 string."""
    return value.isoformat()
'''


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dates.py").write_text(DATES_PY, encoding="utf-8")
    eng = Engine.open(tmp_path / "storage")
    eng.add_project(ws)
    eng.index(embed=False)
    yield eng
    eng.close()


def test_named_members_of_a_question() -> None:
    assert [
        (m.name, m.kind, m.owner) for m in named_members("does `parseISO` have a `strict` option?")
    ] == [("strict", "option", "parseISO")]
    assert [
        (m.name, m.owner) for m in named_members("how do I pass raise_for_status(allowed=[404])?")
    ] == [("allowed", "raise_for_status")]
    assert [m.name for m in named_members("como uso a opção `strict` do parseISO?")] == ["strict"]
    assert named_members("why does my request time out after ten seconds?") == []


def test_absent_option_is_said_absent_offline_with_the_neighbour_cited(engine) -> None:
    ans = ask(AskRequest("does `parse_iso` have a `strict` option?"), engine)
    data = ans.to_json()
    assert data["absent"] and data["absent"][0]["name"] == "strict"
    nearest = data["absent"][0]["nearest"]
    assert nearest["path"] == "dates.py" and nearest["symbol"] == "parse_iso"
    assert "`parse_iso` has no `strict` option" in ans.answer
    assert "`fold`" in ans.answer and "`default_tz`" in ans.answer  # what it does have
    assert ans.state != "OK" and not ans.meta["llmCalled"]


def test_absent_option_in_portuguese(engine) -> None:
    ans = ask(AskRequest("como uso a opção `strict` do `parse_iso`?"), engine)
    assert [a["name"] for a in ans.to_json()["absent"]] == ["strict"]
    assert "`parse_iso` não tem a opção `strict`" in ans.answer
    assert ans.state != "OK"


def test_an_existing_option_is_not_absent(engine) -> None:
    ans = ask(AskRequest("what does the `fold` option of `parse_iso` do?", min_score=0.1), engine)
    assert ans.to_json()["absent"] == []
    assert "has no" not in ans.answer


def test_the_prompt_carries_the_absence_fact(engine, fake_api, llm) -> None:
    fake_api.script(
        "`parse_iso` has no `strict` option; it takes `fold` and `default_tz` {cite:E1}."
    )
    ans = ask(
        AskRequest("does `parse_iso` have a `strict` option for the date text?", min_score=0.0),
        engine,
        llm=llm,
    )
    assert fake_api.message_requests, ans.to_json()
    sent = str(fake_api.message_requests[0].json["messages"][0]["content"])
    assert "there is no `strict` option of `parse_iso`" in sent
    assert "fold" in sent
    assert ans.state != "OK" and [a.name for a in ans.absent] == ["strict"]
