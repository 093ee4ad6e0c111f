"""Text output cannot be spoofed (#32): control characters in file names, symbols and
snippets reach the terminal escaped in the CLI's text mode; --json stays exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from code_compass_server.text_escape import block, inline

SPOOF_NAME = "evil.py:1-2  0.999  function spoofed_target\nzz.py"


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODE_COMPASS_HOME": str(tmp_path / "home")}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "code_compass_server", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture
def hostile_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / SPOOF_NAME).write_text(
        "def spoofed_target():\n"
        "    '''clear \x1b[2J screen \x1b]0;title\x07 and \u202eright-to-left'''\n"
        "    return 'spoofed target value'\n"
    )
    return ws


def test_search_text_mode_escapes_names_and_snippets(tmp_path: Path, hostile_ws: Path) -> None:
    done = _cli(tmp_path, "search", "spoofed target", "--workspace", str(hostile_ws))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "spoofed_target\\nzz.py" in out  # the name's newline shown, not obeyed
    assert not any(line.startswith("zz.py") for line in out.splitlines())
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b[2J" in out


def test_json_mode_keeps_the_exact_name(tmp_path: Path, hostile_ws: Path) -> None:
    done = _cli(tmp_path, "search", "spoofed target", "--workspace", str(hostile_ws), "--json")
    assert done.returncode == 0, done.stderr
    paths = [h["path"] for h in json.loads(done.stdout)["hits"]]
    assert SPOOF_NAME in paths


def test_ask_and_status_text_modes_are_escaped(tmp_path: Path, hostile_ws: Path) -> None:
    done = _cli(tmp_path, "ask", "where is spoofed_target defined?", "--workspace", str(hostile_ws))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert not any(line.startswith("zz.py") for line in done.stdout.splitlines())
    status = _cli(tmp_path, "status", "--workspace", str(hostile_ws))
    assert status.returncode == 0, status.stderr
    assert "\x1b" not in status.stdout


@pytest.mark.parametrize(
    ("raw", "one_line", "lines"),
    [
        ("a\nb", "a\\nb", "a\nb"),
        ("tab\there", "tab\\there", "tab\there"),
        ("\x1b[31mred", "\\x1b[31mred", "\\x1b[31mred"),
        ("cr\rover", "cr\\rover", "cr\\rover"),
        ("bidi\u202eflip", "bidi\\u202eflip", "bidi\\u202eflip"),
        ("nul\x00", "nul\\x00", "nul\\x00"),
        ("c1\x9b", "c1\\x9b", "c1\\x9b"),
        ("plain ünïcode ✓", "plain ünïcode ✓", "plain ünïcode ✓"),
    ],
)
def test_escaping_rules(raw: str, one_line: str, lines: str) -> None:
    assert inline(raw) == one_line and block(raw) == lines
