"""The parse-tree resolver for Python: scopes, imports, classes, outside names, undecided."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_python import NOTHING, PythonScopes

FILES = {
    "pkg/__init__.py": "from .core import Engine as Engine\nfrom .helpers import *\n",
    "pkg/helpers.py": (
        '"""Helpers."""\n'
        "def helper(x):\n"
        '    """Double it.\n\n    More text."""\n'
        "    return x * 2\n"
        "_private = 1\n"
    ),
    "pkg/base.py": (
        "class Base:\n"
        "    kind = 'base'\n"
        "    def start(self):\n"
        "        self.started = True\n"
        "    def stop(self):\n"
        "        return self.started\n"
        "from io import BytesIO\n"
        "class Buffer(BytesIO):\n"
        "    def rewind(self):\n"
        "        return self.seek(0), self.rewind\n"
    ),
    "pkg/core.py": (
        "import json\n"
        "from . import helpers\n"
        "from .base import Base as Parent\n"
        "\n"
        "LIMIT = 10\n"
        "\n"
        "class Engine(Parent):\n"
        "    def __init__(self, size, *, name='e'):\n"
        "        self.size = size\n"
        "        super().start()\n"
        "    def run(self, n):\n"
        "        total = 0\n"
        "        if n:\n"
        "            total = n\n"
        "        print(total, LIMIT, json.dumps(n), helpers.helper(n))\n"
        "        return self.stop() + self.size + self.kind\n"
        "\n"
        "def make():\n"
        "    e = Engine(3, name='x')  # Engine in a comment\n"
        "    s = 'Engine in a string'\n"
        "    return e.whatever, s, unknown_name\n"
    ),
    "app.py": (
        "from pkg import Engine, helper\n"
        "import pkg.core as core\n"
        "café = Engine(1)\n"
        "café.run(helper(2)); core.LIMIT\n"
    ),
}


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def at(scopes: PythonScopes, rel: str, line: int, word: str, nth: int = 0) -> list[str]:
    """Targets ("path:line") of the nth occurrence of `word` on 1-based `line`."""
    text = FILES[rel]
    src = text.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = src.index(word, col + 1)
    res = scopes.resolve(rel, text, line - 1, col)
    assert res is not None, (rel, line, word)
    if res.is_outside:
        return [f"outside:{res.outside}"]
    return [f"{t.path}:{t.line}" for t in res.targets]


def test_locals_parameters_and_reaching_assignments(repo: Path) -> None:
    s = PythonScopes(repo)
    assert at(s, "pkg/core.py", 9, "size", 1) == ["pkg/core.py:8"]  # the parameter
    # `total` after an `if` that may rebind it: the conditional binding, then the first
    assert at(s, "pkg/core.py", 15, "total") == ["pkg/core.py:14", "pkg/core.py:12"]
    assert at(s, "pkg/core.py", 15, "LIMIT") == ["pkg/core.py:5"]  # module global
    res = s.resolve(
        "pkg/core.py",
        FILES["pkg/core.py"],
        8,
        FILES["pkg/core.py"].split("\n")[8].index("size", 20),
    )
    assert res is not None and res.targets[0].local


def test_imports_aliases_reexports_and_star(repo: Path) -> None:
    s = PythonScopes(repo)
    # `from pkg import Engine`: through __init__'s `from .core import Engine as Engine`
    assert at(s, "app.py", 1, "Engine") == ["pkg/core.py:7"]
    # `helper` through `from .helpers import *`
    assert at(s, "app.py", 1, "helper") == ["pkg/helpers.py:2"]
    assert at(s, "app.py", 4, "helper") == ["pkg/helpers.py:2"]
    assert at(s, "app.py", 4, "LIMIT") == ["pkg/core.py:5"]  # module alias attribute
    assert at(s, "app.py", 2, "core", 0) == ["pkg/core.py:1"]  # `import pkg.core as core`
    assert at(s, "pkg/core.py", 15, "helper", 1) == ["pkg/helpers.py:2"]  # helpers.helper
    doc = s.resolve("app.py", FILES["app.py"], 0, FILES["app.py"].index("helper"))
    assert doc is not None and doc.targets[0].doc_summary == "Double it."


def test_self_super_class_hierarchy_and_keywords(repo: Path) -> None:
    s = PythonScopes(repo)
    assert at(s, "pkg/core.py", 16, "stop") == ["pkg/base.py:5"]  # inherited, aliased base
    assert at(s, "pkg/core.py", 16, "size") == ["pkg/core.py:9"]  # self.size = …
    assert at(s, "pkg/core.py", 16, "kind") == ["pkg/base.py:2"]  # class attribute of a base
    assert at(s, "pkg/core.py", 10, "start") == ["pkg/base.py:3"]  # super().start()
    assert at(s, "pkg/base.py", 6, "started") == ["pkg/base.py:4"]  # set in another method
    assert at(s, "pkg/core.py", 19, "name") == ["pkg/core.py:8"]  # keyword -> __init__ param
    assert at(s, "app.py", 4, "run") == ["pkg/core.py:11"]  # café = Engine(1); café.run


def test_outside_names_are_never_workspace_definitions(repo: Path) -> None:
    s = PythonScopes(repo)
    assert at(s, "pkg/core.py", 15, "print") == ["outside:builtins.print"]
    assert at(s, "pkg/core.py", 15, "dumps") == ["outside:json.dumps"]
    assert at(s, "pkg/core.py", 1, "json") == ["outside:json"]
    # a member no workspace class defines, on a class whose base is outside: outside too
    assert at(s, "pkg/base.py", 10, "seek") == ["outside:io.BytesIO.seek"]
    assert at(s, "pkg/base.py", 10, "rewind") == ["pkg/base.py:9"]


def test_undecided_and_nothing(repo: Path) -> None:
    s = PythonScopes(repo)
    text = FILES["pkg/core.py"]
    lines = text.split("\n")
    # an attribute of a value the parse tree cannot type: left to jedi
    assert s.resolve("pkg/core.py", text, 20, lines[20].index("whatever")) is None
    # a name bound nowhere and not a builtin: undecided too
    assert s.resolve("pkg/core.py", text, 20, lines[20].index("unknown_name")) is None
    # words in comments and strings name nothing (and jedi is not asked)
    assert s.resolve("pkg/core.py", text, 18, lines[18].index("Engine in")) is NOTHING
    assert s.resolve("pkg/core.py", text, 19, lines[19].index("Engine")) is NOTHING
    # half-typed code: no parse, undecided
    assert s.resolve("pkg/core.py", text + "\ndef broken(:\n", 4, 0) is None


def test_columns_are_str_units_on_non_ascii_lines(repo: Path) -> None:
    s = PythonScopes(repo)
    # `Engine(1)` after a non-ASCII name on the same line
    assert at(s, "app.py", 3, "Engine") == ["pkg/core.py:7"]


def test_resolver_front_door_uses_the_fast_path_and_caches(repo: Path) -> None:
    r = SymbolResolver()
    try:
        text = FILES["app.py"]
        res = r.resolve(repo, "app.py", "python", text, 2, text.split("\n")[2].index("Engine"))
        assert res is not None
        assert [t.path for t in res.targets] == ["pkg/core.py"]
        assert r.resolve(repo, "README.md", "markdown", "Engine", 0, 0) is None
    finally:
        r.close()
