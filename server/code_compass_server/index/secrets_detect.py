"""Where secrets are in a text: detect-secrets' plugins, backed by our own rules.

One question for every consumer: which character spans of this text are secret values. The
answer feeds redaction before anything is sent to the LLM (answer/redact.py) and the hover's
inert rendering (nothing secret becomes a link).

- detect-secrets (pinned; its maintained plugin set: AWS, Azure storage, GitHub, GitLab,
  Slack tokens and webhooks, SendGrid, Stripe, Twilio, npm, PyPI, OpenAI, JWT, Discord,
  Telegram, Mailchimp, Square, IBM, Artifactory, Cloudant, SoftLayer, basic auth, private-key
  headers, keywords, base64 entropy). Plugins are called on strings only: never their `verify`
  (that would send the secret to its service).
- Keyword rules run with every file type's patterns on every line, quoted or not: prose and
  Markdown are scanned like code and config (`the admin password: Tr0ub4dor&3`).
- `PREFIXED`: token formats from the gitleaks catalogue that detect-secrets does not know.
- `PROSE`: a secret word followed by "is"/"was" and a value with a digit or symbol.
- `NEAR` (#32): a random-looking token (letters and digits mixed, high entropy) within a few
  words of a credential word or a service name, on the same line: "auth token <hex>",
  "twilio: <hex>", "Use <hex> to call Twilio." - the way secrets are written in Markdown,
  bullets and comments. Digests next to "sha"/"commit"/"checksum" words are left alone.
- `STATED`: a password stated in words ("still uses the password Winter2019! for its UI").

Hex entropy is left out on purpose: digests, colours and ids are hex and common in code; hex
keys next to a secret word are caught by the keyword rules.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

log = logging.getLogger(__name__)

ENTROPY_BASE64_LIMIT = 4.5  # detect-secrets' default
MIN_SECRET_CHARS = 6  # shorter keyword values (`pwd: x`) are placeholders, not secrets

# Token formats from the gitleaks rule catalogue that detect-secrets has no plugin for.
PREFIXED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rx))
    for kind, rx in (
        ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
        ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
        ("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}"),
        ("doppler_token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
        ("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),
        ("linear_key", r"\blin_api_[A-Za-z0-9]{40}"),
        ("newrelic_key", r"\bNRAK-[A-Z0-9]{27}"),
        ("postman_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
        ("pulumi_token", r"\bpul-[a-f0-9]{40}"),
        ("grafana_token", r"\bgl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}"),
        ("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?"),
        ("age_secret_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
        ("sendinblue_key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
        ("mailgun_key", r"\bkey-[a-f0-9]{32}\b"),
        ("facebook_token", r"\bEAA[A-Za-z0-9]{90,}"),
        ("twitter_bearer", r"\bAAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{40,}"),
        ("alibaba_key", r"\bLTAI[A-Za-z0-9]{20}\b"),
        ("planetscale_token", r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9._=-]{32,}"),
        ("supabase_token", r"\bsbp_[a-f0-9]{40}"),
        ("npm_token", r"\bnpm_[A-Za-z0-9]{36}"),
        ("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
        ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{50,})"),
        ("gitlab_token", r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat)-[A-Za-z0-9_-]{20,}"),
        (
            "slack_webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}",
        ),
        ("slack_token", r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"),
        ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
        ("azure_storage_key", r"(?i)AccountKey\s*=\s*[A-Za-z0-9+/]{40,}={0,2}"),
        ("azure_sas", r"(?i)[?&]sig=[A-Za-z0-9%+/]{30,}={0,2}"),
        ("twilio_key", r"\b(?:SK|AC)[a-f0-9]{32}\b"),
        ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("square_token", r"\bEAAA[A-Za-z0-9_-]{60}"),
        ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        ("telegram_token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{32,33}\b"),
        ("discord_token", r"\b[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}"),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    )
)

# "the staging password is Hunter2!x" / "token was 9f8e..." — prose that names its secret.
PROSE = re.compile(
    r"(?i)\b(?:password|passwd|passphrase|pass ?code|pwd|secret|token|api[ _-]?key|access[ _-]?key"
    r"|private[ _-]?key|credentials?)\b(?:\s+[\w@.-]+){0,4}?\s*(?:\bis\b|\bwas\b|\bare\b"
    r"|:|=|->|→)\s*[`'\"*]*(?P<val>[^\s`'\"*,;()<>\[\]]{6,})"
)
# Credential words and service names that make a nearby random token a secret.
NEAR_WORDS = re.compile(
    r"(?i)(?<![a-z])(?:passwords?|passwd|passphrase|passcode|secrets?|tokens?|api[ _-]?keys?"
    r"|apikey|access[ _-]?keys?|auth|credentials?|sid|bearer|private[ _-]?key|signing[ _-]?key"
    r"|client[ _-]?secret|webhook|login|twilio|stripe|aws|github|gitlab|bitbucket|slack"
    r"|sendgrid|mailgun|mailchimp|heroku|azure|gcp|openai|anthropic|datadog|sentry|pagerduty"
    r"|okta|auth0|firebase|cloudflare|digitalocean|twitter|paypal|braintree|shopify|npm|pypi"
    r"|docker|jenkins|circleci|vault|algolia|mapbox|segment|newrelic|postmark|plaid|square"
    r"|telegram|discord|zendesk|intercom|hubspot|salesforce|jira|atlassian|linear|notion"
    r"|airtable|dropbox|box|nexmo|vonage|messagebird|pusher|supabase|vercel|netlify|render)"
    r"(?![a-z0-9])"
)
# Words that say a nearby hex string is a digest or an id, not a credential.
DIGEST_WORDS = re.compile(
    r"(?i)(?<![a-z])(?:sha\d*|md5|hash(?:es)?|digest|checksum|commit|rev(?:ision)?|etag"
    r"|fingerprint|integrity|uuid|guid|colou?r|nonce|salt|example|sample|dummy|fake)(?![a-z])"
)
NEAR_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/.$%-])[A-Za-z0-9_+/-]{16,}={0,2}(?![A-Za-z0-9_+/=$%-])")
NEAR_WINDOW_CHARS = 80  # how far (same line) a credential word may be from the token
NEAR_MIN_ENTROPY = 3.0  # bits per character: random hex of 16+ chars is ~3.5 and up
NEAR_MIN_SWITCHES = 3  # letter/digit alternations: identifiers have few (`sha256_v2`: 2)
# "uses the password Winter2019! for", "password of 'x9!kQ'", "passcode 493817".
STATED = re.compile(
    r"(?i)\b(?:password|passphrase|passcode|pin)\s+(?:of\s+|is\s+)?[`'\"]?"
    r"(?P<val>[^\s`'\",;()<>\[\]]{6,})"
)
# A prose value counts when it has a digit or a symbol: `is get_password()` or `is valid` do not.
_HAS_NON_LETTER = re.compile(r"[0-9!@#$%^&*+=~?]")
# Unquoted values that are code: names, calls, type expressions (`tuple[tuple[str`).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.\[\],|]*(?:\(\)?)?")
# Unquoted code: a name, attribute path or call, maybe cut inside its arguments
# (`make_password(raw_password`, `self.cleaned_data.get(password1_field_name`).
_CODE_VALUE = re.compile(r"[A-Za-z_][\w.]*(?:\(.*|\[.*)?|[a-z_]+\d?")
# A quoted value in lower case that itself holds a secret word names a field or a setting.
_FIELD_NAME = re.compile(
    r"(?=.*(?:pass|secret|token|key|pwd|credential|auth))[a-z_][a-z0-9_ -]*",
)
# One short lower-case word (`SECRET_KEY = "config"`, `password="test"`): a test fixture.
_TEST_WORD = re.compile(r"[a-z]{1,8}")
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\[REDACTED\]|none|null|true|false|changeme|example|placeholder|redacted|xxx+|\*+"
    r"|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?[a-z_]+\)?s?)$"
)


# A file name or path (`custom_admin/password_change_form.html`, `make.bat`): code, not a secret.
_FILE_NAME = re.compile(
    r"[\w.-]*(?:/[\w.-]+)*\.(?:html?|txt|py|js|ts|json|ya?ml|md|rst|cfg|ini|toml|bat|sh|css|xml|csv"
    r"|log)"
)
# A hash format's prefix (`password__startswith="sha1$$"`): the algorithm's name, no secret.
_HASH_PREFIX = re.compile(r"[a-z0-9_]+\$+")
# Code in prose: a dotted name, a name with `_` or `$`, an environment reference (`%HOMEPATH%`).
_PROSE_CODE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z$]*[_$][\w$]*|%[A-Za-z_]+%.*"
)
# "the password hasher is Argon2id": the secret word qualifies another noun, it is not the
# thing stated.
_COMPOUND_HEAD = re.compile(
    r"(?i)(?:hasher|hashers|hash|hashing|fields?|validators?|validation|reset|length|policy"
    r"|manager|form|strength|format|type|endpoint|url|name|file|prefix|algorithm|generator"
    r"|change|storage|check|rules|variant|backend)[:=]?"
)
# A URL query value (`?gid=A6CD...`) belongs to its own key, not to a credential word nearby.
_QUERY_KEY = re.compile(r"[?&](?P<key>[A-Za-z_][\w-]*)=$")
_URL_PLACEHOLDER = re.compile(
    r"(?i)(?:password|passwd|pass|pwd|pw|secret|changeme|x+|\*+|<[^>]*>|\$\{?[A-Za-z_]\w*\}?)"
)


def placeholder_password(value: str) -> bool:
    """`password`, `pass`, `xxx`, `${PASS}` or under four characters (`foo:bar@`): the
    documentation's stand-in for a URL's password."""
    return len(value) < 4 or bool(_URL_PLACEHOLDER.fullmatch(value))


def sequential(value: str) -> bool:
    """An alphabet or a run of keys (`0123...XYZ`, `abcxyz-ABCXYZ_0123`): no secret is made
    of consecutive characters."""
    core = [ch for ch in value if ch.isalnum()]
    if len(core) < 8:
        return False
    steps = sum(1 for a, b in itertools.pairwise(core) if ord(b) - ord(a) == 1)
    return steps >= 0.6 * (len(core) - 1)


def word_composed(value: str) -> bool:
    """A slug or identifier built from words (`generic_relations-taggeditem-0-DELETE`,
    `tabular-inline-1981-08-22`): every part between separators is letters, or a short
    number."""
    parts = [p for p in re.split(r"[-_/.+:]+", value.strip("=")) if p]
    return len(parts) >= 2 and all(p.isalpha() or (p.isdigit() and len(p) <= 4) for p in parts)


def path_like(value: str) -> bool:
    """A URL path (`/django/django/commit/afa3e16...`): two or more plain words between
    slashes; base64 has none."""
    parts = value.split("/")
    return len(parts) >= 3 and sum(1 for p in parts if re.fullmatch(r"[a-z]{3,}", p)) >= 2


def not_a_secret_shape(value: str) -> bool:
    """Long literals that are code or data, whatever their entropy."""
    return sequential(value) or word_composed(value) or path_like(value)


@dataclass(frozen=True, slots=True)
class SecretSpan:
    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class _Plugins:
    regex: list[tuple[str, Any]]  # (kind, plugin): analyze_string(line) yields values
    keyword_sets: list[dict[re.Pattern[str], int]]
    keyword_words: re.Pattern[str]  # a line without one of these skips the keyword rules
    base64: Any | None
    heuristics: Any | None


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


@cache
def _plugins() -> _Plugins:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    except ImportError:
        log.warning("detect-secrets is not installed: secrets are found by our own rules only")
        return _Plugins([], [], re.compile("(?!)"), None, None)
    skip = {
        "Public IP (ipv4)",
        "Hex High Entropy String",
        "Base64 High Entropy String",
        "Secret Keyword",
    }
    classes: dict[str, Any] = get_mapping_from_secret_type_to_class()
    regex = [(_kind(kind), cls()) for kind, cls in sorted(classes.items()) if kind not in skip]
    keyword_sets = [
        keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        keyword.CONFIG_DENYLIST_REGEX_TO_GROUP,
        keyword.GOLANG_DENYLIST_REGEX_TO_GROUP,
        keyword.COMMON_C_DENYLIST_REGEX_TO_GROUP,
        keyword.C_PLUS_PLUS_REGEX_TO_GROUP,
    ]
    words = re.compile("|".join(keyword.DENYLIST), re.I)
    b64 = Base64HighEntropyString(limit=ENTROPY_BASE64_LIMIT)
    return _Plugins(regex, keyword_sets, words, b64, heuristic)


def _benign(value: str, line: str, quoted: bool) -> bool:
    v = value.strip("'\"`")
    if len(v) < MIN_SECRET_CHARS or _PLACEHOLDER.match(v):
        return True
    if _FILE_NAME.fullmatch(v) or _HASH_PREFIX.fullmatch(v):
        return True
    if not quoted and (_IDENTIFIER.fullmatch(v) or _CODE_VALUE.fullmatch(v) or v.isdigit()):
        return True  # `password: str`, `token = get_token()`, `timeout = 3600`: code
    if quoted and (_FIELD_NAME.fullmatch(v) or _TEST_WORD.fullmatch(v)):
        return True  # `"password1"`, `"_password_reset_token"`: it names a field

    h = _plugins().heuristics
    return h is not None and bool(
        h.is_templated_secret(v) or h.is_prefixed_with_dollar_sign(v) or h.is_sequential_string(v)
    )


def names_code(value: str, quoted: bool) -> bool:
    """True when a value assigned to a secret-named thing is code or a field name, not a
    secret (`make_password(raw`, `"password1"`)."""
    v = value.strip("'\"`")
    if quoted:
        return bool(_FIELD_NAME.fullmatch(v) or _TEST_WORD.fullmatch(v))
    return bool(_IDENTIFIER.fullmatch(v) or _CODE_VALUE.fullmatch(v))


def _keyword_value(line: str, m: re.Match[str], group: int) -> tuple[str, bool]:
    """The value a keyword rule matched; unquoted, only its first word without trailing
    punctuation (`SECRET_CHARS = 6  # note`, `secret_type: str) -> str:`)."""
    value = m.group(group) or ""
    start = m.start(group)
    quoted = start > 0 and line[start - 1] in "'\"`"
    if not quoted:
        words = value.split()
        value = words[0].rstrip(")]},;:") if words else ""
    return value, quoted


def _spans_of(line: str, value: str, kind: str, base: int) -> Iterator[SecretSpan]:
    value = value.strip()
    if not value:
        return
    at = line.find(value)
    while at >= 0:
        yield SecretSpan(base + at, base + at + len(value), kind)
        at = line.find(value, at + len(value))


def _line_spans(line: str, base: int) -> Iterator[SecretSpan]:
    p = _plugins()
    for kind, plugin in p.regex:
        for value in plugin.analyze_string(line):
            if kind == "basic_auth_credentials" and placeholder_password(value):
                continue  # `http://username:password@host`: the docs' placeholder
            if value and len(value) >= MIN_SECRET_CHARS:
                yield from _spans_of(line, value, kind, base)
    for regex_set in p.keyword_sets if p.keyword_words.search(line) else ():
        for rx, group in regex_set.items():
            for m in rx.finditer(line):
                value, quoted = _keyword_value(line, m, group)
                if value and not _benign(value, line, quoted=quoted):
                    yield from _spans_of(line, value, "secret_keyword", base)
    b64, h = p.base64, p.heuristics
    if b64 is not None and h is not None:
        for value in b64.analyze_string(line):
            if (
                b64.calculate_shannon_entropy(value) > ENTROPY_BASE64_LIMIT
                and not h.is_potential_uuid(value)
                and not h.is_likely_id_string(value, line, b64)
                and not not_a_secret_shape(value)
            ):
                yield from _spans_of(line, value, "high_entropy_base64", base)
    for kind, rx in PREFIXED:
        for m in rx.finditer(line):
            yield SecretSpan(base + m.start(), base + m.end(), kind)
    for m in PROSE.finditer(line):
        value = _prose_value(m, line)
        if value:
            yield SecretSpan(
                base + m.start("val"), base + m.start("val") + len(value), "prose_secret"
            )


def _prose_value(m: re.Match[str], context: str) -> str:
    """The secret a PROSE match states, or "" when the match is code, markup or a digest."""
    value = m.group("val").rstrip(".:!?")
    if sum(ch.isalnum() for ch in value) < 2 or _digest(value, context):
        return ""  # `Password\n========`: a heading's underline
    words = m.group(0)[: m.start("val") - m.start()].split()
    if len(words) >= 2 and _COMPOUND_HEAD.fullmatch(words[1]):
        return ""
    if _PROSE_CODE.fullmatch(value) or not _HAS_NON_LETTER.search(value):
        return ""
    return "" if _benign(value, context, quoted=True) else value


def _digest(value: str, context: str) -> bool:
    """A hex value beside a digest word ("sha256 checksum ...: <hex>") is not a credential."""
    hexdigits = "0123456789abcdefABCDEF"
    return all(ch in hexdigits for ch in value) and bool(DIGEST_WORDS.search(context))


def _entropy(value: str) -> float:
    n = len(value)
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def random_looking(token: str) -> bool:
    """Mixed letters and digits with high entropy, not an identifier or a UUID."""
    core = token.strip("=")
    digits = sum(ch.isdigit() for ch in core)
    letters = sum(ch.isalpha() for ch in core)
    if digits < 2 or letters < 2 or _entropy(core) < NEAR_MIN_ENTROPY:
        return False
    switches = sum(
        1
        for a, b in itertools.pairwise(core)
        if a.isdigit() != b.isdigit() and a.isalnum() and b.isalnum()
    )
    if switches < NEAR_MIN_SWITCHES:
        return False
    h = _plugins().heuristics
    return not (h is not None and h.is_potential_uuid(core))


def _near_spans(line: str, base: int) -> Iterator[SecretSpan]:
    if not NEAR_WORDS.search(line):
        return
    for m in NEAR_TOKEN.finditer(line):
        token = m.group(0)
        if not random_looking(token) or not_a_secret_shape(token):
            continue
        key = _QUERY_KEY.search(line, max(0, m.start() - 40), m.start())
        if key and not NEAR_WORDS.fullmatch(key.group("key")):
            continue
        lo, hi = max(0, m.start() - NEAR_WINDOW_CHARS), m.end() + NEAR_WINDOW_CHARS
        around = line[lo : m.start()] + " " + line[m.end() : hi]
        if not NEAR_WORDS.search(around):
            continue
        if _digest(token, around):
            continue
        yield SecretSpan(base + m.start(), base + m.end(), "near_credential_word")
    for m in STATED.finditer(line):
        value = m.group("val").rstrip(".:!?")
        if (
            _HAS_NON_LETTER.search(value)
            and not _benign(value, line, quoted=True)
            and not _IDENTIFIER.fullmatch(value)
            and not re.fullmatch(r"[\w.]+\(.*|[a-z_]+\.[a-z_.]+|[\w-]+=.*", value)
        ):
            yield SecretSpan(
                base + m.start("val"), base + m.start("val") + len(value), "stated_password"
            )


def find_secrets(text: str) -> list[SecretSpan]:
    """Secret spans of `text`, merged where they overlap (the first kind found is kept)."""
    spans: list[SecretSpan] = []
    base = 0
    for line in text.splitlines(keepends=True):
        if len(line.strip()) >= MIN_SECRET_CHARS:
            spans.extend(_line_spans(line, base))
            spans.extend(_near_spans(line, base))
        base += len(line)
    for m in PROSE.finditer(text):  # whole text: prose wraps ("the password for the\n...is")
        value = _prose_value(m, text[max(0, m.start() - NEAR_WINDOW_CHARS) : m.end()])
        if value:
            spans.append(SecretSpan(m.start("val"), m.start("val") + len(value), "prose_secret"))
    return merge(spans)


def merge(spans: Iterable[SecretSpan]) -> list[SecretSpan]:
    out: list[SecretSpan] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            last = out[-1]
            out[-1] = SecretSpan(last.start, max(last.end, s.end), last.kind)
        else:
            out.append(s)
    return out


def mask(text: str, spans: list[SecretSpan], replacement: str) -> str:
    """`text` with every span replaced by `replacement`."""
    parts: list[str] = []
    at = 0
    for s in spans:
        parts.append(text[at : s.start])
        parts.append(replacement)
        at = s.end
    parts.append(text[at:])
    return "".join(parts)
