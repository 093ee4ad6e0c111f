"""Records an indexing run reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class IndexProgress:
    project: str
    phase: str  # scanning | indexing | committing | embedding | ready | error
    files_done: int = 0
    files_total: int = 0
    chunks: int = 0
    embedded: int = 0
    embed_total: int = 0
    message: str = ""


# Skipped paths listed by name in a summary; past this many only the counts say the rest.
MAX_SKIPPED_LISTED = 1000


@dataclass(frozen=True, slots=True)
class SkippedPath:
    """A file (or a folder, ending with "/") the index left out, and why (a skip reason).
    Never its content: a secret file is named, not read."""

    path: str
    reason: str


@dataclass(slots=True)
class IndexSummary:
    project: str
    root: str
    files: int = 0  # files in the index after the run
    scanned: int = 0  # files the scan accepted
    changed: int = 0  # files (re)parsed in this run
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    symbols: int = 0
    embedded: int = 0
    bytes_indexed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    # The first MAX_SKIPPED_LISTED of them by path (`skipped` counts them all).
    skipped_paths: list[SkippedPath] = field(default_factory=list)
    seconds: float = 0.0  # the lexical run: scan, parse and commit (not the embeddings)
    # Each phase's own wall time: scan, parse, commit (the lexical run), embed (waited for).
    phase_seconds: dict[str, float] = field(default_factory=dict)
    rebuilt: str = ""  # non-empty: why the index was rebuilt from scratch
    read_only: bool = False  # another process holds the writer: nothing was written

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        d["phase_seconds"] = {k: round(v, 3) for k, v in self.phase_seconds.items()}
        return d
