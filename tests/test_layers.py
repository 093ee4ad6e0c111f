"""The import layers of docs/architecture.md hold: scripts/check_layers.py finds no violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_layers.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_the_repository_has_no_forbidden_import() -> None:
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 violation(s)" in result.stdout
    assert "engine -> " in result.stdout  # the graph was really read


def fake_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checker_catches_each_kind_of_violation(tmp_path: Path) -> None:
    server = fake_tree(
        tmp_path / "server",
        {
            "code_compass_server/__init__.py": "",
            "code_compass_server/engine.py": "from code_compass_server.index.scan import x\n",
            # the index importing a front door, lazily and only for typing: still forbidden
            "code_compass_server/index/__init__.py": "",
            "code_compass_server/index/scan.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from code_compass_server.lsp.server import CodeCompassServer\n"
                "def f():\n"
                "    from ..engine import Engine\n"
            ),
            "code_compass_server/index/chunk/__init__.py": (
                "from code_compass_server.index.catalog import C\n"
            ),
            # semantics is engine-side: it never reaches into a front door
            "code_compass_server/symbols/__init__.py": "",
            "code_compass_server/symbols/resolve.py": (
                "from code_compass_server.lsp.protocol_types import WireSearchHit\n"
            ),
            "code_compass_server/lsp/__init__.py": "",
            "code_compass_server/lsp/server.py": "import code_compass_server.engine\n",
            "code_compass_server/newthing/__init__.py": (
                "from code_compass_server import constants\n"
            ),
        },
    )
    client = fake_tree(
        tmp_path / "client",
        {
            "render/answer.ts": 'import * as vscode from "vscode";\n',
            "server.ts": 'import * as vscode from "vscode";\n',  # not a pure module: fine
        },
    )
    result = run("--server", str(server), "--client", str(client), "--quiet")
    out = result.stdout
    assert result.returncode == 1, out
    assert "index must not import lsp" in out
    assert "index must not import engine" in out  # relative import resolved
    assert "code_compass_server.index.chunk imports code_compass_server.index.catalog" in out
    assert "unit 'newthing' is not in ALLOWED" in out
    assert "symbols must not import lsp" in out
    assert "render/answer.ts:1: pure module imports vscode" in out
    assert "server.ts" not in out.replace("render/answer.ts", "")
    assert "6 violation(s)" in out
