"""Fast checks of the server's pure parts: word boundaries, params."""

from __future__ import annotations

import pytest

from code_compass_server.errors import InputError
from code_compass_server.lsp.identifiers import identifier_at, word_at
from code_compass_server.lsp.params import ask_request, search_params
from code_compass_server.settings import EngineSettings


@pytest.mark.parametrize(
    ("line", "col", "language", "expected"),
    [
        ("    return compute_discount(x)", 14, "python", "compute_discount"),
        ("    return compute_discount(x)", 27, "python", "compute_discount"),  # just after
        ("const $el = $(sel);", 7, "javascript", "$el"),
        ("let r#type = 1;", 6, "rust", "type"),
        ("x = 'compute_discount'", 8, "python", None),  # inside a string
        ("x = 1  # compute_discount here", 12, "python", "compute_discount"),  # comment
        ('y := fmt.Sprintf("%d", n)', 10, "go", "Sprintf"),
        ("if x:", 0, "python", None),  # keyword
        ("return None", 8, "python", None),  # literal
        ("x = 10_000", 6, "python", None),  # number
        ("func main() {", 1, "go", None),  # keyword
        ("See the cache docs.", 9, "markdown", None),  # plain prose word
        ("See `cache_get` docs.", 7, "markdown", "cache_get"),
        ("Call getUser first", 7, "text", "getUser"),
        ("   ", 1, "python", None),
    ],
)
def test_identifier_at(line: str, col: int, language: str, expected: str | None) -> None:
    word = identifier_at(line, col, language)
    assert (word.text if word else None) == expected


def test_word_at_reports_the_span() -> None:
    w = word_at("a = foo_bar(1)", 6, "python")
    assert w is not None and (w.start, w.end, w.text) == (4, 11, "foo_bar")


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
