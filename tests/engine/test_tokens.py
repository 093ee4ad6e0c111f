from code_compass.index.lexical import analyze
from code_compass.index.tokens import (
    IDENT_TOKENIZER,
    PARTS_TOKENIZER,
    STEM_TOKENIZER,
    acronym_parts,
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


def test_acronyms_split_in_python_where_rust_regex_cannot() -> None:
    assert split_identifier("getHTTPResponse2") == ("get", "http", "response", "2")
    assert set(acronym_parts("x = HTTPServer()").split()) == {"http", "server"}
    assert acronym_parts("plain_words only") == ""


def test_stem_field_drops_stop_words_and_stems() -> None:
    assert analyze("how is the parsing of configs done", STEM_TOKENIZER) == [
        "how", "pars", "config", "done",
    ]  # fmt: skip
