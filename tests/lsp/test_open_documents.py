"""Bounded memory for open documents and unsaved buffers (lsp/open_documents.py,
index/buffers.py): workspace files only, a cap per document and in total."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.lsp.client_messages import ClientMessages
from code_compass_server.lsp.open_documents import OpenDocuments


def test_only_workspace_files_under_the_caps_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    docs = OpenDocuments(lambda p: p.is_relative_to(root), max_each=100, max_total=250)
    inside = (root / "a.py").as_uri()
    assert docs.refusal(inside, 100) is None
    assert "outside every workspace folder" in str(docs.refusal(root.as_uri() + "/../x/b.py", 1))
    assert docs.refusal("untitled:Untitled-1", 1) == "not a file: URI"
    assert "over the 100" in str(docs.refusal((root / "big.py").as_uri(), 101))
    assert docs.refusal((root / "b.py").as_uri(), 100) is None
    assert "would hold over 250" in str(docs.refusal((root / "c.py").as_uri(), 60))
    docs.release(inside)
    assert docs.refusal((root / "c.py").as_uri(), 60) is None  # 160 of 250
    assert docs.refusal((root / "d.py").as_uri(), 91) is not None
    assert docs.resize((root / "c.py").as_uri(), 200) is not None  # grew past a cap: let go
    assert not docs.kept((root / "c.py").as_uri())
    assert docs.refusal((root / "d.py").as_uri(), 100) is None  # 200 of 250: c's share is free


def test_editor_buffers_refuse_over_a_cap_and_normalise_dot_dot(tmp_path: Path) -> None:
    buffers = EditorBuffers(max_each=10, max_total=15)
    a = tmp_path / "ws" / "a.py"
    assert buffers.set(a, "x" * 10)
    assert not buffers.set(tmp_path / "ws" / "b.py", "y" * 11)
    assert not buffers.set(tmp_path / "ws" / "c.py", "z" * 6)  # 16 in total
    assert buffers.set(tmp_path / "ws" / "sub" / ".." / "c.py", "z" * 5)
    assert buffers.get(tmp_path / "ws" / "c.py") == "z" * 5
    assert not buffers.set(a, "x" * 11)  # an over-cap update drops the older copy too
    assert buffers.get(a) is None
    assert buffers.set(a, "x" * 10)  # 15 of 15: its old share was given back


def test_pop_ups_are_rate_limited_and_the_rest_goes_to_the_log() -> None:
    sent: list[str] = []
    now = [0.0]
    messages = ClientMessages(lambda method, _params: sent.append(method), clock=lambda: now[0])
    assert messages.show(types.MessageType.Warning, "embeddings could not start")
    assert not messages.show(types.MessageType.Warning, "embeddings could not start")
    now[0] += 61
    assert messages.show(types.MessageType.Warning, "embeddings could not start")
    assert sent == ["window/showMessage", "window/logMessage", "window/showMessage"]
    for n in range(100):
        messages.show(types.MessageType.Error, f"error {n}")
    assert sent.count("window/showMessage") == 10  # per hour, all texts together
    sent.clear()
    now[0] += 2  # a new second for the log's own limit
    for n in range(100):
        messages.log(types.MessageType.Info, f"line {n}")
    assert len(sent) == 20  # per second
    now[0] += 1.5
    assert messages.log(types.MessageType.Info, "a new second")
