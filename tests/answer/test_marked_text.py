"""The answer as text with its ungrounded sentences marked, as `code-compass ask` prints it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from code_compass_server.answer.marked_text import flagged_sentences, marked_answer
from code_compass_server.answer.messages import PT
from tests.fakes.fake_anthropic import FakeAnthropic

ANSWER = {
    "answer": "Parses the file [E1]. Caches it. Deploys helm charts [E1].",  # [E9] was removed
    "sentences": [
        {"text": "Parses the file [E1].", "start": 0, "end": 21, "verdict": "supported"},
        {
            "text": "Caches it.",
            "start": 22,
            "end": 32,
            "verdict": "uncited",
            "removedCitations": ["E9"],
        },
        {"text": "Deploys helm charts [E1].", "start": 33, "end": 58, "verdict": "unsupported"},
    ],
}


def test_markers_follow_the_flagged_sentences_and_the_legend_names_them() -> None:
    text, legend = marked_answer(ANSWER)
    assert "Caches it. [!uncited] [!citation removed: E9] Deploys" in text
    assert text.endswith("Deploys helm charts [E1]. [!unsupported]")
    assert "Parses the file [E1]. Caches" in text  # supported: no marker
    assert [line.split("]")[0] + "]" for line in legend] == [
        "[!unsupported]",
        "[!uncited]",
        "[!citation removed]",
    ]
    assert len(flagged_sentences(ANSWER)) == 2


def test_a_portuguese_question_gets_portuguese_marks_and_legend() -> None:
    text, legend = marked_answer(ANSWER, PT)
    assert "Caches it. [!sem citação] [!citação removida: E9] Deploys" in text
    assert text.endswith("[!sem suporte]")
    assert legend[0].startswith("[!sem suporte] os trechos")
    assert not any("[!unsupported]" in line or "evidence" in line for line in legend)
    assert flagged_sentences(ANSWER, PT)[0].startswith("[!sem citação]")


def test_cli_ask_marks_an_off_topic_sentence(workspace: Path, tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        fake.script(
            "`parse_config` reads the TOML configuration file and returns the settings [E1]. "
            "Kubernetes operators reconcile helm charts across every cluster namespace [E1]."
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="test-key-not-secret")
        out = subprocess.run(
            [
                *(
                    sys.executable,
                    "-m",
                    "code_compass_server",
                    "ask",
                    "where is parse_config defined?",
                ),
                *("--workspace", str(workspace), "--storage", str(tmp_path / "st")),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    assert out.returncode == 0, out.stderr
    assert "namespace [E1]. [!unsupported]" in out.stdout
    assert "the passages this sentence cites do not back it" in out.stdout
    assert "settings [E1]. [!" not in out.stdout
