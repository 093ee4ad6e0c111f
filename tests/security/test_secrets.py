"""Planted secrets never reach the LLM: a corpus of 67 values of 48 kinds (gitleaks' rule list
as the catalogue) in code, config, comments, Markdown and notebooks, indexed and asked through
the real pipeline against the fake Messages API (docs/rules.md: redact-before-llm)."""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, LlmConfig, ask
from code_compass_server.answer.redact import redact
from code_compass_server.engine import Engine
from code_compass_server.index.secrets_detect import find_secrets
from code_compass_server.settings import EngineSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from security.conftest import sent_text
from security.secrets_corpus import Corpus, build_corpus, fragments
from tests.fakes.fake_anthropic import FakeAnthropic, evidence_blocks


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return build_corpus()


@pytest.fixture
def engine(corpus: Corpus, tmp_path: Path) -> Iterator[Engine]:
    ws = tmp_path / "ws"
    corpus.write(ws)
    eng = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    eng.add_project(ws)
    eng.index(embed=False)
    yield eng
    eng.close()


def test_the_corpus_is_big_and_varied_enough(corpus: Corpus) -> None:
    assert len(corpus.planted) >= 60 and len(corpus.kinds) >= 30
    where = {Path(p.file).suffix for p in corpus.planted}
    assert {".py", ".js", ".go", ".yaml", ".toml", ".ini", ".md", ".ipynb", ".sh"} <= where


def test_the_maintained_detector_is_installed() -> None:
    assert importlib.metadata.version("detect-secrets") == "1.5.0"  # requirements.lock


def test_no_planted_secret_reaches_any_request_body(
    corpus: Corpus, engine: Engine, fake_api: FakeAnthropic, llm: LlmConfig
) -> None:
    fake_api.forever("Configured in this file {cite:E1}.")
    for rel, topic in corpus.topics.items():
        ask(AskRequest(topic, path_prefix=rel, min_score=0.0, top_k=10), engine, llm=llm)
    sent = sent_text(fake_api)
    # Every file went out as evidence: a clean result is not an empty one.
    paths = {b["path"] for b in evidence_blocks(sent)}
    assert set(corpus.files) <= paths, set(corpus.files) - paths
    leaked = [
        (p.kind, p.file, frag)
        for p in corpus.planted
        for frag in fragments(p.value)
        if frag and frag in sent
    ]
    assert leaked == [], leaked
    # ...and the lines that held them went out (masked), not dropped.
    shown = 0
    for p in corpus.planted:
        line = next(ln for ln in corpus.files[p.file].splitlines() if p.value.split("\n")[0] in ln)
        before = line[: line.index(p.value.split("\n")[0])].strip().strip("\"'`")
        if len(before) >= 8:
            shown += before[-8:] in sent.replace("\\n", "\n")
    assert shown >= 30, shown


def test_a_secret_in_the_question_and_history_is_masked(
    engine: Engine, fake_api: FakeAnthropic, llm: LlmConfig, corpus: Corpus
) -> None:
    key = next(p.value for p in corpus.planted if p.kind == "gitlab_pat")
    fake_api.forever("Rotated here {cite:E1}.")
    req = AskRequest(
        f"operations runbook rotating token {key}",
        path_prefix="docs/operations.md",
        min_score=0.0,
        history=[{"role": "user", "content": f"my token is {key}"}],
    )
    ask(req, engine, llm=llm)
    assert fake_api.message_requests
    assert key not in sent_text(fake_api)


@pytest.mark.parametrize(
    "text",
    [
        "def check_token(token: str) -> bool:",
        "max_tokens = 1000",
        "password = get_password()",
        "SECRET_PATTERNS: tuple[tuple[str, str], ...] = (",
        "The token is valid for an hour.",
        "Set `api_key` in the settings view; the password is never stored.",
        "sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
    ],
)
def test_ordinary_code_and_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == [] and redact(text) == (text, 0)
