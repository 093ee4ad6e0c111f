"""Secret-looking tokens are replaced before anything is sent to the LLM
(docs/rules.md: redact-before-llm).

First the maintained detector (index/secrets_detect.py: detect-secrets' plugins, keyword rules
on every line, prose and Markdown included, gitleaks-catalogue formats), then the rules below,
which stay as a second net: multi-line private keys, credentials in URLs, bearer headers,
secret-named assignments and long high-entropy literals. Patterns favour recall: a false
positive costs a `[REDACTED]` in a prompt, a miss leaks a key.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from code_compass_server.index.secrets_detect import (
    find_secrets,
    mask,
    names_code,
    not_a_secret_shape,
    placeholder_password,
    random_looking,
)

MASK = "[REDACTED]"

# Whole-token secrets: the match itself is replaced.
_TOKEN_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}")),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
]

# Credentials inside URLs / connection strings: keep scheme and host, mask user:password.
_URL_CREDS = re.compile(r"(?P<pre>\b[a-z][a-z0-9+.-]*://)(?P<cred>[^\s:/@'\"]+:[^\s@/'\"]+)@")

# `Authorization: Bearer xxx` / `bearer xxx`.
_BEARER = re.compile(
    r"(?P<pre>(?:\bbearer\s+|\bauthorization\s*[:=]\s*[\"']?(?:basic|token)\s+))"
    r"(?P<val>[A-Za-z0-9._~+/=-]{16,})",
    re.I,
)

# The name must END in a secret word (`db_password`, `API_KEY`, `auth_token`), so
# `tokenizer = "bert"` or `max_tokens = 1000` are left alone.
_SECRET_NAME = (
    r"(?<![A-Za-z0-9_])[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|secret[_-]?key|credentials?)(?:[_-]?(?:value|str))?"
)
# name = "value" / name: 'value' / NAME=value (env files, yaml, code).
# A quoted value may hold any character but its quote (Django keys carry `#)(=!`).
# Within one line: `password:` ending a line is a label or a block (`if password:`), and
# `<input` after `Password:` is markup.
_ASSIGN = re.compile(
    rf"(?P<pre>(?P<name>{_SECRET_NAME})[\"']?[ \t]*(?::=|=>|=|:)[ \t]*)"
    r"(?:(?P<q>[\"'`])(?P<qval>[^\"'`\n]{4,}?)(?P=q)|(?P<val>[^\s\"'`,;()\[\]{}<>]{4,}))",
    re.I,
)
# Any long high-entropy quoted literal assigned to anything (catches `KEY = "b64..."`).
_HIGH_ENTROPY_ASSIGN = re.compile(
    r"(?P<pre>\b[A-Za-z_][A-Za-z0-9_]*\s*(?::=|=|:)\s*)(?P<q>[\"'])(?P<val>[A-Za-z0-9+/=_-]{32,})(?P=q)"
)
# Values that are obviously not secrets (placeholders, lookups, code).
_BENIGN_VALUE = re.compile(
    r"^(?:\[REDACTED\]|\d+|none|null|true|false|changeme|example|xxx+|\*+|<[^>]*>|\$\{?[A-Za-z_]+\}?"
    r"|os\.environ.*|getenv.*|env\..*|process\.env.*|self\..*|[A-Za-z_][A-Za-z0-9_]*\(.*)$",
    re.I,
)


def _entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_like_identifier(value: str) -> bool:
    # `token = get_token` / `secret: SecretStr` / `dollarToken = +dollarToken` /
    # `token = _XRegExp$exec2` are code, not secrets.
    return bool(re.fullmatch(r"[+!~-]?[A-Za-z_$][\w$.]*", value))


# A name whose secret word is a bare `token` (`token`, `some_token`, `dollarToken`) is as
# often a parser's token as a credential: its value must look random to count.
_TOKEN_NAME = re.compile(r"(?i)(?P<prefix>.*?)[._-]?tokens?")
_CREDENTIAL_QUALIFIER = re.compile(
    r"(?i).*(?:auth|access|api|bearer|refresh|csrf|xsrf|session|id|oauth|secret|private|personal"
    r"|service|bot|app|client|jwt|reset|github|gitlab|slack|npm|pypi)"
)


def _bare_token_name(name: str) -> bool:
    m = _TOKEN_NAME.fullmatch(name)
    if not m:
        return False
    last = re.split(r"[._-]", m.group("prefix"))[-1]
    return not _CREDENTIAL_QUALIFIER.fullmatch(last)


@dataclass(slots=True)
class Redactor:
    """Redacts and counts; one instance per question so meta can report the total."""

    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __call__(self, text: str) -> str:
        return self.redact(text)

    def redact(self, text: str) -> str:
        for kind, pattern in _TOKEN_PATTERNS[:1]:  # private keys span lines: before the scan
            text, n = pattern.subn(MASK, text)
            self.counts[kind] += n
        spans = find_secrets(text)
        if spans:
            self.counts.update(s.kind for s in spans)
            text = mask(text, spans, MASK)
        for kind, pattern in _TOKEN_PATTERNS[1:]:
            text, n = pattern.subn(MASK, text)
            self.counts[kind] += n

        def url(m: re.Match[str]) -> str:
            if placeholder_password(m.group("cred").split(":", 1)[1]):
                return m.group(0)
            self.counts["url_credentials"] += 1
            return f"{m.group('pre')}{MASK}@"

        text = _URL_CREDS.sub(url, text)

        def bearer(m: re.Match[str]) -> str:
            if not re.search(r"\d", m.group("val")):  # prose like "bearer token_handling"
                return m.group(0)
            self.counts["bearer_token"] += 1
            return f"{m.group('pre')}{MASK}"

        text = _BEARER.sub(bearer, text)

        def assign(m: re.Match[str]) -> str:
            q = m.group("q") or ""
            val = m.group("qval") if q else m.group("val")
            if _BENIGN_VALUE.match(val) or (not q and _looks_like_identifier(val)):
                return m.group(0)
            if names_code(val, quoted=bool(q)):
                return m.group(0)
            if MASK in val:
                return m.group(0)
            if _bare_token_name(m.group("name")) and not random_looking(val):
                return m.group(0)
            self.counts["secret_assignment"] += 1
            return f"{m.group('pre')}{q}{MASK}{q}"

        text = _ASSIGN.sub(assign, text)

        def high_entropy(m: re.Match[str]) -> str:
            val = m.group("val")
            if _entropy(val) < 4.0 or not re.search(r"\d", val) or not re.search(r"[A-Za-z]", val):
                return m.group(0)
            if not_a_secret_shape(val):
                return m.group(0)
            self.counts["high_entropy"] += 1
            q = m.group("q")
            return f"{m.group('pre')}{q}{MASK}{q}"

        return _HIGH_ENTROPY_ASSIGN.sub(high_entropy, text)


def redact(text: str) -> tuple[str, int]:
    """Convenience: the redacted text and how many secrets were masked."""
    r = Redactor()
    out = r.redact(text)
    return out, r.total
