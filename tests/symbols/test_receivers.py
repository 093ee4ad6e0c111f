"""Receiver types as the language decides them, on the parse-tree fast path (no jedi): a
method name defined in several classes resolves to the one the receiver's type names."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.symbols.resolve_python import PythonScopes
from code_compass_server.symbols.resolve_tree import TreeScopes
from tests.conftest import write_tree

PY = {
    "pkg/__init__.py": "from .core import Engine as Engine\n",
    "pkg/core.py": (
        "class Tag:\n"
        "    def check(self, value):\n"
        "        return True\n"
        "\n"
        "\n"
        "class Other:\n"
        "    def check(self, value):\n"
        "        return False\n"
        "\n"
        "\n"
        "class Engine:\n"
        "    def __init__(self):\n"
        "        self.tag = Tag()\n"
        "        self.other: Other = make_other()\n"
        "        self.late = None\n"
        "\n"
        "    def make_tag(self) -> Tag:\n"
        "        return Tag()\n"
        "\n"
        "    def run(self):\n"
        "        self.tag.check(3)\n"
        "        self.other.check(4)\n"
        "        x = self.make_tag()\n"
        "        x.check(5)\n"
        "        make_other().check(7)\n"
        "        self.late.check(8)\n"
        "\n"
        "    def start(self):\n"
        "        self.late = Other()\n"
        "\n"
        "\n"
        'def make_other() -> "Other":\n'
        "    return Other()\n"
    ),
    "app.py": "import pkg\n\npkg.Engine().make_tag().check(9)\n",
}

GO = {
    "go.mod": "module example.com/gin\n\ngo 1.21\n",
    "binding/binding.go": (
        "package binding\n"
        "\n"
        "type Binding interface {\n"
        "\tName() string\n"
        "\tBind(obj any) error\n"
        "}\n"
        "\n"
        "type jsonBinding struct{}\n"
        "\n"
        'func (jsonBinding) Name() string { return "json" }\n'
        "\n"
        "func (jsonBinding) Bind(obj any) error { return nil }\n"
        "\n"
        "var JSON = jsonBinding{}\n"
        "\n"
        "func Default() Binding { return JSON }\n"
    ),
    "render/render.go": (
        "package render\n\ntype XML struct {\n\tData any\n}\n\n"
        "func (r XML) Render() error { return nil }\n"
    ),
    "context.go": (
        "package gin\n"
        "\n"
        "import (\n"
        '\t"example.com/gin/binding"\n'
        '\t"example.com/gin/render"\n'
        '\t"net/http"\n'
        ")\n"
        "\n"
        "type Context struct {\n"
        "\tb binding.Binding\n"
        "}\n"
        "\n"
        "func (c *Context) Bind(obj any) error {\n"
        "\tc.b.Bind(obj)\n"
        "\tbinding.JSON.Bind(obj)\n"
        "\tx := render.XML{}\n"
        "\tx.Render()\n"
        "\tbinding.Default().Name()\n"
        "\treturn http.ErrAbortHandler\n"
        "}\n"
    ),
}


def _at(files: dict[str, str], rel: str, line: int, word: str) -> tuple[int, str]:
    return line - 1, files[rel].split("\n")[line - 1].index(word)


def test_python_receivers_from_attributes_annotations_and_return_types(tmp_path: Path) -> None:
    root = write_tree(tmp_path, PY)
    s = PythonScopes(root)

    def first(rel: str, line: int, word: str) -> tuple[str, int] | None:
        res = s.resolve(rel, PY[rel], *_at(PY, rel, line, word))
        return (res.targets[0].path, res.targets[0].line) if res and res.targets else None

    assert first("pkg/core.py", 21, "check") == ("pkg/core.py", 2)  # self.tag = Tag()
    assert first("pkg/core.py", 22, "check") == ("pkg/core.py", 7)  # self.other: Other
    assert first("pkg/core.py", 24, "check") == ("pkg/core.py", 2)  # x = self.make_tag()
    assert first("pkg/core.py", 25, "check") == ("pkg/core.py", 7)  # -> "Other"
    assert first("pkg/core.py", 26, "check") == ("pkg/core.py", 7)  # None first, Other()
    assert first("app.py", 3, "check") == ("pkg/core.py", 2)  # through __init__'s re-export


def test_go_package_qualified_names_interfaces_and_results(tmp_path: Path) -> None:
    root = write_tree(tmp_path, GO)
    s = TreeScopes(root)

    def first(line: int, word: str) -> str | None:
        res = s.resolve("context.go", "go", GO["context.go"], *_at(GO, "context.go", line, word))
        if res is None:
            return None
        return f"{res.targets[0].path}:{res.targets[0].line}" if res.targets else res.outside

    assert first(14, "Bind") == "binding/binding.go:5"  # an interface-typed field: its member
    assert first(15, "JSON") == "binding/binding.go:14"  # another package of the module
    assert first(15, "Bind") == "binding/binding.go:12"  # the var's type's method
    assert first(16, "XML") == "render/render.go:3"
    assert first(17, "Render") == "render/render.go:7"
    assert first(18, "Name") == "binding/binding.go:4"  # a function's result type
    assert first(19, "ErrAbortHandler") == "net/http.ErrAbortHandler"  # still outside
