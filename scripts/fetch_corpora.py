"""Fetch the realistic-question corpora (eval/realqa/corpora.json) from PyPI, npm and Debian.

    .venv/bin/python scripts/fetch_corpora.py [--only flask,click] [--dest DIR]

Each archive is downloaded with the registry's own client (`pip download --no-binary :all:`,
`npm pack`, `apt-get download`), checked against the pinned sha256, and unpacked into
DEST/<name>-<version>/ (default bench-data/corpora/, git-ignored): a source archive without its
top folder; a Debian package (`dpkg-deb -x`) through its `members` map, archive path -> corpus
path (a folder copied whole, a `.gz` file mapped to a name without `.gz` decompressed).
Idempotent: a corpus whose folder and marker (DEST/<name>-<version>.ok, holding the archive's
sha256) exist is left alone; a cached archive is reused when its sha256 matches. Prints one
line per corpus: name, folder.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "eval" / "realqa" / "corpora.json"
DEST = ROOT / "bench-data" / "corpora"


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    registry: str  # "pypi" | "npm" | "debian"
    package: str
    version: str
    archive: str  # file name the registry client writes
    sha256: str
    exclude: tuple[str, ...] = ()  # archive paths (after the top folder) left out
    members: tuple[tuple[str, str], ...] = ()  # Debian: (archive path, corpus path) pairs
    fit: bool = True  # its dev half goes into scripts/fit_calibration.py's fit

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


def load_corpora(spec: Path = SPEC) -> list[Corpus]:
    data = json.loads(spec.read_text())
    return [
        Corpus(
            name=c["name"],
            registry=c["registry"],
            package=c["package"],
            version=c["version"],
            archive=c["archive"],
            sha256=c["sha256"],
            exclude=tuple(c.get("exclude", ())),
            members=tuple(c.get("members", {}).items()),
            fit=bool(c.get("fit", True)),
        )
        for c in data["corpora"]
    ]


def corpus_dir(c: Corpus, dest: Path = DEST) -> Path:
    return dest / c.folder


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(c: Corpus, archives: Path) -> Path:
    target = archives / c.archive
    if target.exists() and sha256_of(target) == c.sha256:
        return target
    archives.mkdir(parents=True, exist_ok=True)
    cwd = None
    if c.registry == "pypi":
        spec = f"{c.package}=={c.version}"
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--no-binary", ":all:", spec, "-d", str(archives)]  # fmt: skip
    elif c.registry == "npm":
        cmd = ["npm", "pack", f"{c.package}@{c.version}", "--silent",
               "--pack-destination", str(archives)]  # fmt: skip
    elif c.registry == "debian":
        # apt-get writes into the working folder; the pinned version must be in the apt lists
        # (`apt-get update` once on a fresh machine).
        cmd, cwd = ["apt-get", "download", "-q", f"{c.package}={c.version}"], archives
    else:
        raise SystemExit(f"{c.name}: unknown registry {c.registry!r}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
    if not target.exists():
        raise SystemExit(f"{c.name}: the registry client did not write {target}")
    got = sha256_of(target)
    if got != c.sha256:
        target.unlink()
        raise SystemExit(f"{c.name}: sha256 mismatch ({got}, pinned {c.sha256})")
    return target


def _unpack_deb(c: Corpus, archive: Path, tmp: Path) -> None:
    """`dpkg-deb -x` aside, then copy the `members` into `tmp` (see the module doc)."""
    raw = Path(tempfile.mkdtemp(prefix=f".{c.folder}-deb-", dir=tmp.parent))
    try:
        subprocess.run(["dpkg-deb", "-x", str(archive), str(raw)], check=True)
        for src, dst in c.members:
            source, target = raw / src, tmp / dst
            if src.endswith("/"):
                shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if src.endswith(".gz") and not dst.endswith(".gz"):
                target.write_bytes(gzip.decompress(source.read_bytes()))
            else:
                shutil.copy2(source, target)
    finally:
        shutil.rmtree(raw, ignore_errors=True)


def _unpack_tar(c: Corpus, archive: Path, tmp: Path) -> None:
    """Extract without the archive's top folder; members under `exclude` are skipped."""
    with tarfile.open(archive) as tar:
        members = []
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) < 2 or not parts[1]:
                continue
            rel = parts[1]
            if any(rel == e.rstrip("/") or rel.startswith(e) for e in c.exclude):
                continue
            m.name = rel
            members.append(m)
        tar.extractall(tmp, members=members, filter="data")


def unpack(c: Corpus, archive: Path, dest: Path) -> Path:
    """Unpack into a fresh folder aside, then put it in place of the corpus folder."""
    out = corpus_dir(c, dest)
    tmp = Path(tempfile.mkdtemp(prefix=f".{c.folder}-", dir=dest))
    try:
        if c.registry == "debian":
            _unpack_deb(c, archive, tmp)
        else:
            _unpack_tar(c, archive, tmp)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out


def fetch(c: Corpus, dest: Path = DEST) -> Path:
    out = corpus_dir(c, dest)
    marker = dest / f"{c.folder}.ok"
    if out.is_dir() and marker.exists() and marker.read_text().strip() == c.sha256:
        return out
    dest.mkdir(parents=True, exist_ok=True)
    archive = download(c, dest / "_archives")
    marker.unlink(missing_ok=True)
    unpack(c, archive, dest)
    marker.write_text(c.sha256 + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated corpus names")
    ap.add_argument("--dest", type=Path, default=DEST)
    args = ap.parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    for c in load_corpora():
        if only and c.name not in only:
            continue
        print(f"{c.name}\t{fetch(c, args.dest)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
