"""The Code Compass language server (pygls 2.x, stdio): `code-compass serve`.

`create_server()` registers each LSP method exactly once and delegates to small feature
classes (esbonio-style). Every request is answered exactly once (`lsp/protocol.py`). Threads:
- the asyncio event loop only parses messages and dispatches;
- two request lanes run the blocking engine calls (`lsp/lanes.py`): interactive (hover, lens,
  status) and bulk (search, ask, reindex), so a burst of searches never delays a hover;
- one ordered "buffer lane" applies didOpen/didChange/didClose to the engine;
- the engine's index scheduler writes the index on its own thread; the server only asks it
  for work and hears its progress (`IndexProgressReporter`); nothing else waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from code_compass_server import __version__
from code_compass_server.cancellation import Cancelled
from code_compass_server.constants import LSP_GIL_SWITCH_INTERVAL_S, SERVER_MALLOC_ARENAS
from code_compass_server.engine_status import EngineStatus, ProjectStatus, project_to_json
from code_compass_server.errors import InputError
from code_compass_server.index.heap import limit_arenas
from code_compass_server.lsp.client_messages import ClientMessages
from code_compass_server.lsp.lanes import Lane, Lanes
from code_compass_server.lsp.open_documents import OpenDocuments
from code_compass_server.lsp.params import invalid_params
from code_compass_server.lsp.progress import INDEX_STATE, IndexProgressReporter
from code_compass_server.lsp.protocol import CodeCompassProtocol
from code_compass_server.lsp.stdio_reader import ChunkedStdinReader
from code_compass_server.records import JsonObject
from code_compass_server.symbols.resolve import close_shared_resolver

if TYPE_CHECKING:
    from code_compass_server.engine import Engine

log = logging.getLogger(__name__)
T = TypeVar("T")

SHUTDOWN_JOIN_S = 10.0


# pygls leaves it unannotated; this is its documented return type.
_default_converter: Callable[[], cattrs.Converter] = default_converter


def converter_factory() -> cattrs.Converter:
    """pygls' converter, but custom methods get their params as plain JSON (dicts).

    The default turns unknown params into namedtuples, which hides missing keys and
    mangles names; params.py validates the raw JSON instead.
    """
    conv = _default_converter()

    def keep_json(obj: dict[str, Any], cls: type) -> Any:
        # Only the fields the record has (a missing `params` is None, extra keys are dropped):
        # a request for an unknown method must still reach the -32601 answer.
        names = [a.name for a in attrs.fields(cls)]
        return cls(**{name: obj.get(name) for name in names})

    conv.register_structure_hook(JsonRPCRequestMessage, keep_json)
    conv.register_structure_hook(JsonRPCNotification, keep_json)
    conv.register_structure_hook(JsonRPCResponseMessage, keep_json)  # untyped results too
    return conv


class CodeCompassServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "code-compass",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            converter_factory=converter_factory,
            protocol_cls=CodeCompassProtocol,
        )
        self.engine: Engine | None = None  # owns the settings (engine.settings_store)
        self.folders: dict[str, str] = {}  # workspace folder URI -> project name
        self.roots: dict[str, Path] = {}  # project name -> folder path (for file links)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lanes = Lanes()
        self.messages = ClientMessages(self.notify_threadsafe)
        self.documents = OpenDocuments(self._in_workspace)
        self.buffer_lane = ThreadPoolExecutor(1, thread_name_prefix="cc-buffers")
        self._closed = threading.Event()
        self.exit_code = 0

    # -- engine access -----------------------------------------------------------------
    def use_engine(self, engine: Engine) -> None:
        """Serve this engine, and show its index jobs' progress."""
        self.engine = engine
        engine.scheduler.subscribe(IndexProgressReporter(self))

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise JsonRpcServerNotInitialized("the server is not initialized yet")
        return self.engine

    def _in_workspace(self, path: Path) -> bool:
        engine = self.engine
        return engine is not None and engine.project_for_path(path) is not None

    async def run_bulk(self, fn: Callable[..., T], *args: Any) -> T:
        """`run_blocking` on the bulk lane: searches, asks, reindex, workspace changes."""
        return await self.run_blocking(fn, *args, lane=Lane.BULK)

    async def run_blocking(
        self,
        fn: Callable[..., T],
        *args: Any,
        lane: Lane = Lane.INTERACTIVE,
        supersede: str | None = None,
    ) -> T:
        """Run a blocking engine call on a request lane; InputError -> -32602; a cancelled
        request -> -32800 (pygls answers it when the awaiting task ends cancelled)."""
        self.loop = asyncio.get_running_loop()
        try:
            return await self.lanes.run(lane, fn, *args, supersede=supersede)
        except InputError as err:
            raise invalid_params(err) from None
        except Cancelled:
            raise asyncio.CancelledError() from None
        except (JsonRpcException, asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # incl. Rust panics (pyo3 PanicException is a
            # BaseException): the client gets -32603 with the reason and we go on
            log.exception("request failed")
            raise JsonRpcInternalError(f"{type(exc).__name__}: {exc}") from None

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def call_in_loop(self, fn: Callable[[], None]) -> None:
        """Schedule `fn` on the event loop (from any thread); dropped after shutdown."""
        loop = self.loop
        if loop is None or loop.is_closed() or self._closed.is_set():
            return
        with contextlib.suppress(RuntimeError):  # loop closing: nobody left to tell
            loop.call_soon_threadsafe(fn)

    def notify_threadsafe(self, method: str, params: Any) -> None:
        self.call_in_loop(lambda: self.protocol.notify(method, params))

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        """Every pop-up goes through the rate limit (`lsp/client_messages.py`)."""
        self.messages.show(params.type, params.message)

    def _start_io_async(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls' stdio loop with a reader that reads in large chunks (`lsp/stdio_reader.py`):
        a hover behind a burst of pipelined searches is read at once, not after them."""
        self._stop_event = threading.Event()
        reader = ChunkedStdinReader(stdin or sys.stdin.buffer)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(
                run_async(
                    stop_event=self._stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=log,
                    error_handler=self.report_server_error,
                )
            )
        except BrokenPipeError:
            log.error("connection to the client lost: shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            reader.close()
            self.shutdown()  # type: ignore[no-untyped-call]

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls reports here what it could not handle. A body that is not JSON gets -32700
        (id null); the rest is logged, never shown as a pop-up (the user cannot act on it)."""
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            protocol = self.protocol
            if isinstance(protocol, CodeCompassProtocol):
                protocol.answer_parse_error(str(error))
            return
        if source is FeatureRequestError:  # already in the request's error answer
            log.debug("request failed: %s", error)
            return
        self.messages.log(types.MessageType.Error, f"Code Compass: {type(error).__name__}: {error}")

    def client_supports_progress(self) -> bool:
        caps = self.protocol.client_capabilities
        window = getattr(caps, "window", None) if caps else None
        return bool(window and window.work_done_progress)

    # -- indexing ----------------------------------------------------------------------
    def index_state(self, status: EngineStatus | None = None) -> JsonObject:
        """`codeCompass/indexState`: one entry per project, with its index jobs' state."""
        engine = self.engine
        if status is None:
            if engine is None:
                return {"projects": []}
            status = engine.status()
        return {"projects": [index_state_entry(p) for p in status.projects]}

    def send_index_state(self) -> None:
        """Send codeCompass/indexState now (call from a worker thread, not the loop)."""
        if self._closed.is_set():
            return
        try:
            state = self.index_state()
        except Exception:
            log.exception("status failed")
            return
        self.notify_threadsafe(INDEX_STATE, state)

    # -- shutdown ----------------------------------------------------------------------
    def close_all(self) -> None:
        """Stop indexing promptly, then close the engine. Idempotent; any thread."""
        if self._closed.is_set():
            return
        self._closed.set()
        engine = self.engine
        if engine is not None and not engine.scheduler.stop(SHUTDOWN_JOIN_S):
            log.warning("indexing thread did not stop within %ss", SHUTDOWN_JOIN_S)
        self.buffer_lane.shutdown(wait=True, cancel_futures=True)
        self.lanes.shutdown()
        close_shared_resolver(self)  # jedi's process ends with the server
        engine, self.engine = self.engine, None
        if engine is not None:
            try:
                engine.close()
            except Exception:
                log.exception("engine close failed")


def index_state_entry(p: ProjectStatus) -> JsonObject:
    entry = project_to_json(p)
    entry["indexing"] = p.indexing
    entry["queued"] = p.queued
    if p.last_error:
        entry["lastError"] = p.last_error
    return entry


def _handler(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A plain function around a feature's bound method (pygls tags handlers with
    attributes, which bound methods cannot carry)."""
    if asyncio.iscoroutinefunction(method):

        async def handler_async(params: Any = None) -> Any:
            return await method(params)

        return handler_async

    def handler(params: Any = None) -> Any:
        return method(params)

    return handler


def create_server() -> CodeCompassServer:
    """Build the server; every LSP method is registered here, once."""
    from code_compass_server.lsp.features.ask import AskFeature
    from code_compass_server.lsp.features.codelens import CodeLensFeature
    from code_compass_server.lsp.features.documents import DocumentsFeature
    from code_compass_server.lsp.features.hover import HoverFeature
    from code_compass_server.lsp.features.search import SearchFeature
    from code_compass_server.lsp.features.status import StatusFeature
    from code_compass_server.lsp.features.workspace import WorkspaceFeature

    ls = CodeCompassServer()
    workspace = WorkspaceFeature(ls)
    documents = DocumentsFeature(ls)
    search = SearchFeature(ls)
    status = StatusFeature(ls)
    ask = AskFeature(ls)
    hover = HoverFeature(ls)
    lens = CodeLensFeature(ls)

    async def initialize(params: types.InitializeParams) -> None:
        lens.offer_command(params)  # before pygls computes the capabilities
        await workspace.initialize(params)

    ls.feature(types.INITIALIZE)(initialize)
    ls.feature(types.INITIALIZED)(_handler(workspace.initialized))
    ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(_handler(workspace.did_change_folders))
    ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(
        _handler(workspace.did_change_configuration)
    )
    ls.feature(types.SHUTDOWN)(_handler(workspace.shutdown))
    ls.feature(types.EXIT)(_handler(workspace.exit))

    ls.feature(types.TEXT_DOCUMENT_DID_OPEN)(_handler(documents.did_open))
    ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)(_handler(documents.did_change))
    ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)(_handler(documents.did_close))

    ls.feature(types.TEXT_DOCUMENT_HOVER)(_handler(hover.hover))
    ls.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))(
        _handler(lens.code_lens)
    )
    ls.feature(types.CODE_LENS_RESOLVE)(_handler(lens.resolve))

    ls.feature("codeCompass/search")(_handler(search.search))
    ls.feature("codeCompass/status")(_handler(status.status))
    ls.feature("codeCompass/reindex")(_handler(status.reindex))
    ls.feature("codeCompass/ask")(_handler(ask.ask))
    return ls


def run_stdio() -> None:
    """`code-compass serve`: serve over stdin/stdout until `exit` or end of input."""
    limit_arenas(SERVER_MALLOC_ARENAS)  # before its threads start (index/heap.py)
    ls = create_server()
    sys.setswitchinterval(LSP_GIL_SWITCH_INTERVAL_S)  # hovers beside busy search threads
    try:
        ls.start_io()
    finally:
        ls.close_all()  # client gone without shutdown: still stop indexing cleanly
    if ls.exit_code:
        sys.exit(ls.exit_code)  # LSP: `exit` without `shutdown` first exits with 1


def main() -> int:
    """`python -m code_compass_server.lsp`; logs go to stderr ($CODE_COMPASS_LOG sets the level)."""
    logging.basicConfig(
        level=os.environ.get("CODE_COMPASS_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    run_stdio()
    return 0


__all__ = ["CodeCompassServer", "create_server", "main", "run_stdio"]
