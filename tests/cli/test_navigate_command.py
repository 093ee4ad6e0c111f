"""`code-compass definition` / `references PATH:LINE:COL`: the resolved answer as JSON, and
bad input refused with exit 2 (the reason on stderr, nothing indexed when the position itself
is malformed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.mcp_server.test_navigation import SHOP


def run(*args: str, storage: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "code_compass_server", *args, "--storage", str(storage)],
        capture_output=True, text=True, cwd=cwd, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("nav") / "shop", SHOP)


def test_definition_and_references_json(shop: Path, tmp_path: Path) -> None:
    st = tmp_path / "st"
    # Relative to the current folder, as a compiler prints it.
    out = run("definition", "shop/checkout.py:13:17", "--json", storage=st, cwd=shop)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    first = data["definitions"][0]
    assert {"path", "startLine", "endLine", "symbol", "kind", "snippet"} <= set(first)
    assert (first["path"], first["startLine"], first["endLine"]) == ("shop/payments.py", 2, 4)
    assert first["symbol"] == "CardGateway.charge" and first["kind"] == "method"
    assert first["snippet"].split("\n")[0] == "    def charge(self, amount):"
    out = run("references", f"{shop}/shop/payments.py:8:9", "--workspace", str(shop), "--json",
              storage=st)  # fmt: skip
    assert out.returncode == 0, out.stderr
    refs = json.loads(out.stdout)["references"]
    assert [(r["path"], r["startLine"], r["symbol"], r["kind"]) for r in refs] == [
        ("shop/payments.py", 8, "VoucherGateway.charge", "definition"),
        ("shop/checkout.py", 12, "VoucherGateway.charge", "reference"),
    ]


def test_references_limit_lists_that_many_and_0_lists_all(shop: Path, tmp_path: Path) -> None:
    st = tmp_path / "st"
    one = run("references", "shop/payments.py:8:9", "--limit", "1", "--json", storage=st, cwd=shop)
    assert one.returncode == 0, one.stderr
    data = json.loads(one.stdout)
    assert len(data["references"]) == 1 and data["total"] == 2
    every = run(
        "references", "shop/payments.py:8:9", "--limit", "0", "--json", storage=st, cwd=shop
    )
    assert len(json.loads(every.stdout)["references"]) == 2
    bad = run("references", "shop/payments.py:8:9", "--limit", "-3", storage=st, cwd=shop)
    assert bad.returncode == 2 and "limit: '-3' is not a whole number" in bad.stderr


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ("shop/checkout.py", "position: 'shop/checkout.py' is not PATH:LINE:COL"),
        ("shop/checkout.py:x:1", "line: 'x' is not a whole number"),
        ("shop/checkout.py:3:0", "column: '0' is not a whole number of at least 1"),
        ("shop/checkout.py:0:1", "line: '0' is not a whole number of at least 1"),
        ("/etc/hostname:1:1", "is outside the workspace"),
        ("shop/missing.py:1:1", "no file 'shop/missing.py' in the workspace"),
        ("shop:1:1", "is a folder"),
    ],
)
def test_bad_input_exits_2_before_anything_opens(
    shop: Path, tmp_path: Path, position: str, message: str
) -> None:
    st = tmp_path / "st"
    out = run("definition", position, "--workspace", str(shop), storage=st, cwd=shop)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert not st.exists()  # refused before the index was opened


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ("shop/checkout.py:99:1", "line: is past the end of 'shop/checkout.py'"),
        ("shop/checkout.py:7:300", "column: is past the end of line 7"),
        (".env:1:1", "path: '.env' cannot be read: a secret file"),
    ],
)
def test_positions_the_file_does_not_have_exit_2(
    shop: Path, tmp_path: Path, position: str, message: str
) -> None:
    out = run("references", position, "--workspace", str(shop), storage=tmp_path / "st", cwd=shop)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr


LANGUAGE_RULES = {
    "src/counter.ts": (
        "export class Counter {\n"
        "  #count = 0\n"
        "  inc(other: Counter): number { return this.#count + other.#count }\n"
        "}\n"
    ),
    "src/other.ts": (
        "export class Other {\n  #count = 1\n  get(): number { return this.#count }\n}\n"
    ),
    "go.mod": "module example.com/m\n\ngo 1.19\n",
    "m.go": 'package m\n\nfunc Hello() string { return "hi" }\n',
    "m_test.go": "package m\n\nfunc helper() string { return Hello() }\n",
    "_examples/main.go": (
        'package main\n\nimport "example.com/m"\n\nfunc main() { println(m.Hello()) }\n'
    ),
}


def test_private_names_at_their_hash_and_references_the_go_tool_would_build(
    tmp_path: Path,
) -> None:
    """A position on the `#` of `this.#count` (where compilers put the column) names the
    class's own `#count`, and its references stay in that class (another class's `#count` is
    another name); a Go function's references leave out `_examples/`, which the go tool does
    not build as part of the module."""
    ws = write_tree(tmp_path / "ws", LANGUAGE_RULES)
    st = tmp_path / "st"
    line = LANGUAGE_RULES["src/counter.ts"].split("\n")[2]
    col = line.index("#count") + 1
    out = run("definition", f"src/counter.ts:3:{col}", "--json", storage=st, cwd=ws)
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout)["definitions"][0]
    assert (first["path"], first["line"]) == ("src/counter.ts", 2)
    out = run("references", "src/counter.ts:2:3", "--json", storage=st, cwd=ws)
    assert out.returncode == 0, out.stderr
    refs = json.loads(out.stdout)["references"]
    assert sorted({(r["path"], r["line"]) for r in refs}) == [
        ("src/counter.ts", 2),
        ("src/counter.ts", 3),
    ]
    assert sum(1 for r in refs if r["line"] == 3) == 2  # `this.#count` and `other.#count`
    out = run("references", "m.go:3:6", "--json", storage=st, cwd=ws)
    assert out.returncode == 0, out.stderr
    paths = {r["path"] for r in json.loads(out.stdout)["references"]}
    assert paths == {"m.go", "m_test.go"}
