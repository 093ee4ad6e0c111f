"""Fast checks of the server's pure parts: params."""

from __future__ import annotations

import pytest

from code_compass_server.errors import InputError
from code_compass_server.lsp.params import ask_request, search_params
from code_compass_server.settings import EngineSettings


def test_params_defaults_come_from_settings() -> None:
    s = EngineSettings(top_k=7, min_score=0.4)
    p = search_params({"query": "x"}, s, ["a"])
    assert p.top_k == 7 and p.min_score is None and p.project is None
    assert search_params({"query": "x", "project": "*"}, s, ["a"]).project is None
    ask = ask_request({"question": " why? ", "project": "a"}, s, ["a"])
    assert ask.body["query"] == "why?" and ask.body["minScore"] == 0.4
    assert ask.body["topK"] == 7 and ask.body["project"] == "a"
    with pytest.raises(InputError) as info:
        ask_request({"question": "why?", "requestId": [1]}, s, ["a"])
    assert info.value.field == "requestId"
