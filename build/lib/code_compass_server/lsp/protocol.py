"""JSON-RPC as the spec says, whatever the client sends: every request answered exactly once.

pygls drops what it cannot parse (no answer, a pop-up instead), runs a notification method sent
with an id as a notification (no answer), and answers a reused id twice. This protocol:
- a message with an id and a method is a request: it gets one answer — the result, -32601 (an
  unknown method, or a notification method sent with an id: not run), -32602 naming the bad
  field (params that do not fit the method's type), -32600 (not JSON-RPC 2.0);
- a request whose id is in flight or was used recently is a duplicate: it is not run, and the
  refusal goes out with id null, so the original id is still answered once;
- a body that is not JSON gets -32700 with id null (see `CodeCompassServer.report_server_error`);
- open documents are kept only within bounds (`lsp/open_documents.py`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import RPCRequest

from code_compass_server.constants import LSP_RECENT_IDS

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
MAX_DETAIL_CHARS = 200


@dataclass(frozen=True, slots=True)
class RejectedMessage:
    """A message that cannot be run as sent, and the answer it gets (if it has an id)."""

    msg_id: int | str | None  # None: no usable id (answered with id null if `answer_null`)
    method: str | None
    code: int
    message: str
    answer_null: bool = False


def valid_id(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + "…"


def describe_params_error(method: str, exc: BaseException) -> str:
    """-32602's message: which field, what was expected (values left out: they may be huge)."""
    cause = exc.__cause__ or exc
    details: list[str] = []
    if isinstance(cause, cattrs.BaseValidationError):
        details = [_short(line) for line in cattrs.transform_error(cause, path="$")[:3]]
    elif str(cause):
        details = [_short(str(cause))]
    detail = "; ".join(details) or type(cause).__name__
    return f"Invalid params for {method}: {detail} (see the LSP specification of {method})"


def _is_notification_type(message_type: type) -> bool:
    return attrs.has(message_type) and "id" not in attrs.fields_dict(message_type)


class CodeCompassProtocol(LanguageServerProtocol):
    _server: CodeCompassServer

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._ids_lock = threading.Lock()
        self._open_ids: set[int | str] = set()  # requests received and not yet answered
        self._recent_ids: OrderedDict[int | str, None] = OrderedDict()

    # -- reading --------------------------------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        """Called by json.loads for every object (nested ones too); never raises."""
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data
        method = data.get("method")
        is_request = "id" in data and "method" in data
        if is_request:
            msg_id = data["id"]
            if not valid_id(msg_id):
                return RejectedMessage(
                    None, None, INVALID_REQUEST,
                    "Invalid request: 'id' must be a string or an integer", answer_null=True,
                )  # fmt: skip
            if not isinstance(method, str):
                return RejectedMessage(
                    msg_id, None, INVALID_REQUEST, "Invalid request: 'method' must be a string"
                )
            message_type = self.get_message_type(method)
            if message_type is not None and _is_notification_type(message_type):
                return RejectedMessage(
                    msg_id, method, METHOD_NOT_FOUND,
                    f"'{method}' is a notification: send it without an 'id' (it was not run)",
                )  # fmt: skip
        try:
            return super().structure_message(data)
        except Exception as exc:
            if is_request:
                return RejectedMessage(
                    data["id"], method, INVALID_PARAMS, describe_params_error(str(method), exc)
                )
            if isinstance(method, str):  # a notification we cannot read: nobody to answer
                return RejectedMessage(
                    None, method, INVALID_PARAMS, describe_params_error(method, exc)
                )
            return RejectedMessage(None, None, INVALID_REQUEST, "unreadable response ignored")

    def handle_message(self, message: Any) -> None:
        if isinstance(message, RejectedMessage):
            self._reject(message)
            return
        jsonrpc = getattr(message, "jsonrpc", None)
        if jsonrpc != self.VERSION:
            self._not_jsonrpc(message)
            return
        if isinstance(message, RPCRequest):
            if not self._admit(message.id, message.method):
                return
            if self._shutdown:
                self._answer_error(message.id, INVALID_REQUEST, "the server is shutting down")
                return
        super().handle_message(message)

    def _not_jsonrpc(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and valid_id(message.get("id")):
            if self._admit(message["id"], str(message["method"])):
                self._answer_error(
                    message["id"], INVALID_REQUEST, "Invalid request: 'jsonrpc' must be \"2.0\""
                )
        elif isinstance(message, dict) and ("result" in message or "error" in message):
            log.info("ignored a response that is not JSON-RPC 2.0")
        else:
            self._send_null_error(INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message")

    def _reject(self, rejected: RejectedMessage) -> None:
        if rejected.msg_id is not None:
            if self._admit(rejected.msg_id, rejected.method):
                self._answer_error(rejected.msg_id, rejected.code, rejected.message)
        elif rejected.answer_null:
            self._send_null_error(rejected.code, rejected.message)
        else:
            self._server.messages.log(types.MessageType.Warning, f"ignored: {rejected.message}")

    # -- answered once ----------------------------------------------------------------------
    def _admit(self, msg_id: int | str, method: str | None) -> bool:
        """Register a request id; False (and a refusal with id null) for a duplicate."""
        with self._ids_lock:
            duplicate = msg_id in self._open_ids or msg_id in self._recent_ids
            if not duplicate:
                self._open_ids.add(msg_id)
                self._recent_ids[msg_id] = None
                if len(self._recent_ids) > LSP_RECENT_IDS:
                    self._recent_ids.popitem(last=False)
        if duplicate:
            self._send_null_error(
                INVALID_REQUEST,
                f"Invalid request: id {msg_id!r} ({method}) is already in use; "
                "every request needs a new id (this one was not run)",
            )
        return not duplicate

    def _answer_error(self, msg_id: int | str, code: int, message: str) -> None:
        error = types.ResponseError(code=code, message=message)
        self._send_response(msg_id, None, error)

    def _send_null_error(self, code: int, message: str) -> None:
        log.info("%s", message)
        self._send_data(
            types.ResponseErrorMessage(
                id=None, error=types.ResponseError(code=code, message=message)
            )
        )

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: types.ResponseError | None = None
    ) -> None:
        with self._ids_lock:
            if msg_id not in self._open_ids:
                log.info("request %r was already answered; not again", msg_id)
                return
            self._open_ids.discard(msg_id)
        super()._send_response(msg_id, result, error)

    def answer_parse_error(self, detail: str) -> None:
        self._send_null_error(PARSE_ERROR, f"Parse error: {_short(detail)}")

    # -- documents, kept within bounds -----------------------------------------------------
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        doc = params.text_document
        why = self._server.documents.refusal(doc.uri, len(doc.text))
        if why is not None:
            self.workspace.remove_text_document(doc.uri)
            log.info("not keeping %s: %s", _short(doc.uri), why)
            return
        self.workspace.put_text_document(doc)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        documents = self._server.documents
        if not documents.kept(uri):
            return  # refused at didOpen (or never opened): the disk text is the truth
        for change in params.content_changes:
            self.workspace.update_text_document(params.text_document, change)
        size = len(self.workspace.get_text_document(uri).source)
        why = documents.resize(uri, size)
        if why is not None:  # grown past a cap: let it go, the engine reads the disk again
            self.workspace.remove_text_document(uri)
            log.info("no longer keeping %s: %s", _short(uri), why)
            closed = types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)
            )
            if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
                yield handler, (closed,), None
            return
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        self._server.documents.release(uri)
        self.workspace.remove_text_document(uri)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
