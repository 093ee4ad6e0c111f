"""The settings: one typed object, the one parser of the `codeCompass.*` keys, change events.

`EngineSettings` holds every setting. The four resource-scoped keys (what gets indexed) may be
set per workspace folder: `scan` holds the window-wide values, `folders` each folder's own, and
`scan_for(root)` is the view one project reads. Front doors build the object: the CLI from its
flags, the language server by handing the client's JSON to `parse_settings` (through
`SettingsStore.merge`). Every consumer subscribes to the engine's `SettingsStore` and gets a
`SettingsChange` (old, new, what changed) after each change.

Sizes: `maxFileSizeKb` counts kilobytes of 1,000 bytes (SI), in the client, the CLI
(`--max-file-kb`) and the docs alike; `kb_to_bytes` is the one conversion.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from code_compass_server.constants import (
    BYTES_PER_KB,
    DEFAULT_MIN_SCORE,
    DEFAULT_MODEL,
    DEFAULT_TOP_K,
    LLM_MAX_TOKENS,
    LLM_MAX_TOKENS_MAX,
    LLM_MAX_TOKENS_MIN,
    LLM_TEMPERATURE,
    MAX_TOP_K,
    MIN_TOP_K,
)
from code_compass_server.index.scan import ScanSettings

log = logging.getLogger(__name__)

SECTION = "codeCompass"


def kb_to_bytes(kb: int) -> int:
    """`maxFileSizeKb` / `--max-file-kb` -> bytes (1 KB = 1,000 bytes)."""
    return kb * BYTES_PER_KB


def bytes_to_kb(n: int) -> int:
    return n // BYTES_PER_KB


@dataclass(frozen=True, slots=True)
class FolderSettings:
    """One workspace folder's own values of the resource-scoped keys; None = the window's."""

    root: Path  # resolved folder path, as the engine's projects know it
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    max_file_bytes: int | None = None
    documents: tuple[str, ...] | None = None

    def over(self, scan: ScanSettings) -> ScanSettings:
        """These values on top of the window-wide ones."""
        return ScanSettings(
            max_file_bytes=scan.max_file_bytes
            if self.max_file_bytes is None
            else self.max_file_bytes,
            include=scan.include if self.include is None else self.include,
            exclude=scan.exclude if self.exclude is None else self.exclude,
            documents=scan.documents if self.documents is None else self.documents,
        )


@dataclass(frozen=True, slots=True)
class EngineSettings:
    scan: ScanSettings = field(default_factory=ScanSettings)  # window-wide resource-scoped keys
    folders: tuple[FolderSettings, ...] = ()  # per-folder overrides of `scan`
    embeddings: bool = True
    min_score: float = DEFAULT_MIN_SCORE
    top_k: int = DEFAULT_TOP_K
    model: str = DEFAULT_MODEL
    max_tokens: int = LLM_MAX_TOKENS
    temperature: float = LLM_TEMPERATURE
    hover: bool = True  # textDocument/hover answers (off: null, for this extension alone)
    code_lens: bool = True  # textDocument/codeLens answers (off: no lenses)

    def folder(self, root: Path) -> FolderSettings | None:
        return next((f for f in self.folders if f.root == root), None)

    def scan_for(self, root: Path) -> ScanSettings:
        """What to index in the project at `root`: its folder's values over the window's."""
        own = self.folder(root)
        return own.over(self.scan) if own is not None else self.scan


# --- the keys -------------------------------------------------------------------------------


def _globs(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list | tuple) and all(isinstance(g, str) for g in v):
        return tuple(v)
    raise ValueError("must be a list of glob strings such as ['**/*.py']")


def _float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError("must be a finite number")
    return float(v)


def _int(v: Any) -> int:
    return int(_float(v))


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


def _non_empty_str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("must be a non-empty string")
    return v.strip()


def _same(v: Any) -> Any:
    return v


# JSON schema type (as the client's package.json declares it) -> check of a JSON value.
_PARSERS: dict[str, Callable[[Any], Any]] = {
    "array": _globs,
    "boolean": _bool,
    "integer": _int,
    "number": _float,
    "string": _non_empty_str,
}


@dataclass(frozen=True, slots=True)
class SettingKey:
    """One `codeCompass.*` key: the field it sets and how its JSON value is checked.

    Type and bounds are in the client's units, as its settings UI declares them.
    """

    name: str  # dotted, without the section: "search.topK"
    field: str  # of ScanSettings when `resource`, else of EngineSettings
    type: str  # JSON schema type: array (of glob strings), boolean, integer, number, string
    resource: bool = False  # may differ per workspace folder (VS Code scope "resource")
    minimum: float | None = None
    maximum: float | None = None
    clamp: bool = False  # out of bounds: the nearest bound (else: rejected)
    stored: Callable[[Any], Any] = _same  # client units -> the field's
    shown: Callable[[Any], Any] = _same  # the field's units -> the client's

    def value(self, raw: Any) -> Any:
        """The field's value for a JSON value; ValueError says what to fix."""
        v = _PARSERS[self.type](raw)
        lo, hi = self.minimum, self.maximum
        if self.clamp:
            v = max(lo, v) if lo is not None else v
            v = min(hi, v) if hi is not None else v
        elif (lo is not None and v < lo) or (hi is not None and v > hi):
            bounds = f"between {lo:g} and {hi:g}" if hi is not None else f"at least {lo:g}"
            raise ValueError(f"must be {bounds}")
        return self.stored(v)


KEYS: tuple[SettingKey, ...] = (
    SettingKey("include", "include", "array", resource=True),
    SettingKey("exclude", "exclude", "array", resource=True),
    SettingKey(
        "maxFileSizeKb",
        "max_file_bytes",
        "integer",
        resource=True,
        minimum=1,
        stored=kb_to_bytes,
        shown=bytes_to_kb,
    ),
    SettingKey("documentGlobs", "documents", "array", resource=True),
    SettingKey("embeddings.enabled", "embeddings", "boolean"),
    SettingKey("search.minScore", "min_score", "number", minimum=0, maximum=1),
    SettingKey("search.topK", "top_k", "integer", minimum=MIN_TOP_K, maximum=MAX_TOP_K, clamp=True),
    SettingKey("llm.model", "model", "string"),
    SettingKey(
        "llm.maxTokens",
        "max_tokens",
        "integer",
        minimum=LLM_MAX_TOKENS_MIN,
        maximum=LLM_MAX_TOKENS_MAX,
    ),
    SettingKey("llm.temperature", "temperature", "number", minimum=0, maximum=1),
    SettingKey("hover.enabled", "hover", "boolean"),
    SettingKey("codeLens.enabled", "code_lens", "boolean"),
)
_BY_NAME = {k.name: k for k in KEYS}
RESOURCE_KEYS = tuple(k.name for k in KEYS if k.resource)


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"search": {"topK": 5}}` -> `{"search.topK": 5}`; dotted keys pass through."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in _BY_NAME:
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _checked(raw: Any, warnings: list[str], *, resource_only: bool) -> dict[SettingKey, Any]:
    """Known keys of a client settings object, parsed; bad values become warnings."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        warnings.append(f"{SECTION} settings must be an object, got {type(raw).__name__}")
        return {}
    if isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]  # the whole configuration tree, as some clients send it
    out: dict[SettingKey, Any] = {}
    for name, value in _flatten(raw).items():
        key = _BY_NAME.get(name.removeprefix(f"{SECTION}."))
        # Unknown keys are other tools' or the client's own (trace, server); null = "not set".
        # A folder's object also carries the window-wide keys (VS Code resolves them): skip.
        if key is None or value is None or (resource_only and not key.resource):
            continue
        try:
            out[key] = key.value(value)
        except (ValueError, TypeError, OverflowError) as exc:
            warnings.append(f"setting {SECTION}.{key.name} {exc}; keeping the previous value")
    return out


def parse_settings(
    raw: Any,
    base: EngineSettings | None = None,
    folders: Mapping[Path, Any] | None = None,
    *,
    complete: bool = False,
) -> tuple[EngineSettings, list[str]]:
    """Client settings on top of `base`; returns (settings, warnings).

    `raw` holds window-wide values, nested (`{"search": {"topK": 5}}`) or dotted
    (`{"search.topK": 5}`), optionally under "codeCompass". `folders` maps a workspace
    folder's path to its own values; only the resource-scoped keys are read there. Keys
    absent from `raw` (or a folder) keep their values in `base`, unless `complete`: then
    `raw` and each folder's object are the client's whole configuration (a
    `workspace/configuration` answer) and absent keys mean defaults; a null `raw` still
    keeps `base`'s window-wide values (the client has none to give). A value of the wrong
    type is ignored with a warning: settings come from a file the user edits.
    """
    base = base or EngineSettings()
    if complete and raw is not None:
        base = dataclasses.replace(EngineSettings(), folders=base.folders)
    warnings: list[str] = []
    scan_changes: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for key, value in _checked(raw, warnings, resource_only=False).items():
        (scan_changes if key.resource else changes)[key.field] = value
    scan = dataclasses.replace(base.scan, **scan_changes)
    changes["scan"] = scan
    if folders is not None:
        merged = {f.root: f for f in base.folders}
        for path, folder_raw in folders.items():
            root = Path(path).expanduser().resolve()
            # A folder value equal to the window's is not an override: VS Code sends every
            # folder's resolved values, and a later window-wide change must still reach it.
            own: dict[str, Any] = {
                k.field: None if value == getattr(scan, k.field) else value
                for k, value in _checked(folder_raw, warnings, resource_only=True).items()
            }
            before = None if complete else merged.get(root)
            merged[root] = dataclasses.replace(before or FolderSettings(root), **own)
        changes["folders"] = tuple(
            sorted((f for f in merged.values() if f != FolderSettings(f.root)), key=_root_str)
        )
    return dataclasses.replace(base, **changes), warnings


def _root_str(folder: FolderSettings) -> str:
    return str(folder.root)


def client_values(settings: EngineSettings, root: Path | None = None) -> dict[str, Any]:
    """Every key as the client spells and counts it (window-wide, or as `root` sees it)."""
    scan = settings.scan if root is None else settings.scan_for(root)
    out: dict[str, Any] = {}
    for k in KEYS:
        value = getattr(scan if k.resource else settings, k.field)
        out[k.name] = list(value) if isinstance(value, tuple) else k.shown(value)
    return out


# --- change events --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SettingsChange:
    old: EngineSettings
    new: EngineSettings
    fields: frozenset[str]  # EngineSettings fields that differ ("scan", "folders", "top_k", ...)

    def scan_changed(self, root: Path) -> bool:
        """Does the project at `root` now index something else (include, exclude, ...)?"""
        return self.old.scan_for(root) != self.new.scan_for(root)

    def keys(self, roots: Iterable[Path] = ()) -> list[str]:
        """Client keys whose value changed, window-wide or for any of these folders."""
        views = [None, *roots]
        return [
            k.name
            for k in KEYS
            if any(
                client_values(self.old, r)[k.name] != client_values(self.new, r)[k.name]
                for r in views
            )
        ]


Subscriber = Callable[[SettingsChange], None]


class SettingsStore:
    """The current settings and who wants to hear of a change (esbonio-style events).

    Subscribers run in the thread that made the change, in subscription order, after the
    new settings are current; changes are serialized, so a subscriber must not change them.
    """

    def __init__(self, settings: EngineSettings | None = None) -> None:
        self._current = settings or EngineSettings()
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()

    @property
    def current(self) -> EngineSettings:
        return self._current

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` after every change; returns the unsubscribe function."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def replace(self, new: EngineSettings) -> SettingsChange | None:
        """Make `new` current and notify; None (and no event) when nothing changed."""
        with self._lock:
            old = self._current
            changed = frozenset(
                f.name
                for f in dataclasses.fields(EngineSettings)
                if getattr(old, f.name) != getattr(new, f.name)
            )
            if not changed:
                return None
            self._current = new
            change = SettingsChange(old, new, changed)
            for callback in list(self._subscribers):
                try:
                    callback(change)
                except Exception:  # one consumer failing must not keep the others stale
                    log.exception("settings subscriber %r failed", callback)
            return change

    def merge(
        self, raw: Any, folders: Mapping[Path, Any] | None = None, *, complete: bool = False
    ) -> list[str]:
        """Client settings on top of the current ones (see parse_settings); returns warnings."""
        with self._lock:
            new, warnings = parse_settings(raw, self._current, folders, complete=complete)
            self.replace(new)
        return warnings
