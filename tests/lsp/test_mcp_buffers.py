"""The MCP server reads the language server's unsaved buffers through their shared storage.

A real `code-compass serve` (pytest-lsp) and a real `code-compass mcp` (the MCP SDK's client
over stdio) on the same workspace and the same storage folder, as the VS Code extension starts
them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from mcp import Client

from code_compass_server.constants import SHARED_BUFFER_STALE_S
from tests.lsp.conftest import PRICING, Session, write
from tests.mcp_server.harness import mcp_client, ok, refused, server_env

UNSAVED = "# UNSAVED zeppelin_tariff edit, not on disk\n"


def change(s: Session, uri: str, version: int, text: str) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def close(s: Session, uri: str) -> None:
    s.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def open_until(
    client: Client, source: str, timeout: float = 15.0, **args: Any
) -> dict[str, Any]:
    """open_file until its result comes from `source` (the buffer lane publishes a moment later)."""
    deadline = time.monotonic() + timeout
    while True:
        data = await ok(client, "open_file", **args)
        if data["source"] == source:
            return data
        if time.monotonic() > deadline:
            raise AssertionError(f"open_file never read from {source}: {data}")
        await asyncio.sleep(0.05)


def published_texts(storage: Path) -> list[str]:
    """Every published buffer file's raw contents under the storage folder."""
    return [p.read_text("utf-8") for p in storage.glob("projects/*/buffers/*.json")]


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "storage"  # the language server harness's storageUri


async def test_open_file_reads_unsaved_buffer_then_disk_after_close(
    start: Any, alpha: Path, storage: Path
) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "pricing.py")
    change(s, uri, 2, UNSAVED + PRICING)  # didChange, never saved
    async with mcp_client(alpha, storage=storage, env=server_env()) as client:
        data = await open_until(client, "buffer", path="pricing.py", startLine=1, endLine=2)
        assert data["text"].splitlines()[0] == UNSAVED.strip()
        assert data["totalLines"] == len(PRICING.splitlines()) + 1
        assert (alpha / "pricing.py").read_text() == PRICING  # the disk never changed

        # ask_code re-reads its evidence through the same channel: the buffer's lines (the
        # language server indexed them; this server reads that index).
        answer = await ok(client, "ask_code", question="zeppelin_tariff", minScore=0)
        snippets = [e["snippet"] for e in answer["evidences"] if e["path"] == "pricing.py"]
        assert any("zeppelin_tariff" in t for t in snippets), answer["evidences"]

        # A file the editor does not have open still comes from disk.
        other = await ok(client, "open_file", path="checkout.py", endLine=1)
        assert other["source"] == "disk"

        close(s, uri)
        data = await open_until(client, "disk", path="pricing.py", endLine=1)
        assert data["text"] == PRICING.splitlines()[0]
    assert published_texts(storage) == []  # didClose removed the published copy


async def test_killed_language_server_buffer_is_ignored(
    start: Any, alpha: Path, storage: Path
) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    uri = s.open(alpha / "pricing.py")
    change(s, uri, 2, UNSAVED + PRICING)
    async with mcp_client(alpha, storage=storage, env=server_env()) as client:
        await open_until(client, "buffer", path="pricing.py", endLine=1)
        assert s.client._server is not None
        os.kill(s.process_pid, signal.SIGKILL)
        await asyncio.wait_for(s.client._server.wait(), 10)
        # Its published buffer is still there, stale: the reader sees the publisher is gone.
        assert any(UNSAVED.strip() in t for t in published_texts(storage))
        t0 = time.monotonic()
        data = await ok(client, "open_file", path="pricing.py", endLine=1)
        assert data["source"] == "disk" and data["text"] == PRICING.splitlines()[0]
        assert time.monotonic() - t0 < SHARED_BUFFER_STALE_S  # the pid check, no waiting


async def test_outside_and_secret_documents_are_never_published(
    start: Any, alpha: Path, storage: Path, tmp_path: Path
) -> None:
    outside = write(tmp_path / "outside", {"notes.py": "x = 1\n"})
    write(alpha, {".env": "API_KEY=on-disk\n"})
    s = await start([alpha])
    await s.wait_indexed()
    out_uri = s.open(outside / "notes.py")
    change(s, out_uri, 2, "OUTSIDE_SECRET = 'never shared'\n")
    env_uri = s.open(alpha / ".env", language="dotenv")
    change(s, env_uri, 2, "API_KEY=unsaved-secret\n")
    # The buffer lane is ordered: once this later buffer is visible, the two above were handled.
    uri = s.open(alpha / "pricing.py")
    change(s, uri, 2, UNSAVED + PRICING)
    async with mcp_client(alpha, storage=storage, env=server_env()) as client:
        await open_until(client, "buffer", path="pricing.py", endLine=1)
        refusal = await refused(client, "open_file", path=".env")  # neither buffer nor disk
        assert "secret file" in refusal
    texts = published_texts(storage)
    assert len(texts) == 1 and UNSAVED.strip() in texts[0]
    assert not any("never shared" in t or "unsaved-secret" in t for t in texts)
    assert not list(storage.glob("projects/outside-*"))  # no folder for it at all

    await asyncio.wait_for(s.client.shutdown_session(), 15)
    assert published_texts(storage) == []  # shutdown withdraws everything
    assert not list(storage.glob("projects/*/buffers/alive-*"))
