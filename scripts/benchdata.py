"""Real corpora for benchmarks and evaluations, fetched from PyPI only (cached in bench-data/)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench-data"
DJANGO_VERSION = "5.2.8"


def django_source(version: str = DJANGO_VERSION) -> Path:
    """Django's source tree from its PyPI sdist (about 2,900 Python files plus docs)."""
    target = CACHE / f"django-{version}"
    if (target / "django" / "__init__.py").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"django-{version}.tar.gz"
    if not sdist.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"django=={version}", "-d", str(CACHE)],
            check=True,
        )  # fmt: skip
        found = sorted(CACHE.glob(f"[dD]jango-{version}.tar.gz"))
        if not found:
            raise SystemExit(f"could not download Django {version} sdist from PyPI")
        found[0].rename(sdist)
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    extracted = next(
        p for p in CACHE.iterdir() if p.is_dir() and p.name.lower() == f"django-{version}"
    )
    if extracted != target:
        extracted.rename(target)
    return target


if __name__ == "__main__":
    print(django_source())
