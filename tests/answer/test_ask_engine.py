"""The ask pipeline against the real engine (Tantivy + catalog) on a fixture workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.engine import Engine
from tests.fakes.fake_anthropic import evidence_blocks

from .conftest import AUTH_PY, CONFIG_PY


@pytest.fixture
def engine(workspace: Path, tmp_path: Path) -> Iterator[Engine]:
    eng = Engine.open(tmp_path / "storage")
    eng.add_project(workspace)
    eng.index(embed=False)  # lexical is enough here; embeddings are another area's tests
    yield eng
    eng.close()


def test_grounded_answer_over_the_real_index(engine, fake_api, llm):
    fake_api.script("`parse_config` loads the TOML file at path {cite:E1}.")
    ans = ask(AskRequest("parse_config TOML configuration file", min_score=0.1), engine, llm=llm)
    assert ans.evidences, ans.to_json()
    assert ans.evidences[0].path == "server/config.py"
    assert ans.citations_used == ["E1"]
    assert ans.state in ("OK", "PARTIAL")
    sent = evidence_blocks(str(fake_api.message_requests[0].json["messages"][0]["content"]))
    assert sent[0]["path"] == "server/config.py"
    assert CONFIG_PY.splitlines()[5] in ans.evidences[0].text  # "def parse_config(path):"


def test_no_evidence_over_the_real_index_makes_no_request(engine, fake_api, llm):
    ans = ask(AskRequest("kubernetes helm chart ingress annotations"), engine, llm=llm)
    assert fake_api.requests == []
    assert ans.state == "FAIL" and ans.coverage == "none"
    assert len(ans.suggestions) == 3


def test_edit_after_indexing_over_the_real_index(engine, workspace, fake_api, llm):
    cfg = workspace / "server" / "config.py"
    cfg.write_text("# a new header line\n# another\n" + CONFIG_PY)
    fake_api.script("`parse_config` parses TOML {cite:E1}.")
    ans = ask(AskRequest("parse_config TOML configuration file", min_score=0.1), engine, llm=llm)
    ev = next(e for e in ans.evidences if e.hit.symbol.endswith("parse_config"))
    assert ev.start_line == ev.hit.start_line + 2 and ev.status == "moved"
    assert ev.text.startswith("def parse_config(path):")


def test_secret_in_indexed_file_is_redacted_over_the_real_index(engine, fake_api, llm):
    fake_api.forever("`check_token` compares tokens {cite:E1}.")
    ask(AskRequest("check_token API_KEY bearer token", min_score=0.05), engine, llm=llm)
    assert fake_api.message_requests, "expected an LLM call"
    assert "PLANTEDsecretVALUE" not in fake_api.all_bodies()
    assert "hunter2pass" not in fake_api.all_bodies()
    assert "PLANTED" in AUTH_PY
