"""The offline query builder: language, lexicon look-ups and the rendering of sample questions."""

from __future__ import annotations

from importlib import resources

import pytest

from code_compass_server.query import (
    build_query,
    fit_to_index,
    looks_portuguese,
    passthrough,
    question_language,
)
from code_compass_server.query.lexicon import fold, parse_lexicon, portuguese_lexicon
from code_compass_server.search.searcher import scored_text


@pytest.mark.parametrize(
    ("question", "rewritten"),
    [
        ("onde o flask registra as rotas?", "where flask register route"),
        (
            "Como o Flask carrega configuração de variáveis de ambiente?",
            "how Flask load config environment variable",
        ),
        ("onde o django valida as senhas dos usuários?", "where django validate password user"),
        ("o que faz o squash de migrations?", "what squash migrations"),
        ("quais strings o converters.to_bool aceita?", "which strings converters.to_bool accept"),
        (
            "como o transaction.atomic se comporta quando está aninhado?",
            "how transaction.atomic if behave when nested",
        ),
        ("onde fica o banco de dados padrão?", "where database default"),
    ],
)
def test_portuguese_questions_are_rendered_in_english(question: str, rewritten: str) -> None:
    q = build_query(question)
    assert q.language == "pt" and q.source == "lexicon"
    assert q.rewritten == rewritten
    assert q.original == question


def test_identifiers_quotes_and_names_are_kept_verbatim() -> None:
    q = build_query('por que o `parse_config()` lança "Invalid token" no HTTPServer.start?')
    words = q.rewritten.split()
    assert "parse_config()" in words and "HTTPServer.start" in words
    assert "Invalid token" in q.rewritten
    assert q.rewritten.startswith("why ")


def test_ambiguous_words_keep_every_sense_for_bm25() -> None:
    q = build_query("onde fica o modelo do usuário?")
    assert q.rewritten == "where model user"  # the first sense carries the score
    assert {"model", "template", "user"} <= set(q.lexical.split())
    assert {"template", "where"} <= set(q.added)
    # The question's own words stay searchable (a Portuguese comment or doc can match them).
    assert "usuario" in q.lexical.split()


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("registra", "register"),  # present, 3rd person
        ("registrou", "register"),  # past
        ("registrando", "register"),  # gerund
        ("registradas", "register"),  # participle, feminine plural
        ("validam", "validate"),
        ("senhas", "password"),  # plural -s
        ("migrações", "migration"),  # -ões -> -ão
        ("valores", "value"),  # -es
        ("canais", "channel"),  # -ais -> -al
        ("itens", "item"),  # -ns -> -m
        ("assíncronas", "async"),  # feminine plural adjective
        ("herdo", "inherit"),  # 1st person
        ("busque", "search"),  # -que -> -car
        ("carregue", "load"),  # -gue -> -gar
        ("virarem", "become"),  # personal infinitive
    ],
)
def test_inflected_forms_find_their_lemma(word: str, english: str) -> None:
    entry = portuguese_lexicon().lookup(fold(word))
    assert entry is not None and entry.english[0] == english


def test_phrases_match_before_words_and_in_any_inflection() -> None:
    q = build_query("como leio variáveis de ambiente e chaves estrangeiras?")
    assert "environment variable" in q.rewritten
    assert "foreign key" in q.rewritten
    assert "variable" not in q.rewritten.replace("environment variable", "")


@pytest.mark.parametrize(
    "question",
    [
        "Where is parse_config defined and what does it return?",
        "how do I make a field's default depend on another field?",
        "data model",  # "data" is Portuguese for date: an English query must not become one
        "parse_config",
        "use cache",
    ],
)
def test_english_and_undecided_questions_are_searched_as_written(question: str) -> None:
    q = build_query(question)
    assert q.source == "none"
    assert q.rewritten == question and q.lexical == question and q.added == ()
    assert q == passthrough(question)


def test_question_language() -> None:
    assert question_language("onde o flask registra as rotas?") == "pt"
    assert question_language("senha usuario") == "pt"  # too short for the stop-word vote
    assert question_language("registrar rota") == "pt"
    assert question_language("Where does flask register routes?") == "en"
    assert question_language("what does a do?") is None
    # A quoted English error message does not make a Portuguese question English.
    assert question_language('por que aparece "the session is unavailable because no key"?') == (
        "pt"
    )


def test_the_lexicon_file_names_its_source_and_is_large() -> None:
    text = (
        resources.files("code_compass_server.query").joinpath("lexicon_pt.tsv").read_text("utf-8")
    )
    header = [ln for ln in text.splitlines()[:12] if ln.startswith("#")]
    assert any(ln.startswith("# Source:") for ln in header)
    entries = parse_lexicon(text)
    translated = [e for e in entries if e.english]
    assert len(translated) >= 700
    assert len(portuguese_lexicon()) == len({e.words for e in entries})
    # Every line is well formed: words, a tab, English renderings (or nothing: dropped).
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            assert line.count("\t") == 1, line


def test_build_is_cheap_and_stable() -> None:
    a = build_query("onde o click decide o nome do programa?")
    b = build_query("onde o click decide o nome do programa?")
    assert a is b  # cached: search and ask build the same query once


class _Vocabulary:
    """The chunk counts `fit_to_index` and `scored_text` read: only `words` are in the index."""

    def __init__(self, *words: str) -> None:
        self.words = set(words)

    def word_count(self, word: str) -> int:
        return 3 if word.lower() in self.words else 0

    def count(self, term: str) -> int:
        return self.word_count(term)

    def num_docs(self) -> int:
        return 100


def test_an_english_word_the_workspace_lacks_stays_for_the_gate() -> None:
    """A Portuguese question keeps the English feature word it names ("websocket", "paginate"):
    absent from the index, the gate must see it as an English question's twin would."""
    index = _Vocabulary("httpx", "handle", "upgrade", "helper", "result", "query", "flask")
    for question, word in (
        ("onde o httpx trata o upgrade para websocket?", "websocket"),
        ("como pagino os resultados de uma query com o helper paginate do flask?", "paginate"),
        ("como defino um fator de backoff entre as tentativas?", "backoff"),
    ):
        query = fit_to_index(build_query(question), index)
        assert word in scored_text(query, index).split(), question


def test_portuguese_the_lexicon_lacks_is_not_counted_as_a_missing_feature() -> None:
    index = _Vocabulary("where", "pool")
    query = build_query("onde fica a tramela do pool?")  # not fitted: the word stays in it
    assert "tramela" in query.rewritten.split()
    assert "tramela" not in scored_text(query, index).split()
    assert "pool" in scored_text(query, index).split()


def test_looks_portuguese() -> None:
    assert looks_portuguese("tramela") and looks_portuguese("corrida")
    assert looks_portuguese("configuração")
    assert not looks_portuguese("websocket") and not looks_portuguese("backoff")
    assert not looks_portuguese("paginate")  # ends like Portuguese, but the lexicon's English
