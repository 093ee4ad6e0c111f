"""docs/rules.md points at code and tests that exist: scripts/check_rules.py finds no problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_rules.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_every_reference_in_the_rules_table_resolves() -> None:
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    checked = int(result.stdout.split()[-5])
    assert checked > 100  # the table was really read


def test_the_checker_catches_missing_symbols_members_and_tests(tmp_path: Path) -> None:
    server = tmp_path / "server" / "code_compass_server"
    (server / "answer").mkdir(parents=True)
    (server / "__init__.py").write_text("")
    (server / "answer" / "__init__.py").write_text("")
    (server / "constants.py").write_text("A = 1\nif True:\n    B = 2\n")
    (server / "answer" / "verify.py").write_text(
        "from code_compass_server.constants import A\n"
        "class V:\n    x: int\n    def __init__(self):\n        self.y = 1\n"
        "def verify():\n    pass\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_v.py").write_text("def test_ok():\n    pass\n")
    doc = tmp_path / "rules.md"
    doc.write_text(
        "| rule | what | seed | where in code | test |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| `good` | . | . | `constants::A`, `B`, `answer.verify::V.x`, `answer.verify::V.y`, "
        "`answer.verify` (`ignored::here`) | `tests/test_v.py::test_ok` |\n"
        "| `bad` | . | . | `answer.verify::A`, `answer.verify::V.z`, `answer.gone::f`, `C` "
        "| `tests/test_v.py::test_gone`, `tests/nothing.py::test_x` |\n"
    )
    result = run("--doc", str(doc), "--server", str(tmp_path / "server"), "--root", str(tmp_path))
    out = result.stdout
    assert result.returncode == 1, out
    assert "good:" not in out
    assert "bad: where in code `answer.verify::A`: answer.verify defines no A" in out  # imported
    assert "answer.verify::V has no member z" in out
    assert "no module answer.gone" in out
    assert "bad: where in code `C`: no module answer.gone" in out  # bare: last module
    assert "tests/test_v.py has no test_gone" in out
    assert "no file tests/nothing.py" in out
    assert "12 reference(s) checked, 6 problem(s)" in out
