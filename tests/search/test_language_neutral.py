"""Signals that must not depend on the language a question is written in: the ranker and the
linear relevance read them for Portuguese questions as for their English twins."""

from __future__ import annotations

import pytest

from code_compass_server.query import build_query
from code_compass_server.search.signals import query_info

TWINS = [
    ("how do I give up after 5 attempts or 10 seconds?",
     "como faço pra desistir depois de 5 tentativas ou 10 segundos?"),
    ("why does the watcher stop after the directory is renamed?",
     "por que o watcher para depois que o diretório é renomeado?"),
    ("what happens if the callback raises an exception?",
     "o que acontece se o callback lançar uma exceção?"),
]  # fmt: skip


@pytest.mark.parametrize(("en", "pt"), TWINS)
def test_a_portuguese_question_asks_for_behaviour_as_its_english_twin(en: str, pt: str) -> None:
    """The intent is read on the rendering the channels search with, where the Portuguese
    question has lost its auxiliaries ("como faço pra desistir" -> "how desistir")."""
    rendered = build_query(pt).rewritten
    assert query_info(en).behaviour
    assert query_info(rendered).behaviour, rendered


def test_how_many_is_not_a_question_about_behaviour() -> None:
    assert not query_info("how many workers does the pool start").behaviour
    assert not query_info("where is the default timeout defined").behaviour
