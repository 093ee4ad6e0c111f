"""The one index scheduler: every index write of the engine goes through here.

Jobs (job_records.py) are queued by priority — editor buffers, then watcher batches, then full
runs — and run one at a time on the scheduler's thread, or in the caller's thread for a
synchronous call while that thread is not running (the CLI). Either way a job holds the one
execution lock, and a running job lets more urgent jobs in at its checkpoints (between files,
between catalog slices), so an edit is searchable well within a second even during a full run.

Requests (search, hover, ask) never write and never wait for this: they read the last commit.
Progress of every job goes to the subscribed listeners; every job can be cancelled.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.index.heap import trim_heap
from code_compass_server.index.indexer import ProjectIndexer
from code_compass_server.index.job_records import (
    BufferUpdate,
    FullRun,
    IndexEvent,
    IndexJob,
    IndexListener,
    JobKind,
    PathUpdate,
    Stage,
    WatcherBatch,
)
from code_compass_server.index.project import Project
from code_compass_server.index.scan import ScanSettings
from code_compass_server.index.summary import IndexProgress

if TYPE_CHECKING:  # watchfiles loads only in a process that watches, not in a CLI query
    from code_compass_server.index.watcher import ChangeBatch

log = logging.getLogger(__name__)

# While a finished full run's chunks are being embedded, its listeners hear about it this often.
EMBED_FOLLOW_POLL_S = 0.5
_LIVENESS_POLL_S = 1.0  # a synchronous caller checks the scheduler's thread this often
_NOTHING_PENDING = len(JobKind)  # above every kind: no checkpoint is due
J = TypeVar("J", bound=IndexJob)


class EmbeddingHooks(Protocol):
    """What the scheduler needs from the embeddings (which never block a write)."""

    def wake(self, project: str) -> None:
        """New or changed chunks: let the project's embedding worker catch up."""
        ...

    def embedding_progress(self, project: str) -> IndexProgress | None:
        """Progress of the project's embedding; None once nothing is left (or it has none)."""
        ...


@dataclass(frozen=True, slots=True)
class ProjectIndexState:
    phase: IndexProgress  # the last reported phase of its full runs
    indexing: bool  # a full run of it is running now
    queued: bool  # a full run of it is waiting
    last_error: str  # why its last job failed ("" when it did not)


def expand_deleted_dirs(project: Project, rels: Iterable[str]) -> list[str]:
    """A deleted folder arrives as one path: expand it to the indexed files below it."""
    out: list[str] = []
    for rel in rels:
        if not (project.root / rel).exists() and project.catalog.file(rel) is None:
            out.extend(project.catalog.paths_under(rel))
        out.append(rel)
    return out


class IndexScheduler:
    def __init__(
        self,
        buffers: EditorBuffers,
        scan_for: Callable[[Path], ScanSettings],
        embeddings: EmbeddingHooks | None = None,
    ) -> None:
        self._buffers = buffers
        self._scan_for = scan_for  # a project root -> its scan rules (per-folder settings)
        self._embeddings = embeddings
        self._cond = threading.Condition()
        self._exec = threading.RLock()  # held by whoever runs jobs; re-entered at checkpoints
        self._pending: list[IndexJob] = []
        self._running: list[IndexJob] = []  # a stack: jobs run at a checkpoint sit on top
        self._following: dict[str, FullRun] = {}  # project -> run whose embedding is followed
        self._indexers: dict[str, ProjectIndexer] = {}
        self._phase: dict[str, IndexProgress] = {}
        self._errors: dict[str, str] = {}
        self._listeners: list[IndexListener] = []
        self._thread: threading.Thread | None = None
        self._stopping = False
        # The most urgent pending kind, read without the lock by checkpoints (an int: atomic).
        self._urgent: int = _NOTHING_PENDING

    # --- projects ---
    def attach(
        self, project: Project, on_paths_replaced: Callable[[list[str]], None] | None = None
    ) -> None:
        with self._cond:
            indexer = ProjectIndexer(project, self._scan_for(project.root), on_paths_replaced)
            self._indexers[project.name] = indexer
            self._phase[project.name] = IndexProgress(project.name, "idle")
        # A read that finds damage asks for a full run: its writer repairs the stores first.
        name = project.name

        def repair(_why: str) -> None:
            self.submit_full(name)

        project.on_damage = repair

    def detach(self, project: str, timeout: float = 30.0) -> None:
        """Cancel the project's jobs, wait out the running one, forget it."""
        self.cancel(project)
        with self._cond:
            self._cond.wait_for(lambda: all(j.project != project for j in self._running), timeout)
            self._indexers.pop(project, None)
            self._phase.pop(project, None)
            self._errors.pop(project, None)

    def scan_settings_changed(self, projects: list[str]) -> None:
        """These projects' scan rules changed: a running full run of one of them scanned with
        the old ones, so it is cancelled (what it committed stays); each gets a full run."""
        with self._cond:
            again = [
                j
                for j in self._running
                if isinstance(j, FullRun) and not j.exclusive and j.project in projects
            ]
            for job in again:
                job.cancel.set()
        for name in projects:
            self.submit_full(name)

    def set_paths_replaced(
        self, project: str, on_paths_replaced: Callable[[list[str]], None] | None
    ) -> None:
        """Who hears of re-indexed paths (the embedding worker), as embeddings go on or off."""
        with self._cond:
            indexer = self._indexers.get(project)
            if indexer is not None:
                indexer.on_paths_replaced = on_paths_replaced

    # --- asking for work ---
    def submit_full(self, project: str, *, rescan: bool = False) -> FullRun:
        """Queue a full (incremental) run; merged into one already waiting for the project."""
        return self._enqueue(FullRun(project=project, rescan=rescan))

    def submit_paths(self, project: str, paths: set[str], *, buffer: bool = False) -> PathUpdate:
        """Queue a path update (an editor buffer, or files changed on disk)."""
        job: PathUpdate = (
            BufferUpdate(project=project, paths=set(paths))
            if buffer
            else WatcherBatch(project=project, paths=set(paths))
        )
        return self._enqueue(job)

    def submit_changes(self, batch: ChangeBatch) -> IndexJob:
        """A watcher batch: its paths, or a rescan when ignore rules or folders changed."""
        if batch.rescan:
            return self.submit_full(batch.project, rescan=True)
        return self.submit_paths(batch.project, set(batch.paths))

    def run(self, job: J) -> J:
        """Run `job` now and wait for it: on the scheduler's thread if it is running (in
        priority order), else in this thread. Either way under the same lock and checkpoints."""
        job.exclusive = True
        with self._cond:
            thread = self._thread
            queued = (
                thread is not None
                and thread.is_alive()
                and thread is not threading.current_thread()
            )
            if queued:
                self._enqueue_locked(job)
        if queued:
            while not job.done.wait(_LIVENESS_POLL_S):  # never wait on a thread that died
                with self._cond:
                    if self._stopping:
                        break
                    self._ensure_thread()
            return job
        with self._exec:
            with self._cond:
                if self._stopping:
                    job.finish("cancelled")
                    return job
                self._running.append(job)
            self._execute(job)
        return job

    # --- control ---
    def cancel(self, project: str | None = None) -> None:
        """Cancel the jobs of one project (or all): waiting ones are dropped, running ones stop
        at their next checkpoint keeping what they committed."""
        with self._cond:
            hit = [
                j
                for j in [*self._pending, *self._running, *self._following.values()]
                if project is None or j.project == project
            ]
            waiting = [j for j in hit if j in self._pending]
            self._pending = [j for j in self._pending if j not in waiting]
            self._refresh_urgent()
            for job in hit:
                job.cancel.set()
            self._cond.notify_all()
        for job in waiting:
            job.finish("cancelled")

    def cancel_job(self, job: IndexJob) -> None:
        """Cancel one job (the user cancelled its progress): running, waiting or followed."""
        job.cancel.set()
        with self._cond:
            if job in self._pending:
                self._pending.remove(job)
                self._refresh_urgent()
                job.finish("cancelled")
            self._cond.notify_all()

    def subscribe(self, listener: IndexListener) -> Callable[[], None]:
        """Hear every job's begin, progress and end; returns the unsubscribe function."""
        with self._cond:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._cond:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once every submitted write has been applied (tests, benchmarks)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._running, timeout)

    @property
    def busy(self) -> bool:
        with self._cond:
            return bool(self._pending or self._running)

    def state(self, project: str) -> ProjectIndexState:
        with self._cond:
            return ProjectIndexState(
                phase=self._phase.get(project) or IndexProgress(project, "idle"),
                indexing=any(
                    isinstance(j, FullRun) and j.project == project for j in self._running
                ),
                queued=any(isinstance(j, FullRun) and j.project == project for j in self._pending),
                last_error=self._errors.get(project, ""),
            )

    def stop(self, timeout: float = 10.0) -> bool:
        """Cancel everything and join the thread; True if it ended in time."""
        with self._cond:
            self._stopping = True
        self.cancel()
        with self._cond:
            self._following.clear()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # --- the queue ---
    def _enqueue(self, job: J) -> J:
        with self._cond:
            return self._enqueue_locked(job)

    def _enqueue_locked(self, job: J) -> J:
        if self._stopping:
            job.finish("cancelled")
            return job
        merged = None if job.exclusive else self._merge(job)
        if merged is not None:
            return merged
        if isinstance(job, FullRun):
            self._absorb_batches(job.project)
        self._pending.append(job)
        self._refresh_urgent()
        self._ensure_thread()
        self._cond.notify_all()
        return job

    def _merge(self, job: J) -> J | None:
        """A waiting job of the same kind and project takes this one's work."""
        for other in self._pending:
            if not other.exclusive and other.project == job.project and type(other) is type(job):
                other.absorb(job)
                return cast(J, other)  # same type as `job`, checked above
        if isinstance(job, WatcherBatch) and any(
            isinstance(o, FullRun) and o.project == job.project for o in self._pending
        ):
            job.finish("skipped")  # a full run that has not started yet will scan these paths
            return job
        return None

    def _absorb_batches(self, project: str) -> None:
        for other in list(self._pending):
            if isinstance(other, WatcherBatch) and other.project == project and not other.exclusive:
                self._pending.remove(other)
                other.finish("skipped")

    def _pop(self, below: JobKind | None = None) -> IndexJob | None:
        """Take the most urgent waiting job (more urgent than `below`) and mark it running."""
        ready = [j for j in self._pending if below is None or j.kind < below]
        if not ready:
            return None
        job = min(ready, key=lambda j: (j.kind, j.id))
        self._pending.remove(job)
        self._running.append(job)
        self._refresh_urgent()
        return job

    def _refresh_urgent(self) -> None:
        self._urgent = min((int(j.kind) for j in self._pending), default=_NOTHING_PENDING)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="index-scheduler", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._stopping or bool(self._pending),
                    EMBED_FOLLOW_POLL_S if self._following else None,
                )
                if self._stopping:
                    return
                has_work = bool(self._pending)
            if has_work:
                with self._exec:
                    with self._cond:
                        job = self._pop()
                    if job is not None:
                        self._execute(job)
            self._poll_followed()

    # --- running a job (the caller holds _exec and has put the job on _running) ---
    def _execute(self, job: IndexJob, restage: frozenset[str] = frozenset()) -> None:
        self._emit(job, "begin")
        outcome, error = "done", ""
        try:
            indexer = self._indexers.get(job.project)
            if job.cancel.is_set():
                outcome = "cancelled"
            elif indexer is None:
                outcome = "skipped"  # the project was removed while the job waited
            elif isinstance(job, FullRun):
                self._run_full(job, indexer)
            elif isinstance(job, PathUpdate):
                self._run_paths(job, indexer, restage)
            if outcome == "done" and job.cancel.is_set():
                outcome = "cancelled"
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # one bad job must not stop the later ones (a tantivy
            # panic on a damaged segment is a BaseException: it would end this thread)
            log.exception("index job %s of %s failed", type(job).__name__, job.project)
            outcome, error = "failed", f"{type(exc).__name__}: {exc}"
            job.exception = exc if isinstance(exc, Exception) else RuntimeError(error)
        finally:
            self._finished(job, error)
            job.finish(outcome, error)
        if not (outcome == "done" and isinstance(job, FullRun) and self._follow(job)):
            self._emit(job, "end")

    def _finished(self, job: IndexJob, error: str) -> None:
        with self._cond:
            self._running.remove(job)
            if error:
                self._errors[job.project] = error
                if isinstance(job, FullRun) and job.project in self._phase:
                    self._phase[job.project] = IndexProgress(job.project, "error", message=error)
            elif not job.cancel.is_set():
                self._errors.pop(job.project, None)
            self._cond.notify_all()

    def _run_full(self, job: FullRun, indexer: ProjectIndexer) -> None:
        self._end_follow(job.project)
        indexer.settings = self._scan_for(indexer.project.root)
        summary = indexer.run(
            progress=lambda p: self._emit(job, "progress", p),
            cancel=job.cancel,
            overlay=self._buffers.overlay(indexer.project.root),
            checkpoint=_Checkpoint(self, job),
        )
        job.summary = summary
        if job.wake_embeddings and self._embeddings is not None:
            self._embeddings.wake(job.project)  # after the lexical index: search never waits
        done = summary.scanned
        ready = IndexProgress(job.project, "ready", done, done, summary.chunks, summary.embedded)
        self._emit(job, "progress", ready)
        trim_heap()  # what the pass freed goes back to the system (index/heap.py)

    def _run_paths(self, job: PathUpdate, indexer: ProjectIndexer, restage: frozenset[str]) -> None:
        indexer.settings = self._scan_for(indexer.project.root)
        rels = expand_deleted_dirs(indexer.project, sorted(job.paths))
        result = indexer.update_paths(
            rels,
            self._buffers.overlay(indexer.project.root),
            cancel=job.cancel,
            checkpoint=_Checkpoint(self, job),
            restage=restage,
        )
        job.stats, job.written = result.stats, result.written
        if self._embeddings is not None:
            self._embeddings.wake(job.project)

    # --- events ---
    def _emit(self, job: IndexJob, stage: Stage, progress: IndexProgress | None = None) -> None:
        if progress is not None:
            if isinstance(job, FullRun):
                with self._cond:
                    if job.project in self._phase:
                        self._phase[job.project] = progress
            for fn in job.listeners:
                fn(progress)
        event = IndexEvent(job, stage, progress)
        with self._cond:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a front door's failure must not stop indexing
                log.exception("index listener failed")

    # --- following a finished full run while its chunks are embedded ---
    def _follow(self, job: FullRun) -> bool:
        """Keep the run's listeners informed until its chunks are embedded (the writer is free
        meanwhile). False: nothing to follow, the run ends now."""
        if self._embeddings is None or not job.wake_embeddings or job.exclusive:
            return False
        with self._cond:
            if not self._listeners:
                return False
        if self._embeddings.embedding_progress(job.project) is None:
            return False
        self._end_follow(job.project)
        with self._cond:
            self._following[job.project] = job
            self._ensure_thread()
            self._cond.notify_all()
        return True

    def _end_follow(self, project: str) -> None:
        with self._cond:
            job = self._following.pop(project, None)
        if job is not None:
            self._emit(job, "end")

    def _poll_followed(self) -> None:
        if self._embeddings is None:
            return
        with self._cond:
            followed = list(self._following.items())
        for project, job in followed:
            progress = None if job.cancel.is_set() else self._embeddings.embedding_progress(project)
            if progress is not None:
                self._emit(job, "progress", progress)
                continue
            with self._cond:
                if self._following.get(project) is not job:
                    continue
                del self._following[project]
                last = self._phase.get(project)
                if last is not None and last.phase == "embedding":
                    self._phase[project] = IndexProgress(
                        project, "ready", chunks=last.chunks, embedded=last.embedded
                    )
            self._emit(job, "end")


class _Checkpoint:
    """A running job's checkpoint: runs the waiting jobs more urgent than it, in order."""

    def __init__(self, scheduler: IndexScheduler, job: IndexJob) -> None:
        self._scheduler = scheduler
        self._kind = job.kind

    def due(self) -> bool:
        return self._scheduler._urgent < self._kind

    def run(self, project: str, staged: set[str]) -> set[str]:
        s = self._scheduler
        written: set[str] = set()
        while True:
            with s._cond:
                job = s._pop(below=self._kind)
            if job is None:
                return written
            mine = job.project == project
            s._execute(job, frozenset(staged - written) if mine else frozenset())
            if mine and isinstance(job, PathUpdate):
                written |= job.written
