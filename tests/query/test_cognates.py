"""Cognates: a Portuguese word the lexicon lacks is rendered by the English word the workspace's
own index holds, and never by a word the index lacks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass_server.engine import Engine
from code_compass_server.query import build_query, fit_to_index
from code_compass_server.query.builder import Vocabulary
from code_compass_server.query.cognates import candidates
from code_compass_server.query.lexicon import portuguese_lexicon
from code_compass_server.records import SearchParams


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("heuristica", "heuristic"),
        ("idempotencia", "idempotence"),
        ("deteccao", "detection"),
        ("serializavel", "serializable"),
        ("compatibilidade", "compatibility"),
        ("explicitamente", "explicitly"),
        ("genericamente", "generically"),
        ("canonicalizar", "canonicalize"),
        ("progressivos", "progressive"),
        ("ortogonalidade", "orthogonality"),
        ("perimetro", "perimeter"),
        ("dinamicamente", "dynamically"),
    ],
)
def test_regular_spelling_changes_reach_the_english_word(word: str, english: str) -> None:
    assert portuguese_lexicon().lookup(word) is None  # else the lexicon, not a rule, renders it
    assert english in candidates(word)


def test_short_and_function_word_coincidences_are_never_candidates() -> None:
    assert "come" not in candidates("comando")  # too short to be more than a coincidence
    assert "said" not in candidates("saida")
    assert "which" not in candidates("whicha")


FILES: dict[str, str | bytes] = {
    "detect/heuristic.py": (
        '"""Heuristic detection of a text encoding."""\n\n\n'
        "def guess_encoding(data):\n"
        '    """Heuristic: try the detection of a byte order mark, then utf-8."""\n'
        '    return "utf-8"\n'
    ),
    "detect/other.py": (
        '"""Heuristic helpers for plain text."""\n\n\n'
        "def strip_marks(text):\n"
        '    """Remove a leading byte order mark."""\n'
        "    return text.lstrip()\n"
    ),
    "net/retry.py": (
        '"""Retries for network calls."""\n\n\n'
        "def backoff(attempt):\n"
        '    """Wait longer after each failed attempt."""\n'
        "    return 2**attempt\n"
    ),
}


@pytest.fixture
def engine(
    tmp_path: Path,
    tree: Callable[[Path, dict[str, str | bytes]], Path],
    make_engine: Callable[..., Engine],
) -> Engine:
    engine = make_engine(tree(tmp_path / "ws", dict(FILES)))
    engine.index(embed=False)
    return engine


def _lexical(engine: Engine) -> Vocabulary:
    return engine.project(engine.projects()[0]).lexical


def test_a_cognate_the_index_holds_replaces_the_portuguese_word(engine: Engine) -> None:
    question = "onde fica a heurística de detecção da codificação?"
    offline = build_query(question)
    assert "heuristic" not in offline.rewritten.split()  # the lexicon alone lacks it
    fitted = fit_to_index(offline, _lexical(engine))
    assert "heuristic" in fitted.rewritten.split()
    assert "detection" in fitted.rewritten.split()
    assert "heuristica" in fitted.lexical.split()  # the question's own word stays for BM25
    hits = engine.search(SearchParams(question, 3, None, None, None))
    assert hits and hits[0].path == "detect/heuristic.py", [(h.path, h.score) for h in hits]


def test_a_cognate_the_index_lacks_is_never_used(engine: Engine) -> None:
    """ "idempotente" has a cognate ("idempotent"), but no chunk holds it:
    no English the workspace lacks is invented."""
    offline = build_query("a função de retry é idempotente?")
    fitted = fit_to_index(offline, _lexical(engine))
    assert "idempotent" not in fitted.rewritten.split()
    assert "idempotente" in offline.rewritten.split()
    # Absent from the index and without a cognate there: out of the embedded rendering, still
    # offered to BM25.
    assert "idempotente" not in fitted.rewritten.split()
    assert "idempotente" in fitted.lexical.split()
    assert fitted.rewritten == "function retry"


def test_an_english_looking_word_the_index_lacks_stays_for_the_model(engine: Engine) -> None:
    fitted = fit_to_index(build_query("onde o retry trata o websocket?"), _lexical(engine))
    assert "websocket" in fitted.rewritten.split()


def test_english_questions_and_model_rewrites_are_left_alone(engine: Engine) -> None:
    lexical = _lexical(engine)
    english = build_query("where is the heuristic detection?")
    assert fit_to_index(english, lexical) is english
