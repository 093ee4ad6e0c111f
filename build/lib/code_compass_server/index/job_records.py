"""The index write jobs the scheduler runs, one record type per kind, and the events it reports.

Priority is the kind's order: an editor buffer before a watcher batch before a full run. A job
that has run keeps its outcome here (`done`, `cancelled`, `failed`, `skipped`), so a caller that
submitted it can wait for it and read what happened.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import ClassVar, Literal

from code_compass_server.index.summary import IndexProgress, IndexSummary

ProgressFn = Callable[[IndexProgress], None]
Stage = Literal["begin", "progress", "end"]
_ids = itertools.count(1)


class JobKind(IntEnum):
    """Lower runs first, and a running job gives way to any lower kind at its checkpoints."""

    BUFFER = 0
    WATCHER = 1
    FULL = 2


@dataclass(eq=False, kw_only=True)
class IndexJob:
    project: str
    kind: ClassVar[JobKind]
    id: int = field(default_factory=lambda: next(_ids))
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""  # done | cancelled | failed | skipped (set when `done` is)
    error: str = ""
    exception: Exception | None = None  # what made it fail, for a synchronous caller to raise
    # Extra progress callbacks of this job alone (a synchronous caller's own reporting).
    listeners: list[ProgressFn] = field(default_factory=list)
    # A caller waits for exactly this job: later submissions are not merged into it.
    exclusive: bool = False

    def absorb(self, other: IndexJob) -> None:
        """Take over the work of a later job of the same kind (it was submitted while this
        one waited)."""
        self.listeners.extend(other.listeners)

    def finish(self, outcome: str, error: str = "") -> None:
        self.outcome, self.error = outcome, error
        self.done.set()

    def describe(self) -> str:
        """What the job did, for the end of its progress report."""
        return self.outcome or "queued"


@dataclass(eq=False, kw_only=True)
class PathUpdate(IndexJob):
    """Re-index a set of workspace-relative paths (created, modified or deleted)."""

    paths: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)  # paths it wrote (deleted folders expanded)
    stats: dict[str, int] = field(default_factory=dict)

    def absorb(self, other: IndexJob) -> None:
        super().absorb(other)
        if isinstance(other, PathUpdate):
            self.paths |= other.paths

    def describe(self) -> str:
        if self.outcome != "done":
            return super().describe()
        return f"{len(self.paths)} paths updated"


@dataclass(eq=False, kw_only=True)
class BufferUpdate(PathUpdate):
    """An editor buffer changed, opened or closed: its text is the truth for that path."""

    kind: ClassVar[JobKind] = JobKind.BUFFER


@dataclass(eq=False, kw_only=True)
class WatcherBatch(PathUpdate):
    """Files changed on disk (a watcher batch, or a caller's `update_paths`)."""

    kind: ClassVar[JobKind] = JobKind.WATCHER


@dataclass(eq=False, kw_only=True)
class FullRun(IndexJob):
    """Scan the whole project and re-index what changed (`rescan`: the watcher asked for it)."""

    kind: ClassVar[JobKind] = JobKind.FULL
    rescan: bool = False
    wake_embeddings: bool = True  # off: a one-shot CLI run that exits right after
    summary: IndexSummary | None = None

    def absorb(self, other: IndexJob) -> None:
        super().absorb(other)
        if isinstance(other, FullRun):
            self.rescan = self.rescan or other.rescan

    def describe(self) -> str:
        s = self.summary
        if self.outcome != "done" or s is None:
            return super().describe()
        return f"{s.files} files, {s.chunks} chunks"


@dataclass(frozen=True, slots=True)
class IndexEvent:
    """One thing a listener hears: a job began, progressed or ended.

    A full run of a project with embeddings ends when its chunks are embedded (its `progress`
    then says `embedding`), although the writer was free again as soon as the lexical index
    was committed."""

    job: IndexJob
    stage: Stage
    progress: IndexProgress | None = None


IndexListener = Callable[[IndexEvent], None]
