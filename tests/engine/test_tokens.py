from pathlib import Path

from code_compass_server.index.lexical import LexicalDoc, LexicalIndex, body_words
from code_compass_server.index.tokens import (
    code_terms,
    path_terms,
    split_identifier,
    stem_words,
    symbol_terms,
    word_stem,
)


def test_body_words_split_snake_case_and_keep_camel_case_glued() -> None:
    assert body_words("parseConfig(parse_config, utf8)") == [
        "parseconfig", "parse", "config", "utf8",
    ]  # fmt: skip


def test_code_terms_keep_snake_case_whole_and_split_camel_case() -> None:
    assert split_identifier("getHTTPResponse2") == ("get", "http", "response", "2")
    terms = set(code_terms("x = HTTPServer(parseConfig, self._meta, __init__, MAX_SIZE)").split())
    assert terms == {
        "http", "server", "parse", "config", "_meta", "__init__", "max_size",
    }  # fmt: skip
    assert code_terms("plain words only = lowercase; Capitalized too") == ""
    assert code_terms("café_crème = naïve") == ""  # non-ASCII letters: body words only


def test_symbol_and_path_terms_hold_wholes_and_parts() -> None:
    assert symbol_terms("HttpServer.parseConfig") == (
        "httpserver parseconfig http server parse config"
    )
    assert symbol_terms("save") == "save"
    assert path_terms("src/HttpServer/url_utils.py") == "src http server url utils py"


def test_query_words_drop_stop_words_and_stem() -> None:
    assert stem_words("how is the parsing of configs done") == [
        "how", "pars", "config", "done",
    ]  # fmt: skip
    assert stem_words("HTTPServer") == ["http", "server"]
    assert word_stem("parsing") == word_stem("parse") == "pars"


def test_word_forms_match_at_query_time(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path)
    index.replace_paths(
        [],
        [
            LexicalDoc("a", "a.py", "python", "code", "parse", "def parse(text): pass"),
            LexicalDoc("b", "b.py", "python", "code", "load", "def load(queries): pass"),
            LexicalDoc("c", "c.py", "python", "code", "parser", "class Parser: pass"),
        ],
    )
    index.commit()
    assert [h.chunk_id for h in index.search("parsing", 10)] == ["a"]  # not `parser`
    assert [h.chunk_id for h in index.search("query", 10)] == ["b"]  # queri -> queries
    assert index.count("parse") == 1
    index.close()


def test_a_name_holding_a_dollar_is_found_by_its_indexed_word(tmp_path: Path) -> None:
    # The body tokenizer splits `$mobx` into `mobx`: hover evidence, lens counts and
    # references look a `$`-name up by that word (then scan the passages for the whole name).
    index = LexicalIndex(tmp_path)
    index.replace_paths(
        [],
        [
            LexicalDoc("a", "a.ts", "typescript", "code", "get", "return this[$mobx].get_(k)"),
            LexicalDoc("b", "b.ts", "typescript", "code", "other", "const mobxLike = 1"),
        ],
    )
    index.commit()
    assert [h.chunk_id for h in index.term_hits("$mobx", 10)] == ["a"]
    assert index.count("$mobx") == 1
    assert index.term_hits("$", 10) == []  # no part to look up: nothing, not every passage
    index.close()
