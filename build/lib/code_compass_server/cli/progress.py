"""Indexing progress on stderr: a bar per phase on a terminal (tqdm), plain periodic lines
otherwise (logs, CI), and the final summary with each phase's own time.

Phases: scan → parse → lexical commit → embedding. The same view shows this process's run and,
while `index` waits, the run of the process that holds the writer (its live-progress file).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from code_compass_server.index.live_progress import LiveProgress
from code_compass_server.index.summary import IndexProgress, IndexSummary

ENV_PROGRESS_INTERVAL = "CODE_COMPASS_PROGRESS_S"  # seconds between plain lines (default 10)
PLAIN_INTERVAL_S = 10.0

# Scheduler phase -> (label shown, unit counted)
_PHASES = {
    "scanning": ("scan", "files"),
    "indexing": ("parse", "files"),
    "committing": ("lexical commit", "files"),
    "embedding": ("embedding", "chunks"),
}


@dataclass(frozen=True, slots=True)
class ProgressView:
    project: str
    phase: str  # label: scan | parse | lexical commit | embedding
    done: int
    total: int
    unit: str


def view_of(p: IndexProgress) -> ProgressView | None:
    """What to show for an engine progress record; None for the end states."""
    found = _PHASES.get(p.phase)
    if found is None:
        return None
    label, unit = found
    if p.phase == "embedding":
        return ProgressView(p.project, label, p.embedded, p.embed_total, unit)
    return ProgressView(p.project, label, p.files_done, p.files_total, unit)


def view_of_live(project: str, live: LiveProgress) -> ProgressView | None:
    """The writer process's progress, read from its live file."""
    return view_of(
        IndexProgress(
            project,
            live.phase,
            live.files_done,
            live.files_total,
            live.chunks,
            live.embedded,
            live.embed_total,
        )
    )


class ProgressSink(Protocol):
    def show(self, view: ProgressView) -> None: ...

    def close(self) -> None: ...


def progress_sink(stream: TextIO | None = None) -> ProgressSink:
    """Bars when `stream` (default stderr) is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        return TerminalProgress(stream)
    return LineProgress(stream, _interval())


def _interval() -> float:
    raw = os.environ.get(ENV_PROGRESS_INTERVAL, "")
    try:
        return max(0.0, float(raw)) if raw else PLAIN_INTERVAL_S
    except ValueError:
        return PLAIN_INTERVAL_S


class TerminalProgress:
    """One tqdm bar per phase, left on screen when the phase ends (rate and ETA by tqdm)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None
        self._key: tuple[str, str] | None = None

    def show(self, view: ProgressView) -> None:
        from tqdm import tqdm  # only a terminal pays for it

        key = (view.project, view.phase)
        if key != self._key:
            self.close()
            self._key = key
            self._bar = tqdm(
                total=view.total or None,
                initial=view.done,
                desc=f"{view.project}: {view.phase}",
                unit=f" {view.unit}",
                file=self._stream,
                dynamic_ncols=True,
                smoothing=0.1,
            )
            return
        bar = self._bar
        if view.total and bar.total != view.total:
            bar.total = view.total
        if view.done > bar.n:
            bar.update(view.done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._key = None


class LineProgress:
    """A line at each phase change and every `interval` seconds within a phase:
    `code-compass: flask: embedding 1,200/1,946 chunks, 68.2 chunks/s, ETA 11 s`."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        self._stream = stream
        self._interval = interval
        self._key: tuple[str, str] | None = None
        self._start = (0.0, 0)  # (time, done) when the phase was first seen
        self._last = 0.0
        self._shown: ProgressView | None = None

    def show(self, view: ProgressView) -> None:
        if view == self._shown:  # nothing moved: no line
            return
        now = time.monotonic()
        key = (view.project, view.phase)
        if key != self._key:
            self._key, self._start = key, (now, view.done)
        elif now - self._last < self._interval:
            return
        self._last, self._shown = now, view
        line = progress_line(view, now - self._start[0], self._start[1])
        self._stream.write(f"code-compass: {line}\n")
        self._stream.flush()

    def close(self) -> None:
        self._key = None


def progress_line(view: ProgressView, elapsed: float, done_at_start: int) -> str:
    """`flask: parse 120/212 files, 95.1 files/s, ETA 1 s` (rate and ETA once measurable)."""
    if not view.total and not view.done:  # the scan: nothing counted yet
        return f"{view.project}: {view.phase}"
    count = f"{view.done:,}/{view.total:,}" if view.total else f"{view.done:,}"
    text = f"{view.project}: {view.phase} {count} {view.unit}"
    rate = (view.done - done_at_start) / elapsed if elapsed > 0 else 0.0
    if rate > 0:
        text += f", {rate:.1f} {view.unit}/s"
        if view.total:
            text += f", ETA {duration(max(0, view.total - view.done) / rate)}"
    return text


def duration(seconds: float) -> str:
    """11.2 s, 3 min 41 s, 1 h 05 min."""
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def summary_line(s: IndexSummary) -> str:
    """`flask: lexical 1.0 s (scan 0.1 s, parse 0.8 s, commit 0.1 s), embeddings 1 min 40 s;
    212 files, 1,946 chunks, ...`: each phase its own time, never one figure for all."""
    ph = s.phase_seconds
    lexical = f"lexical {duration(s.seconds)}"
    parts = [(k, ph[k]) for k in ("scan", "parse", "commit") if k in ph]
    if parts:
        lexical += " (" + ", ".join(f"{k} {duration(v)}" for k, v in parts) + ")"
    times = [lexical]
    if "embed" in ph:
        times.append(f"embeddings {duration(ph['embed'])}")
    rate = s.scanned / s.seconds if s.seconds else 0.0
    return (
        f"{s.project}: {', '.join(times)}; {s.files:,} files, {s.chunks:,} chunks, "
        f"{s.symbols:,} symbols, {s.embedded:,} embedded; {s.changed:,} changed, "
        f"{s.deleted:,} deleted, {s.unchanged:,} unchanged ({rate:.0f} files/s scanned)"
    )
