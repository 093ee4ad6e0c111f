"""A corpus of planted secrets: 67 values of 48 kinds (gitleaks' rule list as the catalogue),
in code, config, comments, Markdown prose and headings, and notebooks.

Every value is made here from a seeded generator in its service's real format, so none is a
live credential and each is unique: a test can look for it (or for a fragment of it) in what
reached the fake LLM.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass, field
from pathlib import Path

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
HEX = "0123456789abcdef"
ALNUM = UP + LO + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


@dataclass(frozen=True, slots=True)
class Planted:
    kind: str
    value: str
    file: str


@dataclass
class Corpus:
    files: dict[str, str] = field(default_factory=dict)
    planted: list[Planted] = field(default_factory=list)
    topics: dict[str, str] = field(default_factory=dict)  # file -> words a question can use

    @property
    def kinds(self) -> set[str]:
        return {p.kind for p in self.planted}

    def write(self, root: Path) -> None:
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


class _Maker:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def password(self) -> str:
        return (
            self.s(UP, 2)
            + self.s(LO, 4)
            + self.s(DIG, 3)
            + self.rng.choice("!#%&*")
            + self.s(LO, 3)
        )

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode()

    def jwt(self) -> str:
        def part(d: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")

        sig = base64.urlsafe_b64encode(self.rng.randbytes(32)).decode().rstrip("=")
        head = part({"alg": "HS256", "typ": "JWT"})
        return f"{head}.{part({'sub': self.s(DIG, 8), 'role': 'admin'})}.{sig}"

    def pem(self, label: str) -> str:
        body = base64.b64encode(self.rng.randbytes(384)).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _values(m: _Maker) -> dict[str, list[str]]:
    """Two (or more) values per kind."""
    kinds: dict[str, list[str]] = {}

    def add(kind: str, *makers: object) -> None:
        kinds[kind] = [str(x) for x in makers]

    add("aws_access_key", "AKIA" + m.s(UP + DIG, 16), "AKIA" + m.s(UP + DIG, 16))
    add("aws_secret_key", m.s(B64, 40), m.s(B64, 40))
    add("github_pat", "ghp_" + m.s(ALNUM, 36), "ghp_" + m.s(ALNUM, 36))
    add("github_fine_grained", "github_pat_" + m.s(ALNUM, 22) + "_" + m.s(ALNUM, 59))
    add("github_oauth", "gho_" + m.s(ALNUM, 36))
    add("gitlab_pat", "glpat-" + m.s(URLSAFE, 20), "glpat-" + m.s(URLSAFE, 20))
    add("slack_bot_token", f"xoxb-{m.s(DIG, 12)}-{m.s(DIG, 13)}-{m.s(ALNUM, 24)}")
    hook = "https://hooks.slack.com/services/"
    add(
        "slack_webhook",
        f"{hook}T{m.s(UP + DIG, 8)}/B{m.s(UP + DIG, 8)}/{m.s(ALNUM, 24)}",
        f"{hook}T{m.s(UP + DIG, 10)}/B{m.s(UP + DIG, 10)}/{m.s(ALNUM, 24)}",
    )
    add(
        "sendgrid",
        f"SG.{m.s(URLSAFE, 22)}.{m.s(URLSAFE, 43)}",
        f"SG.{m.s(URLSAFE, 22)}.{m.s(URLSAFE, 43)}",
    )
    add("azure_storage_key", m.b64(64), m.b64(64))
    add("stripe_secret", "sk_live_" + m.s(ALNUM, 24), "sk_live_" + m.s(ALNUM, 24))
    add("stripe_restricted", "rk_live_" + m.s(ALNUM, 24))
    add("twilio_api_key", "SK" + m.s(HEX, 32), "SK" + m.s(HEX, 32))
    add("openai_key", "sk-proj-" + m.s(URLSAFE, 48))
    add("anthropic_key", "sk-ant-api03-" + m.s(URLSAFE, 80))
    add("google_api_key", "AIza" + m.s(URLSAFE, 35), "AIza" + m.s(URLSAFE, 35))
    add("jwt", m.jwt(), m.jwt())
    add("rsa_private_key", m.pem("RSA PRIVATE KEY"))
    add("openssh_private_key", m.pem("OPENSSH PRIVATE KEY"))
    add("npm_token", "npm_" + m.s(ALNUM, 36))
    add("pypi_token", "pypi-AgEIcHlwaS5vcmc" + m.s(URLSAFE, 70))
    add("discord_bot_token", f"M{m.s(ALNUM, 23)}.{m.s(URLSAFE, 6)}.{m.s(URLSAFE, 27)}")
    add("telegram_bot_token", f"{m.s(DIG, 9)}:AA{m.s(URLSAFE, 33)}")
    add("mailchimp_key", m.s(HEX, 32) + "-us12")
    add("square_token", "EAAA" + m.s(URLSAFE, 60))
    add("huggingface_token", "hf_" + m.s(ALNUM, 34))
    add("shopify_token", "shpat_" + m.s(HEX, 32))
    add("digitalocean_token", "dop_v1_" + m.s(HEX, 64))
    add("vault_token", "hvs." + m.s(URLSAFE, 90))
    add("databricks_token", "dapi" + m.s(HEX, 32))
    add("newrelic_key", "NRAK-" + m.s(UP + DIG, 27))
    add("postman_key", f"PMAK-{m.s(HEX, 24)}-{m.s(HEX, 34)}")
    add("grafana_token", "glsa_" + m.s(ALNUM, 32) + "_" + m.s(HEX, 8))
    add("age_secret_key", "AGE-SECRET-KEY-1" + m.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
    add("sendinblue_key", f"xkeysib-{m.s(HEX, 64)}-{m.s(ALNUM, 16)}")
    add("mailgun_key", "key-" + m.s(HEX, 32))
    add("alibaba_key", "LTAI" + m.s(ALNUM, 20))
    add("supabase_token", "sbp_" + m.s(HEX, 40))
    add("password_comment", m.password(), m.password())
    add("password_prose", m.password(), m.password(), m.password(), m.password())
    add("password_config", m.password(), m.password())
    add("url_credentials", m.password())
    add("basic_auth_header", base64.b64encode(f"admin:{m.password()}".encode()).decode())
    add("django_secret_key", m.s(LO + DIG + "!@#%^&*(-_=+)", 50))
    add("heroku_api_key", f"{m.s(HEX, 8)}-{m.s(HEX, 4)}-{m.s(HEX, 4)}-{m.s(HEX, 4)}-{m.s(HEX, 12)}")
    add("client_secret", m.s(URLSAFE, 34))
    add("bearer_token", m.s(URLSAFE, 40), m.s(URLSAFE, 40))
    add("databricks_token_2", "dapi" + m.s(HEX, 32))
    return kinds


def build_corpus(seed: int = 16) -> Corpus:
    m = _Maker(seed)
    v = _values(m)
    c = Corpus()
    azure = "DefaultEndpointsProtocol=https;AccountName="

    def put(rel: str, text: str, topic: str, *planted: tuple[str, int]) -> None:
        c.files[rel] = text
        c.topics[rel] = topic
        for kind, i in planted:
            c.planted.append(Planted(kind, v[kind][i], rel))

    put(
        "src/cloud_clients.py",
        f'''"""Cloud clients for the billing exporter."""

import boto3

AWS_ACCESS_KEY_ID = "{v["aws_access_key"][0]}"
aws_secret_access_key = "{v["aws_secret_key"][0]}"
STRIPE_API_KEY = "{v["stripe_secret"][0]}"
SENDGRID_API_KEY = "{v["sendgrid"][0]}"


def billing_exporter_client():
    """Build the billing exporter client from the configured keys."""
    # old key, rotated: {v["aws_access_key"][1]}
    # admin password: {v["password_comment"][0]}
    return boto3.client("s3", aws_access_key_id=AWS_ACCESS_KEY_ID)
''',
        "billing exporter client cloud keys",
        ("aws_access_key", 0),
        ("aws_secret_key", 0),
        ("stripe_secret", 0),
        ("sendgrid", 0),
        ("aws_access_key", 1),
        ("password_comment", 0),
    )
    put(
        "src/notifier.js",
        f"""// Chat notifier for deploy events.
const SLACK_WEBHOOK = "{v["slack_webhook"][0]}";
const slackToken = '{v["slack_bot_token"][0]}';
const twilioKey = "{v["twilio_api_key"][0]}";
const discordToken = "{v["discord_bot_token"][0]}";

function notifyDeployChannel(message) {{
  // telegram fallback bot: {v["telegram_bot_token"][0]}
  return fetch(SLACK_WEBHOOK, {{ method: "POST", body: message }});
}}
""",
        "notifyDeployChannel deploy notifier slack webhook",
        ("slack_webhook", 0),
        ("slack_bot_token", 0),
        ("twilio_api_key", 0),
        ("discord_bot_token", 0),
        ("telegram_bot_token", 0),
    )
    put(
        "src/storage.go",
        f"""package storage

// Blob storage connection for the archive service.
const connectionString = "{azure}archiveacct;AccountKey={v["azure_storage_key"][0]}"

// ArchiveUploader uploads archives; the GitHub token below mirrors them.
func ArchiveUploader() string {{
	githubToken := "{v["github_pat"][0]}"
	dbURL := "postgres://archiver:{v["url_credentials"][0]}@db.internal:5432/archive"
	return githubToken + dbURL
}}
""",
        "ArchiveUploader archive storage connection",
        ("azure_storage_key", 0),
        ("github_pat", 0),
        ("url_credentials", 0),
    )
    put(
        "config/services.yaml",
        f"""# Service credentials for the reporting pipeline
reporting:
  openai_api_key: {v["openai_key"][0]}
  anthropic_key: "{v["anthropic_key"][0]}"
  google_maps_key: {v["google_api_key"][0]}
  database:
    user: reporter
    password: {v["password_config"][0]}
  oauth:
    client_id: reporting-pipeline
    client_secret: {v["client_secret"][0]}
  huggingface: {v["huggingface_token"][0]}
""",
        "reporting pipeline service credentials database oauth",
        ("openai_key", 0),
        ("anthropic_key", 0),
        ("google_api_key", 0),
        ("password_config", 0),
        ("client_secret", 0),
        ("huggingface_token", 0),
    )
    put(
        "config/deploy.toml",
        f"""# Deploy targets for the release train
[registry]
npm_token = "{v["npm_token"][0]}"
pypi_token = "{v["pypi_token"][0]}"

[cloud]
digitalocean = "{v["digitalocean_token"][0]}"
vault = "{v["vault_token"][0]}"
heroku_api_key = "{v["heroku_api_key"][0]}"
databricks = "{v["databricks_token"][0]}"
""",
        "release train deploy targets registry cloud",
        ("npm_token", 0),
        ("pypi_token", 0),
        ("digitalocean_token", 0),
        ("vault_token", 0),
        ("heroku_api_key", 0),
        ("databricks_token", 0),
    )
    put(
        "config/monitoring.ini",
        f"""; Monitoring agents for the observability stack
[newrelic]
license = {v["newrelic_key"][0]}

[grafana]
service_account = {v["grafana_token"][0]}

[mail]
mailgun = {v["mailgun_key"][0]}
mailchimp = {v["mailchimp_key"][0]}
sendinblue = {v["sendinblue_key"][0]}
smtp_password = {v["password_config"][1]}
""",
        "monitoring agents observability stack grafana newrelic",
        ("newrelic_key", 0),
        ("grafana_token", 0),
        ("mailgun_key", 0),
        ("mailchimp_key", 0),
        ("sendinblue_key", 0),
        ("password_config", 1),
    )
    put(
        "settings/production.py",
        f'''"""Production settings for the storefront."""

DEBUG = False
SECRET_KEY = '{v["django_secret_key"][0]}'
SHOPIFY_ACCESS_TOKEN = "{v["shopify_token"][0]}"
SQUARE_ACCESS_TOKEN = "{v["square_token"][0]}"
SUPABASE_SERVICE_TOKEN = "{v["supabase_token"][0]}"
ALIBABA_ACCESS_KEY_ID = "{v["alibaba_key"][0]}"
SESSION_SIGNING_JWT = "{v["jwt"][0]}"
# storefront admin password: {v["password_comment"][1]}
''',
        "storefront production settings",
        ("django_secret_key", 0),
        ("shopify_token", 0),
        ("square_token", 0),
        ("supabase_token", 0),
        ("alibaba_key", 0),
        ("jwt", 0),
        ("password_comment", 1),
    )
    put(
        "docs/operations.md",
        f"""# Operations runbook

## Rotating the GitLab token {v["gitlab_pat"][0]}

The CI runner authenticates with the GitLab token `{v["gitlab_pat"][1]}` and mirrors to GitHub
with {v["github_pat"][1]}. The fine-grained token {v["github_fine_grained"][0]} is read-only.

The staging database password is {v["password_prose"][0]} and the admin password for the
dashboard is "{v["password_prose"][1]}". Alerts go to {v["slack_webhook"][1]} and the mailer
uses SendGrid key {v["sendgrid"][1]}.

### Storage

Connection string: `{azure}opsacct;AccountKey={v["azure_storage_key"][1]}`

Stripe restricted key for refunds: {v["stripe_restricted"][0]}; the live one is
{v["stripe_secret"][1]}. Postman collection key {v["postman_key"][0]}.
""",
        "operations runbook rotating token staging database storage",
        ("gitlab_pat", 0),
        ("gitlab_pat", 1),
        ("github_pat", 1),
        ("github_fine_grained", 0),
        ("password_prose", 0),
        ("password_prose", 1),
        ("slack_webhook", 1),
        ("sendgrid", 1),
        ("azure_storage_key", 1),
        ("stripe_restricted", 0),
        ("stripe_secret", 1),
        ("postman_key", 0),
    )
    put(
        "docs/onboarding.md",
        f"""# Onboarding for new engineers

Ask for the VPN; meanwhile the shared password is {v["password_prose"][2]} (rotate it!).

Use this Twilio key for the SMS sandbox: {v["twilio_api_key"][1]}. The OAuth app's token
`{v["github_oauth"][0]}` belongs to the bot account. Google key for local maps:
{v["google_api_key"][1]}. Age key for the sops files: {v["age_secret_key"][0]}.

The deploy key, in case the vault is down:

```
{v["openssh_private_key"][0]}
```

Test call:

    curl -H "Authorization: Basic {v["basic_auth_header"][0]}" https://api.internal/health
""",
        "onboarding new engineers vpn sandbox deploy key",
        ("password_prose", 2),
        ("twilio_api_key", 1),
        ("github_oauth", 0),
        ("google_api_key", 1),
        ("age_secret_key", 0),
        ("openssh_private_key", 0),
        ("basic_auth_header", 0),
    )
    one_line_key = v["rsa_private_key"][0].replace("\n", "\\n")  # as JSON keys carry it
    cells = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# Churn model training\n", "Loads events from the warehouse.\n"],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "outputs": [],
            "source": [
                "import os\n",
                f'aws_secret_access_key = "{v["aws_secret_key"][1]}"\n',
                f'jwt = "{v["jwt"][1]}"\n',
                f'service_account = {{"private_key": "{one_line_key}"}}\n',
            ],
        },
    ]
    cells.append(
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": [
                "Warehouse login: the password is " + v["password_prose"][3] + "\n",
                "Bearer for the feature store: Bearer " + v["bearer_token"][1] + "\n",
            ],
        }
    )
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    put(
        "notebooks/churn_training.ipynb",
        json.dumps(notebook, indent=1),
        "churn model training warehouse",
        ("aws_secret_key", 1),
        ("jwt", 1),
        ("rsa_private_key", 0),
        ("password_prose", 3),
        ("bearer_token", 1),
    )
    put(
        "scripts/smoke_test.sh",
        f"""#!/bin/sh
# Smoke test of the public API after a deploy
TOKEN="{v["bearer_token"][0]}"
curl -H "Authorization: Bearer $TOKEN" https://api.internal/v1/status
curl -H "Authorization: Bearer {v["bearer_token"][0]}" https://api.internal/v1/jobs
export DATABRICKS_TOKEN={v["databricks_token_2"][0]}
export AWS_ACCESS_KEY_ID={v["aws_access_key"][1]}
export AWS_SECRET_ACCESS_KEY={v["aws_secret_key"][0]}
""",
        "smoke test public api after deploy",
        ("bearer_token", 0),
        ("databricks_token_2", 0),
        ("aws_access_key", 1),
        ("aws_secret_key", 0),
    )
    return c


def fragments(value: str) -> list[str]:
    """The value and a distinctive middle piece of it (a partial leak counts too)."""
    core = value.split("-----")[2] if value.startswith("-----BEGIN") else value
    core = core.strip().replace("\n", "")
    mid = len(core) // 2
    return [value, core[max(0, mid - 6) : mid + 6]]
