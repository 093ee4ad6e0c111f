"""The command line's answer footer reads in the question's language (answer/messages.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES


def ask(question: str, ws: Path, storage: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}  # no LLM call
    out = subprocess.run(
        [sys.executable, "-m", "code_compass_server", "ask", question, "--workspace", str(ws),
         "--storage", str(storage)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("labels") / "ws", SAMPLE_FILES)


def test_footer_labels_follow_the_question_language(ws: Path, tmp_path: Path) -> None:
    pt = ask("como o arquivo de configuração TOML é lido?", ws, tmp_path / "st")
    assert "confiança" in pt and "cobertura" in pt and "profundidade" in pt
    assert "confidence" not in pt.split("[")[-1]
    en = ask("how is the TOML configuration file parsed?", ws, tmp_path / "st")
    assert "confidence" in en and "coverage" in en and "confiança" not in en
