from code_compass.index.lexical import analyze
from code_compass.index.tokens import (
    IDENT_TOKENIZER,
    PARTS_TOKENIZER,
    STEM_TOKENIZER,
    compound_parts,
    split_identifier,
)


def test_identifiers_kept_whole_and_lowercased() -> None:
    assert analyze("parseConfig(parse_config, utf8)", IDENT_TOKENIZER) == [
        "parseconfig",
        "parse_config",
        "utf8",
    ]


def test_parts_split_camel_snake_and_digits() -> None:
    assert analyze("parseConfig parse_config utf8Decoder", PARTS_TOKENIZER) == [
        "parse", "config", "parse", "config", "utf", "8", "decoder",
    ]  # fmt: skip


def test_camel_and_acronyms_split_in_python_where_rust_regex_cannot() -> None:
    assert split_identifier("getHTTPResponse2") == ("get", "http", "response", "2")
    assert set(compound_parts("x = HTTPServer(parseConfig)").split()) == {
        "http", "server", "parse", "config",
    }  # fmt: skip
    assert compound_parts("plain_words only = lowercase") == ""


def test_body_stem_is_fast_simple_tokenizer_stemmed() -> None:
    from code_compass.index.tokens import BODY_STEM_TOKENIZER

    assert analyze("Parsing the parse_config files", BODY_STEM_TOKENIZER) == [
        "pars", "pars", "config", "file",
    ]  # fmt: skip


def test_stem_field_drops_stop_words_and_stems() -> None:
    assert analyze("how is the parsing of configs done", STEM_TOKENIZER) == [
        "how", "pars", "config", "done",
    ]  # fmt: skip
