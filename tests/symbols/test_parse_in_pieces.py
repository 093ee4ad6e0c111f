"""A large module parsed in pieces gives ast.parse's tree, positions included."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import code_compass_server
from code_compass_server.constants import PARSE_PIECE_BYTES
from code_compass_server.symbols.parse_in_pieces import parse_python

PACKAGE = Path(code_compass_server.__file__).parent


def same(text: str) -> None:
    assert ast.dump(parse_python(text), include_attributes=True) == ast.dump(
        ast.parse(text), include_attributes=True
    )


def parses_of(text: str) -> int:
    """How many times the C parser ran (`compile` calls) to parse `text`."""
    calls = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "c_call" and getattr(arg, "__name__", "") == "compile":
            calls += 1

    sys.setprofile(profile)
    try:
        parse_python(text)
    finally:
        sys.setprofile(None)
    return calls


def test_every_module_of_this_package_parses_the_same() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    large = [f for f in files if f.stat().st_size > 4 * PARSE_PIECE_BYTES]
    assert large, "no module large enough to be cut: the test would prove nothing"
    for f in files:
        same(f.read_text(encoding="utf-8"))


def test_a_large_module_is_parsed_in_pieces_no_larger_than_a_class_member() -> None:
    methods = "".join(
        f"    def m{i}(self, x):\n        return [x + {i}] * 3  # {'.' * 60}\n\n"
        for i in range(600)
    )
    text = "import os\n\nclass Big(object):\n    '''Doc.'''\n" + methods + "\nVALUE = Big()\n"
    same(text)
    assert parses_of(text) > len(text) // (2 * PARSE_PIECE_BYTES)


def test_lines_that_look_like_statements_inside_strings_and_brackets() -> None:
    filler = "".join(f"def f{i}(a, b):\n    return a * b + {i}\n\n\n" for i in range(400))
    tricky = (
        'DOC = """\nnot = code\nclass Fake:\n    pass\n"""\n'
        "LIST = [\n1,\n2,\n]\n"
        "TOTAL = 1 + \\\n2\n"
        "@decorator\n\n# a comment\n@other(\n    1,\n)\ndef decorated():\n    pass\n"
        "if DOC:\n    x = 1\nelse:\n    x = 2\n"
        "try:\n    pass\nexcept ValueError:\n    pass\nfinally:\n    pass\n"
        "class Holder(\n    Base,\n    metaclass=Meta,\n):  # a: comment\n"
        + "".join(
            f"    def h{i}(self):\n        return '''\n    def not_a_member(self):\n'''\n" * 1
            for i in range(500)
        )
        + "    x = lambda: {\n    'k': 1}\n"
    )
    same(filler + tricky + filler)
    same(tricky + filler)


def test_a_syntax_error_is_raised_as_ast_parse_raises_it() -> None:
    filler = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(1000))
    broken = filler + "def broken(:\n    pass\n" + filler
    with pytest.raises(SyntaxError) as ours:
        parse_python(broken)
    with pytest.raises(SyntaxError) as theirs:
        ast.parse(broken)
    assert ours.value.lineno == theirs.value.lineno
    with pytest.raises(SyntaxError):
        parse_python("    indented = 1\n" + filler)
