"""A local fake of the Anthropic Messages API, good enough for the real `anthropic` SDK.

Serves `POST /v1/messages` on 127.0.0.1, non-streaming (JSON) and streaming (SSE:
message_start, content_block_start, content_block_delta/text_delta, content_block_stop,
message_delta, message_stop). Replies come from a scripted queue; every request body is
recorded so tests can assert what reached the "LLM" (or that nothing did).

In pytest::

    with FakeAnthropic() as fake:
        fake.script(Reply("Defined in x.py [E1]."), Reply(status=429))
        ...  # point the SDK at fake.base_url
        assert fake.requests[0].json["model"]

Standalone (for the VS Code end-to-end test)::

    python tests/fakes/fake_anthropic.py --port 0 --reply-file replies.json

prints the chosen port on the first line of stdout, then serves until killed.
`GET /_fake/requests` returns the recorded requests as JSON.

Reply templates (in `text`), filled from the request's evidence blocks
(`<evidence id="E1" path="..." lines="a-b" ...>`):
  {cite:E1}    -> "[E1]" if E1 was sent, else the first evidence id sent ("[E?]" if none)
  {path:E1}    -> that evidence's path        {lines:E1} -> its "a-b" range
  {ident:E1}   -> the first identifier-looking token (def/class/function name) in it
  {ids}        -> every evidence id sent, as "[E1] [E2] ..."
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_EVIDENCE_RE = re.compile(
    r'<evidence id="(?P<id>E\d+)" path="(?P<path>[^"]*)" lines="(?P<lines>[^"]*)"[^>]*>'
    r"(?P<body>.*?)</evidence>",
    re.S,
)
_TEMPLATE_RE = re.compile(r"\{(cite|path|lines|ident):(E\d+)\}|\{ids\}")
_DEF_RE = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|type|const|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
_IDENT_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One scripted answer. `status` != 200 answers with an API error body instead."""

    text: str = ""
    status: int = 200
    delay: float = 0.0  # seconds before the response starts (time-out tests)
    chunk_delay: float = 0.0  # seconds between streamed deltas
    chunk_size: int = 12  # characters per text_delta
    retry_after_ms: int | None = 1  # keeps SDK-side retries fast
    error_message: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any] | str) -> Reply:
        if isinstance(data, str):
            return cls(text=data)
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: str
    json: dict[str, Any] = field(default_factory=dict)


def evidence_blocks(body: str) -> list[dict[str, str]]:
    """The evidence blocks found in a request body (JSON-unescaped text)."""
    return [m.groupdict() for m in _EVIDENCE_RE.finditer(body)]


def _first_ident(text: str) -> str:
    m = _DEF_RE.search(text)
    if m:
        return m.group(1)
    m = _IDENT_RE.search(text)
    return m.group(0) if m else "unknown"


def render_template(text: str, request_json: dict[str, Any]) -> str:
    """Fill `{cite:E1}`-style placeholders from the evidence the request carried."""
    flat = json.dumps(request_json, ensure_ascii=False)
    # The body is JSON; decode the strings so the evidence regex sees real quotes.
    texts: list[str] = []
    system = request_json.get("system")
    if isinstance(system, str):
        texts.append(system)
    for msg in request_json.get("messages", []):
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    blocks = {b["id"]: b for b in evidence_blocks("\n".join(texts) or flat)}
    first = next(iter(blocks), None)

    def fill(m: re.Match[str]) -> str:
        if m.group(0) == "{ids}":
            return " ".join(f"[{i}]" for i in blocks) or "[E?]"
        kind, ev_id = m.group(1), m.group(2)
        block = blocks.get(ev_id) or (blocks[first] if first else None)
        if kind == "cite":
            if ev_id in blocks:
                return f"[{ev_id}]"
            return f"[{first}]" if first else "[E?]"
        if block is None:
            return "unknown"
        if kind == "path":
            return block["path"]
        if kind == "lines":
            return block["lines"]
        return _first_ident(block["body"])

    return _TEMPLATE_RE.sub(fill, text)


class FakeAnthropic:
    """The fake server. Thread-safe; start() binds 127.0.0.1 on `port` (0 = any free port)."""

    def __init__(self, port: int = 0, replies: Iterable[Reply] = (), default: Reply | None = None):
        self._lock = threading.Lock()
        self._queue: list[Reply] = list(replies)
        self.default = default or Reply(text="No scripted reply left.")
        self.requests: list[RecordedRequest] = []
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting -------------------------------------------------------------------
    def script(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(r if isinstance(r, Reply) else Reply(text=r) for r in replies)

    def forever(self, reply: Reply | str) -> None:
        """Answer every request (after the queue is empty) with this reply."""
        self.default = reply if isinstance(reply, Reply) else Reply(text=reply)

    def next_reply(self) -> Reply:
        with self._lock:
            return self._queue.pop(0) if self._queue else self.default

    def record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.startswith("/v1/messages")]

    def all_bodies(self) -> str:
        return "\n".join(r.body for r in self.requests)

    # --- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeAnthropic:
        handler = type("_Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    # --- helpers ---------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, event: str, data: dict[str, Any]) -> None:
        chunk = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    # --- routes ----------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path.startswith("/_fake/requests"):
            payload = [
                {"method": r.method, "path": r.path, "body": r.body, "json": r.json}
                for r in self.fake.requests
            ]
            self._send_json(200, payload)
            return
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        self.fake.record(
            RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body
            )
        )
        if not self.path.split("?")[0].endswith("/v1/messages"):
            self._send_json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
            )
            return
        reply = self.fake.next_reply()
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            self._error(reply)
            return
        text = render_template(reply.text, body)
        model = str(body.get("model", "fake-model"))
        in_tokens = max(1, len(raw) // 4)
        out_tokens = max(1, len(text) // 4)
        try:
            if body.get("stream"):
                self._stream(reply, text, model, in_tokens, out_tokens)
            else:
                self._send_json(200, _message(text, model, in_tokens, out_tokens))
        except (BrokenPipeError, ConnectionResetError):  # client gave up (time-out test)
            pass

    def _error(self, reply: Reply) -> None:
        err_type = _ERROR_TYPES.get(reply.status, "api_error")
        headers = {}
        if reply.retry_after_ms is not None:
            headers["retry-after-ms"] = str(reply.retry_after_ms)
        message = reply.error_message or f"fake {err_type} ({reply.status})"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._send_json(
                reply.status,
                {"type": "error", "error": {"type": err_type, "message": message}},
                headers,
            )

    def _stream(self, reply: Reply, text: str, model: str, in_tok: int, out_tok: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        start = _message("", model, in_tok, 1)
        start["content"] = []
        start["stop_reason"] = None
        self._sse("message_start", {"type": "message_start", "message": start})
        self._sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        self._sse("ping", {"type": "ping"})
        size = max(1, reply.chunk_size)
        for i in range(0, len(text), size):
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            self._sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text[i : i + size]},
                },
            )
        self._sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": out_tok},
            },
        )
        self._sse("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _message(text: str, model: str, in_tok: int, out_tok: int) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": in_tok, "output_tokens": out_tok},
    }


def load_replies(path: Path) -> tuple[list[Reply], Reply | None]:
    """A reply file is a JSON list of replies, or {"replies": [...], "default": reply}."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [Reply.from_json(r) for r in data], None
    default = data.get("default")
    return (
        [Reply.from_json(r) for r in data.get("replies", [])],
        Reply.from_json(default) if default is not None else None,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--reply-file", type=Path)
    ap.add_argument("--default-reply", default=None, help="text used when the queue is empty")
    ap.add_argument("--record-file", type=Path, help="append each request as a JSON line here")
    args = ap.parse_args(argv)
    replies, default = load_replies(args.reply_file) if args.reply_file else ([], None)
    if args.default_reply is not None:
        default = Reply(text=args.default_reply)
    fake = FakeAnthropic(args.port, replies, default)
    if args.record_file:
        record_file: Path = args.record_file
        original = fake.record

        def record_to_file(req: RecordedRequest) -> None:
            original(req)
            with record_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"path": req.path, "body": req.body}) + "\n")

        fake.record = record_to_file  # type: ignore[method-assign]
    fake.start()
    print(fake.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
