"""Ask through the engine: depth decision, conversation memory, selection as evidence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass_server.engine import Engine
from code_compass_server.errors import InputError
from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES


@pytest.fixture
def engine(
    tmp_path: Path, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> Engine:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    e = make_engine(write_tree(tmp_path / "ws", SAMPLE_FILES))
    e.index()
    return e


def test_conversation_follow_up_gets_continuity_depth(engine: Engine) -> None:
    first = engine.ask({"query": "where is parse_config defined?", "conversationId": "c1"})
    assert first["depth"] == "D0" and first["conversationId"] == "c1"
    assert first["meta"]["llmCalled"] is False  # no key: extractive, labelled
    follow = engine.ask({"query": "and the tests?", "conversationId": "c1"})
    assert follow["depth"] == "D1" and follow["depthSignals"]
    other = engine.ask({"query": "and the tests?", "conversationId": "c2"})
    assert other["depth"] != "D1" or not other["depthSignals"]  # no memory leaks across ids
    log = engine.storage / "logs" / "depth-decisions.jsonl"
    assert len(log.read_text().splitlines()) == 3


def test_selection_is_evidence(engine: Engine) -> None:
    answer = engine.ask(
        {
            "query": "what does this code do?",
            "activeFile": "src/config_loader.py",
            "selection": {"startLine": 5, "endLine": 8, "text": "def parse_config(path: str)"},
            "minScore": 0.6,
        }
    )
    spans = [(e["path"], e["startLine"], e["endLine"]) for e in answer["evidences"]]
    assert ("src/config_loader.py", 5, 8) in spans
    assert answer["state"] != "FAIL"
    # A selection that starts mid-line is evidence as whole lines, current, not "edited".
    assert not any("re-located" in c for c in answer["confidence"]["caveats"])


def test_bad_selection_and_conversation_rejected(engine: Engine) -> None:
    with pytest.raises(InputError, match="selection"):
        engine.ask({"query": "x", "selection": {"startLine": 0, "endLine": 2, "text": "a"}})
    with pytest.raises(InputError, match="conversationId"):
        engine.ask({"query": "x", "conversationId": "c" * 500})


def test_long_unchanged_evidence_is_current_not_relocated(
    tmp_path: Path, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    body = "\n".join(f"    total += step_{i}(value)" for i in range(60))
    src = f"def accumulate_all_steps(value):\n    total = 0\n{body}\n    return total\n"
    engine = make_engine(write_tree(tmp_path / "ws", {"calc.py": src}))
    engine.index()
    answer = engine.ask({"query": "accumulate_all_steps", "minScore": 0.0})
    assert answer["evidences"] and answer["evidences"][0]["path"] == "calc.py"
    # The display snippet is bounded, but re-reading compares the whole chunk: no false edit.
    assert not any("re-located" in c for c in answer["confidence"]["caveats"])
