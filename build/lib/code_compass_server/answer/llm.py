"""The Anthropic Messages API through the official SDK: streaming, time-out, retries.

Retries are ours (the SDK's are turned off) so that the count and back-off are configurable,
fast in tests, and reported: a retried call is a pipeline step "with a caveat"
(docs/rules.md: confidence-components).
A stream that already delivered text is never retried (the client has shown it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from code_compass_server.constants import (
    DEFAULT_MODEL,
    LLM_BACKOFF_BASE_S,
    LLM_BACKOFF_MAX_S,
    LLM_MAX_RETRIES,
    LLM_MAX_TOKENS,
    LLM_TIMEOUT_S,
)

if TYPE_CHECKING:  # the SDK takes over a second to import: only a call with a key pays for it
    import anthropic
    from anthropic.types import Message


@dataclass(frozen=True, slots=True)
class LlmConfig:
    """None for api_key/base_url means "as the SDK finds them" (ANTHROPIC_API_KEY/_BASE_URL)."""

    model: str = DEFAULT_MODEL
    max_tokens: int = LLM_MAX_TOKENS
    # The rule wants 0.3 (docs/rules.md: llm-limits), but API version 2026-10-21, which
    # SDK 2.x sends, rejects any sampling parameter with HTTP 400; the SDK has no argument
    # for it. So it is off by default and, when set, sent raw (for proxies / older APIs).
    temperature: float | None = None
    timeout_s: float = LLM_TIMEOUT_S
    max_retries: int = LLM_MAX_RETRIES
    backoff_base_s: float = LLM_BACKOFF_BASE_S
    backoff_max_s: float = LLM_BACKOFF_MAX_S
    api_key: str | None = None
    base_url: str | None = None
    stream: bool = True
    query_model: str | None = None  # the query builder's model; None: `model`

    def resolved_api_key(self) -> str | None:
        return self.api_key or os.environ.get("ANTHROPIC_API_KEY") or None

    @property
    def configured(self) -> bool:
        """Without a key the pipeline answers extractively and never calls the API."""
        return bool(self.resolved_api_key())


@dataclass(frozen=True, slots=True)
class LlmResult:
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    retries: int
    latency_ms: int


class LlmError(RuntimeError):
    """The call failed after retries; `message` is meant for a person."""

    def __init__(self, message: str, *, status: int | None, retries: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retries = retries


def _retryable(err: Exception) -> bool:
    import anthropic

    if isinstance(err, anthropic.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(err, anthropic.APIStatusError):
        return err.status_code == 429 or err.status_code >= 500
    return False


def _describe(err: Exception) -> tuple[str, int | None]:
    import anthropic

    if isinstance(err, anthropic.APITimeoutError):
        return "the request timed out", None
    if isinstance(err, anthropic.APIConnectionError):
        return "could not connect to the API", None
    if isinstance(err, anthropic.APIStatusError):
        detail = ""
        body = err.body
        if isinstance(body, dict):
            inner = body.get("error")
            if isinstance(inner, dict):
                detail = str(inner.get("message") or "")
        return f"HTTP {err.status_code}{': ' + detail if detail else ''}", err.status_code
    return f"{type(err).__name__}: {err}", None


def make_client(config: LlmConfig) -> anthropic.Anthropic:
    import anthropic

    kwargs: dict[str, object] = {"timeout": config.timeout_s, "max_retries": 0}
    if config.api_key:
        kwargs["api_key"] = config.api_key
    if config.base_url:
        kwargs["base_url"] = config.base_url
    return anthropic.Anthropic(**kwargs)  # type: ignore[arg-type]


def complete(
    config: LlmConfig,
    system: str,
    messages: list[dict[str, str]],
    *,
    on_text: Callable[[str], None] | None = None,
    client: anthropic.Anthropic | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> LlmResult:
    """One answer from the model; raises LlmError after `max_retries` retries."""
    client = client or make_client(config)
    started = time.monotonic()
    attempt = 0
    while True:
        emitter = _Emitter(on_text)
        try:
            text, final = _call(client, config, system, messages, emitter)
            return LlmResult(
                text=text,
                model=str(final.model or config.model),
                input_tokens=int(final.usage.input_tokens or 0),
                output_tokens=int(final.usage.output_tokens or 0),
                retries=attempt,
                latency_ms=int((time.monotonic() - started) * 1000),
            )
        except Exception as err:  # SDK and transport errors alike end as LlmError
            sleep(_backoff_or_raise(err, config, attempt, emitted=emitter.emitted))
            attempt += 1


class _Emitter:
    """Passes streamed text on and remembers whether any was shown (then no retry)."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self.on_text = on_text
        self.emitted = False

    def __call__(self, delta: str) -> None:
        if self.on_text is not None and delta:
            self.emitted = True
            self.on_text(delta)


def _call(
    client: anthropic.Anthropic,
    config: LlmConfig,
    system: str,
    messages: list[dict[str, str]],
    emitter: _Emitter,
) -> tuple[str, Message]:
    """One attempt: (answer text, final message)."""
    extra = {"temperature": config.temperature} if config.temperature is not None else None
    if config.stream:
        parts: list[str] = []
        with client.messages.stream(
            model=config.model,
            max_tokens=config.max_tokens,
            system=system,
            messages=messages,  # type: ignore[arg-type]
            extra_body=extra,
        ) as stream:
            for delta in stream.text_stream:
                parts.append(delta)
                emitter(delta)
            final = stream.get_final_message()
        return "".join(parts), final
    final = client.messages.create(  # type: ignore[assignment]
        model=config.model,
        max_tokens=config.max_tokens,
        system=system,
        messages=messages,  # type: ignore[arg-type]
        extra_body=extra,
    )
    text = "".join(b.text for b in final.content if b.type == "text")
    if emitter.on_text is not None and text:
        emitter.on_text(text)
    return text, final


def _backoff_or_raise(err: Exception, config: LlmConfig, attempt: int, *, emitted: bool) -> float:
    """Seconds to wait before the next attempt, or LlmError when this one was the last."""
    what, status = _describe(err)
    if emitted or not _retryable(err) or attempt >= config.max_retries:
        tries = f" after {attempt} retr{'y' if attempt == 1 else 'ies'}" if attempt else ""
        raise LlmError(f"LLM call failed{tries}: {what}", status=status, retries=attempt) from err
    return min(config.backoff_max_s, config.backoff_base_s * (2**attempt))
