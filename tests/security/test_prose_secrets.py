"""Secrets written in prose are found (#32): recall on the prose corpus, the issue's Twilio and
password sentences, and code that merely looks random left alone."""

from __future__ import annotations

import pytest

from code_compass_server.answer.redact import redact
from tests.security.prose_secrets import HARD_NEGATIVES, build_cases, survives

RECALL_TARGET = 0.99
HEX32 = "5f352379324c22463451387a0aec5d2f"


def test_recall_on_the_prose_corpus() -> None:
    cases = build_cases()
    assert len(cases) >= 100
    assert {".md", ".py", ".yaml", ".ini", ".json", ".ipynb", "Dockerfile"} <= {
        c.suffix for c in cases
    }
    missed = [c.name for c in cases if survives(c)]
    assert 1 - len(missed) / len(cases) >= RECALL_TARGET, missed


@pytest.mark.parametrize(
    "text",
    [
        f"SMS alerts use Twilio: auth token {HEX32}, API key SK{HEX32[::-1]}",
        f"twilio: {HEX32}",
        f"Use {HEX32} to call Twilio.",
        f"account sid AC{HEX32[::-1]} with auth token {HEX32}",
    ],
)
def test_the_issue_twilio_sentences_are_masked(text: str) -> None:
    out, count = redact(text)
    assert HEX32 not in out and count >= 1


def test_a_password_stated_in_words_is_masked() -> None:
    out, _ = redact("# the legacy box still uses the password Winter2019! for its admin UI")
    assert "Winter2019" not in out and "admin UI" in out


@pytest.mark.parametrize("text", HARD_NEGATIVES)
def test_code_that_only_looks_random_survives(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('auth_token = "is not a"', "is not a"),  # a credential-qualified token keeps any value
        (f'token = "{HEX32}"', HEX32),  # a bare token with a random value
        ("db: postgres://app:s3cr3t-Pa55@db.internal/app", "s3cr3t-Pa55"),
        ("the wifi password is Tr0ub4dor&3", "Tr0ub4dor&3"),
        ('DATABASES = {"default": {"PASSWORD": "correct-horse-battery-staple"}}', "horse"),
    ],
)
def test_what_the_false_positive_rules_leave_out_is_still_masked(text: str, value: str) -> None:
    out, count = redact(text)
    assert value not in out and count >= 1
