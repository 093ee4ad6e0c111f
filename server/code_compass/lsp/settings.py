"""Typed client settings: merged from initializationOptions and didChangeConfiguration.

Keys are those of the VS Code settings under `codeCompass.*`, given either nested
(`{"search": {"topK": 5}}`) or dotted (`{"search.topK": 5}`). A value of the wrong type
is ignored with a warning (settings come from a file the user edits; rejecting the
whole `initialize` for one typo would leave the editor without a server). The API key
is never a setting: it comes only from the server's environment.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from code_compass.constants import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MIN_SCORE,
    DEFAULT_MODEL,
    DEFAULT_TOP_K,
    LLM_MAX_TOKENS,
    LLM_TEMPERATURE,
    MAX_TOP_K,
    MIN_TOP_K,
)

SECTION = "codeCompass"


@dataclass(frozen=True, slots=True)
class Settings:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size_kb: int = DEFAULT_MAX_FILE_BYTES // 1000
    document_globs: tuple[str, ...] = ()
    embeddings_enabled: bool = True
    search_min_score: float = DEFAULT_MIN_SCORE
    search_top_k: int = DEFAULT_TOP_K
    llm_model: str = DEFAULT_MODEL
    llm_max_tokens: int = LLM_MAX_TOKENS
    llm_temperature: float = LLM_TEMPERATURE


# Setting key (as the client spells it) -> (Settings field, value parser).
# A parser returns the typed value or raises ValueError with the fix.
def _globs(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list | tuple) and all(isinstance(g, str) for g in v):
        return tuple(v)
    raise ValueError("must be a list of glob strings such as ['**/*.py']")


def _positive_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
        raise ValueError("must be a positive number")
    return int(v)


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


def _unit_float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError("must be a finite number between 0 and 1")
    if not 0.0 <= v <= 1.0:
        raise ValueError("must be between 0 and 1")
    return float(v)


def _top_k(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError(f"must be a number between {MIN_TOP_K} and {MAX_TOP_K}")
    return max(MIN_TOP_K, min(MAX_TOP_K, int(v)))


def _non_empty_str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("must be a non-empty string")
    return v.strip()


def _temperature(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError("must be a number between 0 and 1")
    if not 0.0 <= v <= 1.0:
        raise ValueError("must be between 0 and 1")
    return float(v)


_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "include": ("include", _globs),
    "exclude": ("exclude", _globs),
    "maxFileSizeKb": ("max_file_size_kb", _positive_int),
    "documentGlobs": ("document_globs", _globs),
    "embeddings.enabled": ("embeddings_enabled", _bool),
    "search.minScore": ("search_min_score", _unit_float),
    "search.topK": ("search_top_k", _top_k),
    "llm.model": ("llm_model", _non_empty_str),
    "llm.maxTokens": ("llm_max_tokens", _positive_int),
    "llm.temperature": ("llm_temperature", _temperature),
}

# Settings whose change means the index must be rebuilt/updated (what gets indexed).
INDEX_FIELDS = frozenset(
    {"include", "exclude", "max_file_size_kb", "document_globs", "embeddings_enabled"}
)


def flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"search": {"topK": 5}}` -> `{"search.topK": 5}`; dotted keys pass through."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in _KEYS:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def merge(base: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """Apply a client settings object on top of `base`; returns (settings, warnings)."""
    if raw is None:
        return base, []
    if not isinstance(raw, Mapping):
        return base, [f"{SECTION} settings must be an object, got {type(raw).__name__}"]
    if SECTION in raw and isinstance(raw[SECTION], Mapping):
        raw = raw[SECTION]  # whole configuration tree sent by some clients
    changes: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in flatten(raw).items():
        key = key.removeprefix(f"{SECTION}.")
        spec = _KEYS.get(key)
        if spec is None:
            continue  # unknown keys are other tools' settings or future ones
        if value is None:
            continue  # VS Code sends null for "not set": keep what we have
        fname, parse = spec
        try:
            changes[fname] = parse(value)
        except ValueError as exc:
            warnings.append(f"setting {SECTION}.{key} {exc}; keeping {getattr(base, fname)!r}")
    return dataclasses.replace(base, **changes), warnings


def changed_fields(old: Settings, new: Settings) -> frozenset[str]:
    return frozenset(
        f.name for f in dataclasses.fields(Settings) if getattr(old, f.name) != getattr(new, f.name)
    )


Listener = Callable[[Settings, Settings, frozenset[str]], None]


@dataclass
class SettingsStore:
    """The current settings plus change listeners (esbonio-style change events)."""

    current: Settings = field(default_factory=Settings)
    _listeners: list[Listener] = field(default_factory=list)

    def on_change(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def update(self, raw: Any) -> list[str]:
        """Merge `raw`, notify listeners if anything changed; returns warnings."""
        old = self.current
        new, warnings = merge(old, raw)
        changed = changed_fields(old, new)
        self.current = new
        if changed:
            for listener in list(self._listeners):
                listener(old, new, changed)
        return warnings
