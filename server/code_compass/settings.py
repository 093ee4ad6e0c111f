"""The engine's settings as one typed object, merged from CLI flags or LSP settings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from code_compass.constants import (
    DEFAULT_MIN_SCORE,
    DEFAULT_MODEL,
    DEFAULT_TOP_K,
    LLM_MAX_TOKENS,
    LLM_TEMPERATURE,
)
from code_compass.errors import InputError
from code_compass.index.scan import ScanSettings


@dataclass(frozen=True, slots=True)
class EngineSettings:
    scan: ScanSettings = field(default_factory=ScanSettings)
    embeddings: bool = True
    min_score: float = DEFAULT_MIN_SCORE
    top_k: int = DEFAULT_TOP_K
    model: str = DEFAULT_MODEL
    max_tokens: int = LLM_MAX_TOKENS
    temperature: float = LLM_TEMPERATURE

    def merged(self, values: dict[str, Any] | None) -> EngineSettings:
        """Apply VS Code-style settings (`search.minScore`, nested or dotted); bad values raise."""
        if not values:
            return self
        flat = _flatten(values)
        s = self
        scan = self.scan
        if "include" in flat:
            scan = replace(scan, include=_globs(flat["include"], "include"))
        if "exclude" in flat:
            scan = replace(scan, exclude=_globs(flat["exclude"], "exclude"))
        if "maxFileSizeKb" in flat:
            kb = _number(flat["maxFileSizeKb"], "maxFileSizeKb", 1, 1_000_000)
            scan = replace(scan, max_file_bytes=int(kb * 1024))
        if "embeddings.enabled" in flat:
            s = replace(s, embeddings=bool(flat["embeddings.enabled"]))
        if "search.minScore" in flat:
            s = replace(s, min_score=_number(flat["search.minScore"], "search.minScore", 0, 1))
        if "search.topK" in flat:
            s = replace(s, top_k=int(_number(flat["search.topK"], "search.topK", 1, 20)))
        if "llm.model" in flat and isinstance(flat["llm.model"], str) and flat["llm.model"]:
            s = replace(s, model=flat["llm.model"])
        if "llm.maxTokens" in flat:
            s = replace(
                s, max_tokens=int(_number(flat["llm.maxTokens"], "llm.maxTokens", 1, 64000))
            )
        if "llm.temperature" in flat:
            s = replace(s, temperature=_number(flat["llm.temperature"], "llm.temperature", 0, 1))
        return replace(s, scan=scan)


def _flatten(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in values.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _number(v: Any, name: str, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise InputError(name, f"must be a number between {lo} and {hi}")
    return float(min(hi, max(lo, v)))


def _globs(v: Any, name: str) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
        return tuple(v)
    raise InputError(name, "must be a list of glob patterns such as ['src/**']")
