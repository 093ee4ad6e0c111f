"""Refusals that help: what was searched, and suggestions a client can perform."""

from __future__ import annotations

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.suggestions import is_spelling_fix
from tests.answer.conftest import FileSource


def test_spelling_fixes_are_misspellings_not_unrelated_words() -> None:
    assert is_spelling_fix("parse_confg", "parse_config")
    assert not is_spelling_fix("click", "cli")
    assert not is_spelling_fix("build", "Guild")
    assert not is_spelling_fix("config", "config")


def test_a_refusal_says_what_was_searched_and_offers_actions(source, fake_api, llm) -> None:
    ans = ask(AskRequest("how is the settings dict normalised?", min_score=0.95), source, llm=llm)
    out = ans.to_json()
    assert ans.state == "FAIL" and not fake_api.message_requests
    assert out["searched"].startswith("Searched the project main for “how is the settings")
    assert "nothing reached minScore 0.95; the closest, server/config.py:" in out["searched"]
    kinds = [a["kind"] for a in out["actions"]]
    assert kinds[0] == "open" and len(kinds) == 3
    first = out["actions"][0]
    assert first["path"] == "server/config.py" and first["startLine"] >= 1
    assert first["endLine"] >= first["startLine"]
    assert out["suggestions"] == [a["label"] for a in out["actions"]]  # older clients
    assert not any("minScore to" in a["label"] for a in out["actions"])
    # Something was found: no advice may say that nothing shares the question's words.
    assert not any(a["label"].startswith("Nothing indexed") for a in out["actions"])


def test_a_filter_that_cut_everything_becomes_a_scope_action(source, fake_api, llm) -> None:
    ans = ask(AskRequest("where is parse_config defined?", path_prefix="docs/"), source, llm=llm)
    scopes = [a for a in ans.to_json()["actions"] if a["kind"] == "scope"]
    assert {k: v for k, v in scopes[0].items() if k != "label"} == {
        "kind": "scope",
        "pathPrefix": None,
    }
    narrow = ask(AskRequest("kubernetes parse_config helm", min_score=0.99), source, llm=llm)
    assert any(a.get("pathPrefix") == "server/" for a in narrow.to_json()["actions"])


def test_nothing_found_says_wait_for_indexing_only_while_it_runs(source, fake_api, llm) -> None:
    question = "how are zookeeper quorum elections retried?"  # no word of it is indexed
    done = [a["label"] for a in ask(AskRequest(question), source, llm=llm).to_json()["actions"]]
    assert done[0].startswith("Nothing indexed in this workspace shares these words")
    assert not any("Indexing is not finished" in label for label in done)
    source.index_unfinished = lambda: True  # a project still being indexed
    running = [a["label"] for a in ask(AskRequest(question), source, llm=llm).to_json()["actions"]]
    assert running[0].startswith("Indexing is not finished")
    assert not fake_api.message_requests


def test_advice_never_says_nothing_matched_next_to_a_match(tmp_path, fake_api, llm) -> None:
    (tmp_path / "main.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    one = FileSource({"main": tmp_path}).index()  # a single passage: few concrete picks
    out = ask(AskRequest("how does greet format farewells?", min_score=0.99), one, llm=llm)
    labels = [a["label"] for a in out.to_json()["actions"]]
    assert out.state == "FAIL" and labels[0].startswith("Open `greet` in main.py")
    assert not any(label.startswith("Nothing indexed") for label in labels), labels


def test_a_passage_scoring_zero_is_not_called_a_close_match(tmp_path, fake_api, llm) -> None:
    (tmp_path / "main.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    one = FileSource({"main": tmp_path}).index()
    one.fixed_scores = {"greet": 0.001}  # what the gate makes of an absent name's neighbours
    out = ask(AskRequest("how does greet format farewells?"), one, llm=llm).to_json()
    opens = [a["label"] for a in out["actions"] if a["kind"] == "open"]
    assert opens == ["Open main.py:1-2, the nearest indexed passage"], opens
    one.fixed_scores = {"greet": 0.31}
    out = ask(AskRequest("how does greet format farewells?"), one, llm=llm).to_json()
    opens = [a["label"] for a in out["actions"] if a["kind"] == "open"]
    assert opens == ["Open `greet` in main.py:1-2, the closest match (score 0.31)"], opens
