"""`codeCompass/ask` -> the answer JSON; streamed text as `codeCompass/answerDelta`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from code_compass_server.lsp.params import ask_request

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

ANSWER_DELTA = "codeCompass/answerDelta"


class AskFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def ask(self, params: Any) -> dict[str, Any]:
        ls = self.ls
        msg_id = ls.protocol.msg_id  # read on the loop: it lives in this request's context

        def run() -> dict[str, Any]:
            engine = ls.require_engine()
            request = ask_request(params, engine.settings, engine.projects())
            stream_id = request.request_id if request.request_id is not None else msg_id

            delta: dict[str, Any] = {"requestId": stream_id}
            if request.body.get("conversationId"):
                delta["conversationId"] = request.body["conversationId"]

            def on_text(text: str) -> None:
                ls.notify_threadsafe(ANSWER_DELTA, {**delta, "text": text})

            answer: dict[str, Any] = engine.ask(request.body, on_text=on_text)
            return answer

        return await ls.run_bulk(run)
