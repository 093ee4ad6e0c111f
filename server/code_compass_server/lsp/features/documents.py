"""Unsaved buffers: for an open document the server's truth is the editor's text.

The protocol keeps the document (full or incremental sync, within the bounds of
lsp/open_documents.py) before these handlers run, which see only documents it kept; we hand
its text to the engine on one ordered lane, so a burst of keystrokes costs one engine
update per pause (only the newest text is applied) and never blocks the event loop.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

log = logging.getLogger(__name__)


def document_path(uri: str) -> Path | None:
    """The normalised path of a `file:` URI (`root/../x` is not under root); else None."""
    if not uri.startswith("file:"):
        return None  # untitled:, git:, vscode-notebook-cell: … are not workspace files
    fs = to_fs_path(uri)
    return Path(os.path.normpath(fs)) if fs else None


class DocumentsFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}  # uri -> newest text not yet given to the engine

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._changed(params.text_document.uri)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._changed(params.text_document.uri)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        with self._lock:
            self._pending.pop(uri, None)
        self._submit(self._clear, uri)

    # -- the lane ----------------------------------------------------------------------
    def _changed(self, uri: str) -> None:
        if document_path(uri) is None:
            return
        text = self.ls.workspace.get_text_document(uri).source
        with self._lock:
            scheduled = uri in self._pending
            self._pending[uri] = text
        if not scheduled:
            self._submit(self._flush, uri)

    def _submit(self, fn: object, uri: str) -> None:
        with contextlib.suppress(RuntimeError):  # shutting down
            self.ls.buffer_lane.submit(fn, uri)  # type: ignore[arg-type]

    def _flush(self, uri: str) -> None:
        with self._lock:
            text = self._pending.pop(uri, None)
        path = document_path(uri)
        engine = self.ls.engine
        if text is None or path is None or engine is None:
            return
        if engine.project_for_path(path) is None:
            return  # outside every workspace folder: not ours to index
        try:
            engine.set_buffer(path, text)
        except Exception:
            log.exception("set_buffer failed for %s", uri)

    def _clear(self, uri: str) -> None:
        path = document_path(uri)
        engine = self.ls.engine
        if path is None or engine is None or engine.project_for_path(path) is None:
            return
        try:
            engine.clear_buffer(path)
        except Exception:
            log.exception("clear_buffer failed for %s", uri)


def file_uri(root: Path, rel: str) -> str:
    """The `file:` URI of a workspace file, as links in hovers and lens locations use it."""
    return (root / rel).as_uri()
