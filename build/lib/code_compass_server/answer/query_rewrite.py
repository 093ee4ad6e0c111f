"""Plan stage of `ask`, first step: the question as retrieval will read it (the query builder).

Without an API key this is the offline builder (code_compass_server.query: a lexicon, no network);
no call of any kind is made. With a key and a question in a language other than English, one
short model call renders it as English code-search terms, with its own small token budget and
time-out and no retries; a failure, a time-out or an empty reply falls back to the offline
rendering. The offline rendering's words stay in the BM25 query either way, so the question's
own words are never lost. English questions are searched as written.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any

from code_compass_server.answer.llm import LlmConfig, LlmError, complete
from code_compass_server.answer.redact import Redactor
from code_compass_server.answer.verify import identifiers
from code_compass_server.constants import (
    QUERY_REWRITE_MAX_CHARS,
    QUERY_REWRITE_MAX_TOKENS,
    QUERY_REWRITE_TIMEOUT_S,
)
from code_compass_server.query import SOURCE_LLM, build_query, language_name
from code_compass_server.records import RetrievalQuery

REWRITE_SYSTEM = (
    "You turn a developer's question about a codebase into an English code-search query. "
    "Reply with one line of at most 25 space-separated terms: the English words that carry "
    "the question's meaning, the identifiers the code most likely uses for it (function, "
    "class, setting and file names in their usual spelling) and close synonyms. Keep every "
    "identifier, path and quoted text of the question exactly as written. No explanation."
)
_FENCE = re.compile(r"^```\w*\s*|\s*```$")


@dataclass(frozen=True, slots=True)
class QueryRewrite:
    """The retrieval query and how it was made (shown in the answer's `meta.query`)."""

    query: RetrievalQuery
    llm_called: bool = False
    error: str | None = None  # why the model's rewrite was not used
    took_ms: int = 0

    def to_json(self) -> dict[str, Any]:
        out = self.query.to_json()
        if self.llm_called:
            out.update(llmCalled=True, tookMs=self.took_ms)
        if self.error:
            out["error"] = self.error
        return out


def rewrite_config(llm: LlmConfig, timeout_s: float = QUERY_REWRITE_TIMEOUT_S) -> LlmConfig:
    """The answer's model settings with the query builder's own budget: a few tokens, a short
    time-out, no retries, no streaming, and the cheaper model when one is set."""
    return replace(
        llm,
        model=llm.query_model or llm.model,
        max_tokens=QUERY_REWRITE_MAX_TOKENS,
        timeout_s=timeout_s,
        max_retries=0,
        stream=False,
    )


def rewrite_query(
    question: str, llm: LlmConfig, *, timeout_s: float = QUERY_REWRITE_TIMEOUT_S
) -> QueryRewrite:
    """The offline rendering, or the model's when a key is set and the question is in a
    language other than English (see the module doc)."""
    offline = build_query(question)
    if not llm.configured or offline.language in (None, "en"):
        return QueryRewrite(offline)
    started = time.monotonic()
    config = rewrite_config(llm, timeout_s)
    name = language_name(offline.language) or offline.language
    user = f"Question ({name}):\n{Redactor()(question)}"
    try:
        result = complete(config, REWRITE_SYSTEM, [{"role": "user", "content": user}])
    except LlmError as err:
        return QueryRewrite(offline, True, err.message, _ms(started))
    terms = clean_reply(result.text)
    if not terms:
        return QueryRewrite(offline, True, "the model returned no search terms", _ms(started))
    return QueryRewrite(merge(offline, terms), True, None, _ms(started))


def clean_reply(text: str) -> str:
    """The first non-empty line of the reply, fences and quotes stripped, length-capped."""
    for line in _FENCE.sub("", text.strip()).splitlines():
        line = line.strip().strip("\"'`").strip()
        if re.search(r"\w", line):
            return line[:QUERY_REWRITE_MAX_CHARS]
    return ""


def merge(offline: RetrievalQuery, terms: str) -> RetrievalQuery:
    """The model's terms as the rendering, plus any identifier of the question it dropped;
    BM25 also keeps the offline rendering's words."""
    words = terms.split()
    kept = set(words)
    words += [i for i in identifiers(offline.original) if i not in kept]
    rewritten = " ".join(words)
    lexical = " ".join(dict.fromkeys([*words, *offline.lexical.split()]))
    asked = {w.lower() for w in re.findall(r"\w+", offline.original)}
    added = tuple(dict.fromkeys(w for w in words if w.lower() not in asked))
    return RetrievalQuery(
        offline.original, offline.language, rewritten, lexical, added, source=SOURCE_LLM
    )


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
