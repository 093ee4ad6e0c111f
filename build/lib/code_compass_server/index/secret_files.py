"""Files that are never indexed because they hold (or usually hold) secrets.

Checked before every other rule, so a secret is reported as "secret" even when it is
also gitignored, and checked on a symlink's target as well as on its own name.
Patterns are gitignore-style (a pattern without "/" matches at any depth).
"""

from __future__ import annotations

from code_compass_server.index.ignore import GlobMatcher

SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    # (pattern, why)
    (".env", "dotenv files hold API keys and passwords"),
    (".env.*", "every .env variant, .env.example included: some carry real values"),
    ("*.env", "dotenv files under another name (prod.env)"),
    (".envrc", "direnv: exports secrets into the shell"),
    ("*.pem", "private keys and certificates (PEM)"),
    ("*.key", "private keys"),
    ("*.p12", "PKCS#12 key stores"),
    ("*.pfx", "PKCS#12 key stores"),
    ("*.crt", "certificates, often shipped next to their key"),
    ("*.cer", "certificates"),
    ("*.der", "binary keys and certificates"),
    ("*.jks", "Java key stores"),
    ("*.keystore", "Android/Java key stores"),
    ("*.ppk", "PuTTY private keys"),
    ("id_rsa*", "SSH private keys (and their .pub companions)"),
    ("id_dsa*", "SSH private keys"),
    ("id_ecdsa*", "SSH private keys"),
    ("id_ed25519*", "SSH private keys"),
    ("*.gpg", "encrypted or private GPG material"),
    ("*.asc", "armored GPG keys"),
    ("*.kdbx", "KeePass databases"),
    (".npmrc", "npm auth tokens"),
    (".yarnrc.yml", "yarn npmAuthToken"),
    (".pypirc", "PyPI upload tokens"),
    (".netrc", "machine passwords"),
    ("_netrc", "machine passwords (Windows)"),
    (".git-credentials", "git stored passwords"),
    (".dockercfg", "registry credentials"),
    ("**/.docker/config.json", "registry credentials"),
    ("**/.aws/credentials", "AWS access keys"),
    ("**/.aws/config", "AWS profiles, may hold keys"),
    ("**/.azure/", "Azure CLI tokens"),
    ("**/.config/gcloud/", "Google Cloud tokens"),
    ("**/.kube/config", "Kubernetes cluster credentials"),
    ("kubeconfig", "Kubernetes cluster credentials"),
    ("credentials.json", "OAuth client secrets"),
    ("client_secret*.json", "OAuth client secrets"),
    ("service-account*.json", "GCP service account keys"),
    (".htpasswd", "password hashes"),
    ("secrets.yml", "Rails/Ansible secrets"),
    ("secrets.yaml", "Kubernetes/Ansible secrets"),
    ("secrets.json", "application secrets"),
    ("*.tfstate", "Terraform state holds every secret it manages"),
    ("*.tfstate.*", "Terraform state backups"),
    ("*.tfvars", "Terraform variables, often passwords"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
)

_MATCHER = GlobMatcher(p for p, _ in SECRET_PATTERNS)


def is_secret(rel: str) -> bool:
    """True when a workspace-relative posix path names a secret file (dirs: end with "/")."""
    return _MATCHER.matches(rel)
