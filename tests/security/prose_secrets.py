"""A secrets corpus written the way people write secrets down (#32): in Markdown sentences,
bullets and tables, code comments, YAML, .ini, JSON, notebooks, Dockerfiles, and passwords
stated in words. Every value comes from a seeded generator in a real format (Twilio's 32-hex
auth token, base62 API keys, human passwords), so none is live and each is unique.

`HARD_NEGATIVES` are the other side: code and prose that merely look random near a credential
word (commit hashes, checksums, UUIDs, identifiers with digits) and must survive redaction.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass

from code_compass_server.answer.redact import redact

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    suffix: str  # where the text would live
    text: str
    value: str


def _fragments(value: str) -> list[str]:
    mid = len(value) // 2
    return [value, value[max(0, mid - 5) : mid + 5]]


def survives(case: Case) -> bool:
    """True when the value (or a distinctive piece of it) is still in the redacted text."""
    out, _ = redact(case.text)
    return any(frag in out for frag in _fragments(case.value))


class _Values:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def hex32(self) -> str:
        return self.s(HEX, 32)

    def hex40(self) -> str:
        return self.s(HEX, 40)

    def base62(self) -> str:
        # at least two digits, as nearly every generated key has
        return self.s(ALNUM, self.rng.randint(22, 38)) + self.s(string.digits, 2)

    def urlsafe(self) -> str:
        return self.s(ALNUM + "_-", 30) + self.s(string.digits, 2)

    def password(self) -> str:
        word = self.rng.choice(["Winter", "Falcon", "Harbor", "Copper", "Meadow", "Quartz"])
        return f"{word}{self.s(string.digits, 4)}{self.rng.choice('!#%&*')}"

    def any_token(self) -> str:
        return self.rng.choice([self.hex32, self.hex40, self.base62, self.urlsafe])()


# (name, suffix, template); {v} is the secret, {sid} a Twilio account SID beside it.
TOKEN_TEMPLATES: list[tuple[str, str, str]] = [
    ("md twilio sentence", ".md", "SMS alerts use Twilio: auth token {v}, see the runbook."),
    ("md twilio colon", ".md", "twilio: {v}"),
    ("md use-to-call", ".md", "Use {v} to call Twilio."),
    ("md sid with token", ".md", "account sid {sid} with auth token {v}"),
    ("md stripe bullet", ".md", "- Stripe live secret {v} (rotate quarterly)"),
    ("md datadog bullet", ".md", "* Datadog API key {v}"),
    ("md sendgrid prose", ".md", "The Sendgrid credentials are {v} until March."),
    ("md github deploy", ".md", "Our GitHub deploy token {v} lives in CI for now."),
    ("md heroku", ".md", "Heroku: {v}"),
    ("md table row", ".md", "| mailgun | production | {v} |"),
    ("md okta login", ".md", "For the Okta login, paste {v} into the form."),
    ("py comment sentry", ".py", "    # TODO remove before release: sentry auth {v}"),
    ("py comment openai", ".py", "# old openai token {v} (revoked?)"),
    ("js comment aws", ".js", "/* aws secret {v} */"),
    ("go comment slack", ".go", "\t// slack bot: {v}"),
    ("sh comment vault", ".sh", "# vault token for staging {v}"),
    ("yaml auth", ".yaml", "  auth: {v}"),
    ("yaml note", ".yaml", 'notes: "pagerduty integration key {v}"'),
    ("ini api_token", ".ini", "api_token = {v}"),
    ("ini cloudflare", ".ini", "cloudflare_key = {v}"),
    ("json auth_token", ".json", '{{"service": "twilio", "auth_token": "{v}"}}'),
    ("json note", ".json", '{{"note": "use {v} for the okta login"}}'),
    ("dockerfile env", "Dockerfile", "ENV STRIPE_KEY={v}"),
    ("dockerfile arg", "Dockerfile", "ARG NPM_TOKEN={v}"),
    ("dockerfile curl", "Dockerfile", "RUN curl -H 'Authorization: token {v}' https://api.github.com"),
]  # fmt: skip

PASSWORD_TEMPLATES: list[tuple[str, str, str]] = [
    ("py comment password words", ".py",
     "# the legacy box still uses the password {v} for its admin UI"),
    ("md admin password is", ".md", "The admin password is {v}."),
    ("md root login", ".md", "Log in as root with password {v} and change it."),
    ("md wifi passphrase", ".md", "Guest Wi-Fi passphrase {v}"),
    ("yaml comment password", ".yaml", "# db password {v} (shared with reporting)"),
]  # fmt: skip


def _notebook(line: str) -> str:
    cell = {"cell_type": "code", "metadata": {}, "source": [line + "\n"], "outputs": []}
    return json.dumps({"cells": [cell], "nbformat": 4}, indent=1)


def build_cases(seed: int = 32) -> list[Case]:
    v = _Values(seed)
    cases: list[Case] = []
    for name, suffix, template in TOKEN_TEMPLATES:
        for i in range(4):
            value = v.any_token() if i else v.hex32()
            text = template.format(v=value, sid="AC" + v.hex32())
            cases.append(Case(f"{name} #{i}", suffix, text, value))
    for name, suffix, template in PASSWORD_TEMPLATES:
        for i in range(3):
            value = v.password()
            cases.append(Case(f"{name} #{i}", suffix, template.format(v=value), value))
    for i in range(6):
        value = v.any_token()
        line = f'client = Client("AC{v.hex32()}", "{value}")  # twilio'
        cases.append(Case(f"notebook twilio client #{i}", ".ipynb", _notebook(line), value))
    return cases


HARD_NEGATIVES: list[str] = [
    "See https://github.com/django/django/commit/3f4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5c6",
    "commit 87792e14c8fffaefd82b5fd3fd80b98c fixed the github login",
    "sha256 checksum of the token file: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",  # noqa: E501
    "token_id = '123e4567-e89b-12d3-a456-426614174000'  # a uuid, not a secret",
    "def test_password_reset_token_2fa_v2(self):",
    "AUTH_PASSWORD_VALIDATORS = [{'NAME': 'django.contrib.auth.password_validation.UserAttributeSimilarityValidator'}]",  # noqa: E501
    "The token expires after 3600 seconds; see RFC 6750 section 2.1.",
    "password_reset_timeout = 259200  # 3 days",
    "Use the `sha1` hash of the password for the etag, e.g. 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12.",  # noqa: E501
    "# the login view returns a 302 to /accounts/profile/",
    "assert token_count(text) == 1024",
    "color: #1a2b3c; /* login button */",
    "The Slack channel #release-2024-q3 announces builds.",
    "stripe_api_version = '2023-10-16'",
    "auth_backend = 'django.contrib.auth.backends.ModelBackend'",
    "Set password to a value from your vault (never commit it).",
    "uses the password field of the form as is",
    "GITHUB_SHA=${{ github.sha }}",
    # Shapes that were masked in Django and flask (#32's false-positive count):
    "Password management in Django\n=============================\n",
    'token = "is not"',
    "token = _XRegExp$exec2[0];",
    "dollarToken = +dollarToken;",
    "if password:\n            try:\n",
    '<li>Password: <input type="password" name="password" required></li>',
    "<dd><input type=password name=password>",
    "The default variant for the Argon2 password hasher is\nArgon2id.",
    "# Parse the token\ntry:\n    ts_b36, _ = token.split(\"-\")",
    'RANDOM_STRING_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"',
    'id="id_generic_relations-taggeditem-content_type-object_id-0-DELETE"',
    'slug1="tabular-inline-with-ignored-characters-1981-08-22"',
    '<a href="/django/django/tree/d7504a3d7b8645bdb979bab7ded0e9a9b6dccd0e">',
    "set https_proxy=https://username:password@proxyserver:proxyport",
    "# See: BOX2D_left() and BOX2D_right() in lwgeom_box2dfloat4.c in PostGIS source.",
    "``ME2/Sites/dirmod.htm?sid=&type=gen&mod=Core+Pages&gid=A6CD4967199A42D9B65B1B``",
    'password_change_template = "custom_admin/password_change_form.html"',
    'User.objects.filter(password__startswith="sha1$$")',
]  # fmt: skip
