"""`code-compass index`: build or update the index, with progress, and never pretend.

One process writes an index at a time. When another one holds the writer, `index` says so on
stderr and waits for it, showing that process's progress (its live-progress file), then runs
its own incremental pass; with `--no-wait` it exits EXIT_BUSY at once. It never exits 0 over an
index it did not finish.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.cli import EXIT_BUSY
from code_compass_server.cli.commands import open_engine, print_json
from code_compass_server.cli.progress import (
    ProgressSink,
    progress_sink,
    summary_line,
    view_of,
    view_of_live,
)
from code_compass_server.engine import Engine
from code_compass_server.index.live_progress import LiveProgress, read_live
from code_compass_server.index.summary import IndexProgress, IndexSummary

WAIT_POLL_S = 0.5  # how often a waiting `index` reads the writer's progress
PROBE_S = 1.0  # how often it tries the writer itself when the holder publishes nothing
# A holder idle this long keeps the index (a language server); shorter may be a process about
# to exit, whose writer this one then takes.
KEEPER_GRACE_S = 3.0


@dataclass(frozen=True, slots=True)
class _Busy:
    """A project whose writer another process holds."""

    name: str
    root: Path
    directory: Path


def cmd_index(args: argparse.Namespace) -> int:
    sink = progress_sink()
    announced = False
    try:
        while True:
            engine, names = open_engine(args)
            # Opening reads only; `index` means to write, so it takes each writer now (one
            # that another process holds stays taken and this one waits for it).
            busy = [
                _Busy(n, engine.project(n).root, engine.project(n).directory)
                for n in names
                if not engine.project(n).try_upgrade()
            ]
            if not busy:
                summaries = _run(engine, args, sink)
                if summaries is not None:
                    break
                continue  # another process took the writer between our check and our run
            engine.close()
            if args.no_wait:
                sys.stderr.write(_busy_message(busy[0], "not waiting (--no-wait)") + "\n")
                return EXIT_BUSY
            if not announced:
                note = "waiting for it (Ctrl-C to stop; --no-wait exits at once)"
                sys.stderr.write(_busy_message(busy[0], note) + "\n")
                sys.stderr.flush()
                announced = True
            kept = _wait_for_writer(busy, sink)
            if kept is not None:
                return _kept_by_holder(busy[0], kept, args)
    finally:
        sink.close()
    _print_summaries(summaries, args)
    return 0


def _run(engine: Engine, args: argparse.Namespace, sink: ProgressSink) -> list[IndexSummary] | None:
    """Index with this process as the writer; None if the writer was lost meanwhile."""
    if os.environ.get("CODE_COMPASS_ANNOUNCE_START"):  # crash tests time their kills from here
        print("indexing", flush=True)

    def show(p: IndexProgress) -> None:
        view = view_of(p)
        if view is not None:
            sink.show(view)

    try:
        summaries = engine.index(embed=not args.no_embed, background_embed=False, progress=show)
    finally:
        engine.close()
    if any(s.read_only for s in summaries):
        return None
    return summaries


def _wait_for_writer(busy: list[_Busy], sink: ProgressSink) -> LiveProgress | None:
    """Show the holders' progress until one of them lets the writer go (None), or every
    holder is alive but idle, having finished its work (its last live record)."""
    last_probe = time.monotonic()
    idle_since: float | None = None
    while True:
        lives = [(b, read_live(b.directory)) for b in busy]
        working = [(b, live) for b, live in lives if live is not None and live.working]
        for b, live in working:
            view = view_of_live(b.name, live)
            if view is not None:
                sink.show(view)
        now = time.monotonic()
        idle = [live for _b, live in lives if live is not None and not live.working]
        if idle and len(idle) == len(busy):
            idle_since = idle_since if idle_since is not None else now
            if now - idle_since >= KEEPER_GRACE_S:
                return idle[0]
        else:
            idle_since = None
            if not working and now - last_probe >= PROBE_S:
                return None  # nobody says it works: try to take the writer
        time.sleep(WAIT_POLL_S)


def _busy_message(b: _Busy, then: str) -> str:
    live = read_live(b.directory)
    who = f"another process (pid {live.pid})" if live else "another process"
    doing = ""
    if live is not None and live.working:
        doing = f", {live.phase}"
        if live.phase == "embedding":
            doing += f" {live.embedded:,}/{live.embed_total:,} chunks"
        elif live.files_total:
            doing += f" {live.files_done:,}/{live.files_total:,} files"
    return f"code-compass: {who} is writing the index of {b.root}{doing}; {then}"


def _kept_by_holder(b: _Busy, live: LiveProgress, args: argparse.Namespace) -> int:
    """The holder (a running language server, say) finished its work and keeps the index
    current: done if what it holds is what was asked, else say what is missing."""
    embedded = f"{live.embedded:,}/{live.embed_total:,} chunks embedded"
    complete = args.no_embed or (live.embed_total > 0 and live.embedded >= live.embed_total)
    if args.json:  # a script reads who keeps the index, as the person reads the line below
        kept = {"pid": live.pid, "root": str(b.root), "chunks": live.chunks}
        kept |= {"embedded": live.embedded, "embedTotal": live.embed_total, "complete": complete}
        print_json({"projects": [], "keptBy": kept})
    if complete:
        sys.stderr.write(
            f"code-compass: the index of {b.root} is kept current by process {live.pid}, "
            f"now idle: {live.chunks:,} chunks, {embedded}\n"
        )
        return 0
    sys.stderr.write(
        f"code-compass: process {live.pid} keeps the index of {b.root} and is idle, but only "
        f"{embedded}; it does not embed the rest, and this process cannot while it holds "
        "the writer\n"
    )
    return EXIT_BUSY


def _print_summaries(summaries: list[IndexSummary], args: argparse.Namespace) -> None:
    if args.json:
        print_json({"projects": [s.to_json() for s in summaries]})
        return
    for s in summaries:
        print(summary_line(s))
        if s.skipped:
            print("  skipped: " + ", ".join(f"{k} {v}" for k, v in s.skipped.items()))
            if args.verbose:
                _print_skipped(s)
        if s.rebuilt:
            print(f"  rebuilt from scratch: {s.rebuilt}")


def _print_skipped(s: IndexSummary) -> None:
    """`-v`: each skipped path and why (a secret file is named, never read)."""
    width = max((len(p.path) for p in s.skipped_paths), default=0)
    for p in s.skipped_paths:
        print(f"    {p.path.ljust(width)}  {p.reason}")
    more = sum(s.skipped.values()) - len(s.skipped_paths)
    if more > 0:
        print(f"    ... and {more:,} more (only the first {len(s.skipped_paths):,} are listed)")
