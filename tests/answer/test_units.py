"""Unit checks of the pipeline's parts: redaction, verification, relocation, scoring."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from code_compass_server.answer.confidence import Assessment, assess, band
from code_compass_server.answer.coverage import coverage_level
from code_compass_server.answer.redact import redact
from code_compass_server.answer.reread import EDITED, MOVED, Evidence, locate
from code_compass_server.answer.verify import verify
from code_compass_server.query.language import detect_language
from code_compass_server.records import SearchHit


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("t = 'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'", "ghp_aBcD"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11"),
        ("SLACK=xoxb-123456789012-abcdefABCDEF", "xoxb-1234"),
        ("stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'", "4eC39HqLy"),
        ("client = Anthropic(api_key='sk-ant-api03-abcdefghijklmnopqrstuv')", "sk-ant-api03"),
        ("OPENAI='sk-proj-abcdefghijklmnopqrstuvwxyz012345'", "sk-proj-abc"),
        ("maps = 'AIzaSyA1234567890abcdefghijklmnopqrstuv'", "AIzaSyA123"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "MIIEpAIB",
        ),
        ("headers = {'Authorization': 'Bearer abc123def456ghi789jkl'}", "abc123def456"),
        ('db_password = "hunter2"', "hunter2"),
        ("SECRET_KEY: 'x9f8g7h6j5'", "x9f8g7h6j5"),
        ("url = 'mysql://root:toor@localhost/db'", "root:toor"),
        ('SIGNING = "Zx8vQ2mN7pL4kR9tY6wB3cF1hJ5gD0sA"', "Zx8vQ2mN7pL4"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    out, n = redact(text)
    assert secret not in out and n >= 1 and "[REDACTED]" in out


@pytest.mark.parametrize(
    "text",
    [
        "tokenizer = 'bert-base'",
        "max_tokens = 1000",
        "password = get_password()",
        "token: str",
        "def check_token(token):",
        "secret = None",
    ],
)
def test_code_that_is_not_a_secret_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def _ev(i: int, path: str, text: str, symbol: str = "", start: int = 1) -> Evidence:
    end = start + len(text.splitlines()) - 1
    hit = SearchHit(path, start, end, 0.8, symbol, "function", "python", "p", text)
    return Evidence(f"E{i}", hit, text, start, end)


EVS = [
    _ev(1, "src/config.py", "def parse_config(path):\n    return load_toml(path)", "parse_config"),
    _ev(2, "src/db.py", "class Pool:\n    def acquire(self):\n        ...", "Pool", start=10),
]


def test_verify_removes_fabricated_and_keeps_valid_citations() -> None:
    v = verify("`parse_config` calls load_toml [E1][E7]. Pool has acquire [E3, E2].", EVS, "q")
    assert v.text == "`parse_config` calls load_toml [E1]. Pool has acquire [E2]."
    assert v.removed == ["E7", "E3"] and v.citations_used == ["E1", "E2"]


def test_verify_flags_identifiers_missing_from_the_cited_snippet() -> None:
    v = verify("`parse_config` validates with `check_schema` first [E1].", EVS, "q")
    assert v.unknown_identifiers == ["check_schema"]
    v2 = verify("The `Pool.acquire` method hands out a connection [E2].", EVS, "q")
    assert v2.unknown_identifiers == []


def test_verify_paths_and_line_references() -> None:
    v = verify(
        "It lives in src/config.py:1 and config.py [E1]. See lib/util.py and src/db.py:99 [E2].",
        EVS,
        "q",
    )
    assert v.invented_paths == ["lib/util.py", "src/db.py:99"]


def test_statements_of_missing_evidence_are_not_uncited_claims() -> None:
    v = verify(
        "The evidence does not show where the pool is closed. "
        "Pool objects are created lazily by the factory.",
        EVS,
        "q",
    )
    assert len(v.uncited_claims) == 1 and v.uncited_claims[0].startswith("Pool objects")


def test_language_detection() -> None:
    assert detect_language("Onde está definida a função parse_config?") == "pt"
    assert detect_language("¿Dónde está definida la función parse_config?") == "es"
    assert detect_language("Where is the parse_config function defined?") == "en"
    assert detect_language("parse_config?") is None


def test_locate_moved_edited_and_gone() -> None:
    snippet = "def f(x):\n    y = x + 1\n    return y * 2"
    now = "import os\n\n\n" + snippet + "\n"
    assert locate(snippet, now, 1) == (4, MOVED)
    edited = snippet.replace("y * 2", "y * 3")
    assert locate(snippet, edited, 1) == (1, EDITED)
    assert locate(snippet, "something else entirely\n", 1) is None


def test_coverage_levels() -> None:
    assert coverage_level([0.8, 0.7, 0.75]) == "high"
    assert coverage_level([0.8, 0.65, 0.6]) == "medium"
    assert coverage_level([0.6, 0.5]) == "medium"
    assert coverage_level([0.45, 0.4]) == "low"  # documented choice: 2 with mean < 0.5
    assert coverage_level([0.9]) == "low"
    assert coverage_level([]) == "none"


def test_bands_and_blocking_rules() -> None:
    assert [band(s) for s in (100, 90, 89, 70, 69, 50, 49, 30, 29)] == [
        "OK",
        "OK",
        "OK",
        "OK",
        "PARTIAL",
        "PARTIAL",
        "AMBIGUOUS",
        "AMBIGUOUS",
        "FAIL",
    ]
    state, conf = assess(Assessment())
    assert (state, conf.score) == ("OK", 100)
    state, conf = assess(Assessment(blocking=["blocked: x"]))
    assert state == "FAIL" and conf.score == 100 and "blocked: x" in conf.rules
    state, _ = assess(Assessment(ambiguity="unresolved"))
    assert state == "AMBIGUOUS"


def test_fake_server_standalone_prints_port_and_records(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["First {cite:E2} in {path:E2}."]))
    script = Path(__file__).resolve().parents[1] / "fakes" / "fake_anthropic.py"
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--reply-file", str(replies)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        body = {
            "model": "m",
            "max_tokens": 5,
            "messages": [
                {
                    "role": "user",
                    "content": '<evidence id="E1" path="a.py" lines="1-2" score="0.9">x</evidence>'
                    '<evidence id="E2" path="b.py" lines="3-4" score="0.8">'
                    "def g(): pass</evidence>",
                }
            ],
        }
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/messages",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            assert json.load(r)["content"][0]["text"] == "First [E2] in b.py."
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_fake/requests", timeout=5) as r:
            assert json.load(r)[0]["json"]["model"] == "m"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
