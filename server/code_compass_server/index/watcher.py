"""A watchfiles watcher per project: file-system changes become batched index jobs.

watchfiles groups events until `WATCH_STEP_MS` pass without a new one (at most
`WATCH_DEBOUNCE_MS`), so a save is seen ~50 ms later and a `git checkout` storm arrives as a few
large batches rather than thousands of small ones.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # watchfiles (with anyio, multiprocessing) loads when a watch starts,
    import watchfiles  # not in a CLI query that only imports this module's records

log = logging.getLogger(__name__)

WATCH_STEP_MS = 50  # quiet time that ends a batch (save → searchable latency)
WATCH_DEBOUNCE_MS = 1000  # longest a batch may keep growing (storms)
_VCS_PARTS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True)
class ChangeBatch:
    project: str
    paths: frozenset[str]  # workspace-relative paths that were added, modified or deleted
    rescan: bool  # ignore rules changed, or a folder appeared/vanished: re-scan the project


def _keep(change: watchfiles.Change, path: str) -> bool:
    return not (_VCS_PARTS & set(Path(path).parts))


class ProjectWatcher:
    def __init__(self, project: str, root: Path, on_batch: Callable[[ChangeBatch], None]) -> None:
        self.project = project
        self.root = root
        self.on_batch = on_batch
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"watch-{project}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                self.root,
                watch_filter=_keep,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_STEP_MS,
                stop_event=self._stop,
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self._ready.set()
                if changes:
                    self._dispatch(changes)
        except Exception:  # a vanished root or an inotify limit must not kill the server
            log.exception("watcher for %s stopped", self.root)

    def _dispatch(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        from watchfiles import Change

        rels: set[str] = set()
        rescan = False
        for change, raw in changes:
            path = Path(raw)
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if path.name == ".gitignore" or rel == ".git/info/exclude" or path.is_dir():
                rescan = True
            elif change == Change.deleted and not path.suffix:
                rescan = True  # maybe a folder went away: let the scan find what vanished
            rels.add(rel)
        self.on_batch(ChangeBatch(self.project, frozenset(rels), rescan))
