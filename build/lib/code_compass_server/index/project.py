"""One project = one workspace root with its own isolated stores (catalog, lexical, vectors).

A project opens read-only: opening never takes the writer lock (index/writer_lock.py), so a
process that only reads (`status`, a second window) never makes the writer start read-only.
The first write (`try_upgrade`, at the start of every index job) takes the lock; only then are
the stores verified thoroughly and repaired (index/verify.py). A folder found broken at open is
repaired at once if the lock is free (repairing is writing), else left to its writer. Whatever
was rebuilt, and why, is reported as `rebuilt`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from code_compass_server.constants import INDEX_FORMAT_VERSION
from code_compass_server.errors import WorkspaceError
from code_compass_server.index.catalog import Catalog
from code_compass_server.index.freshness import (
    TreeStamp,
    drop_manifest,
    stale_reason,
    stamp_tree,
    write_manifest,
)
from code_compass_server.index.lexical import IndexBusyError, LexicalIndex
from code_compass_server.index.verify import (
    CATALOG_FILE,
    LEXICAL_DIR,
    catalog_problem,
    clear_folder,
    lexical_problem,
    orphan_paths,
    rebuild_lexical,
    record_clean_close,
    take_clean_close,
)
from code_compass_server.index.writer_lock import WRITER_LOCK_FILE, WriterLock

log = logging.getLogger(__name__)

# A reader that cannot open the stores (the writer is creating or repairing them) retries.
OPEN_RETRIES = 20
OPEN_RETRY_S = 0.25


def _wait_for_writer(root: Path, directory: Path, exc: BaseException, attempt: int) -> None:
    """A reader that cannot open the stores waits for their writer to create or repair them."""
    if attempt == OPEN_RETRIES - 1:
        raise WorkspaceError(
            f"the index of {root} at {directory} does not open ({exc}) and another process "
            "holds its writer lock; try again once it has repaired it"
        ) from exc
    time.sleep(OPEN_RETRY_S)


def readable_lexical(directory: Path) -> Path:
    """The Tantivy folder to open for reading. A reader takes Tantivy's meta lock, a file it
    creates beside the segments; in a folder it cannot write (a read-only mount of a shared
    index) it reads through a private folder of links to the segments instead."""
    folder = directory / LEXICAL_DIR
    if not folder.is_dir() or os.access(folder, os.W_OK):
        return folder
    import tempfile  # only here: a read-only mount is rare

    mirror = Path(tempfile.mkdtemp(prefix="code-compass-ro-"))
    for entry in folder.iterdir():
        if not entry.name.endswith(".lock"):
            (mirror / entry.name).symlink_to(entry)
    return mirror


@dataclass(slots=True)
class Project:
    name: str
    root: Path
    directory: Path
    catalog: Catalog
    lexical: LexicalIndex
    read_only: bool = True  # this process does not hold the writer lock (yet)
    rebuilt: str = ""
    extra: dict[str, object] = field(default_factory=dict)
    lock: WriterLock | None = None
    # Damage a read found in Tantivy (a failed search), left for the writer to repair.
    problem: str = ""
    # Called once this process has become the writer (the embeddings reconcile then).
    on_writer: list[Callable[[], None]] = field(default_factory=list)
    # Called when a read finds damage that the writer must repair (the scheduler queues a run).
    on_damage: Callable[[str], None] | None = None
    _upgrade_lock: threading.Lock = field(default_factory=threading.Lock)
    # The tree as the running full run found it at its start; published when it completes.
    _run_stamp: TreeStamp | None = None

    @classmethod
    def open(cls, name: str, root: Path, directory: Path) -> Project:
        directory.mkdir(parents=True, exist_ok=True)
        lock = WriterLock(directory / WRITER_LOCK_FILE)
        rebuilt = ""
        problem = catalog_problem(directory, thorough=False)
        if problem and lock.acquire():  # else its writer repairs it (a reader never deletes)
            log.warning("rebuilding index for %s: %s", root, problem)
            clear_folder(directory)
            rebuilt = problem
        for attempt in range(OPEN_RETRIES):
            try:
                catalog = Catalog(directory / CATALOG_FILE)
            except Exception as exc:  # a damaged file the checks did not catch
                if lock.acquire():
                    log.warning("catalog of %s did not open (%s); rebuilding", root, exc)
                    clear_folder(directory)
                    rebuilt = rebuilt or f"catalog did not open ({type(exc).__name__}: {exc})"
                    continue
                _wait_for_writer(root, directory, exc, attempt)
                continue
            try:
                lexical = LexicalIndex(readable_lexical(directory), read_only=True)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # tantivy panics are BaseExceptions
                if lock.acquire():
                    reason = f"lexical index did not open ({type(exc).__name__}: {exc})"[:300]
                    log.warning("%s: %s; rebuilding it from the catalog", root, reason)
                    lexical = rebuild_lexical(directory, catalog)
                    rebuilt = f"{rebuilt}; {reason}" if rebuilt else reason
                    break
                catalog.close()
                _wait_for_writer(root, directory, exc, attempt)
                continue
            break
        project = cls(name, root, directory, catalog, lexical, rebuilt=rebuilt, lock=lock)
        lexical.on_failure = project.damaged
        if lock.held:  # took the lock to repair: finish becoming the writer
            project.try_upgrade()
        return project

    # --- becoming the writer ---
    def try_upgrade(self) -> bool:
        """Become the writer if nobody else is: take the lock, verify and repair the stores.
        False (and still read-only) while another process writes."""
        with self._upgrade_lock:
            if not self.read_only:
                if self.lexical.failure or self.problem:
                    self._repair_lexical(self.lexical.failure or self.problem)
                return True
            assert self.lock is not None
            if not self.lock.acquire():
                return False
            try:
                self._take_over()
            except IndexBusyError:  # an older server holds Tantivy's own lock
                self.lock.release()
                return False
            return True

    def _take_over(self) -> None:
        # After a clean close with the store files untouched, the thorough checks would only
        # re-read what the last writer left verified (index/verify.py).
        thorough = not take_clean_close(self.directory)
        drop_manifest(self.directory)  # this writer changes the index: it vouches anew
        problem = catalog_problem(self.directory, thorough=thorough)
        if problem:
            self._rebuild_all(problem)
        if self.catalog.get_meta("format_version") is None:
            self.catalog.set_meta("format_version", str(INDEX_FORMAT_VERSION))
            self.catalog.set_meta("root", str(self.root))
        self.lexical.try_upgrade()
        self.read_only = False
        self.catalog.invalidate_counts()
        damage = self.problem or self.lexical.failure
        if not damage and thorough:
            damage = lexical_problem(self.lexical)
        if damage:
            self._repair_lexical(damage)
        else:
            self._drop_orphans()
        for fn in self.on_writer:
            fn()

    def _rebuild_all(self, reason: str) -> None:
        log.warning("rebuilding index for %s: %s", self.root, reason)
        self.lexical.close()
        self.catalog.close()
        clear_folder(self.directory)
        self.catalog = Catalog(self.directory / CATALOG_FILE)
        self.lexical = LexicalIndex(self.directory / LEXICAL_DIR, read_only=True)
        self.lexical.on_failure = self.damaged
        self._note(reason)
        self.problem = ""

    def _repair_lexical(self, reason: str) -> None:
        """Tantivy is damaged (the catalog is not): refill it from the catalog (writer only)."""
        self.lexical.close()
        self.lexical = rebuild_lexical(self.directory, self.catalog)
        self.lexical.on_failure = self.damaged
        self._note(f"{reason}; rebuilt from the catalog")
        self.problem = ""

    def _drop_orphans(self) -> None:
        orphans = orphan_paths(self.lexical, self.catalog)
        if orphans:
            log.info(
                "%s: %d paths in Tantivy unknown to the catalog removed", self.name, len(orphans)
            )
            self.lexical.replace_paths(orphans, [])
            self.lexical.commit()

    def _note(self, reason: str) -> None:
        self.rebuilt = f"{self.rebuilt}; {reason}" if self.rebuilt else reason

    # --- damage found while reading ---
    def damaged(self, reason: str) -> None:
        """A read failed on damaged data: remember it for the writer and ask for a run."""
        if not self.problem:
            self.problem = reason
        if self.on_damage is not None:
            self.on_damage(reason)

    # --- freshness (index/freshness.py) ---
    def begin_full_run(self, settings_key: str) -> None:
        """A full run starts (writer only): stamp the tree before it is scanned."""
        drop_manifest(self.directory)
        self._run_stamp = stamp_tree(self.root, settings_key)

    def stale_reason(self, settings_key: str) -> str:
        """'' when the committed index matches the files by stat (any process may ask)."""
        return stale_reason(self.directory, self.root, self.catalog, settings_key)

    def verify_after_run(self) -> None:
        """After a full run Tantivy and the catalog hold the same chunks; if not, Tantivy is
        refilled from the catalog (the source of truth). Then the run vouches for the index."""
        if self.read_only:
            return
        self.lexical.reload()
        docs, chunks = self.lexical.num_docs(), self.catalog.counts()["chunks"]
        if docs != chunks:
            self._repair_lexical(f"lexical index held {docs} documents for {chunks} chunks")
        stamp, self._run_stamp = self._run_stamp, None
        if stamp is not None:
            write_manifest(self.directory, stamp)

    def close(self) -> None:
        self.lexical.close()
        self.catalog.close()
        if self.lexical.directory != self.directory / LEXICAL_DIR:  # a read-only mount's links
            import shutil

            shutil.rmtree(self.lexical.directory, ignore_errors=True)
        if self.lock is not None:
            if self.lock.held and not self.read_only and not self.problem:
                record_clean_close(self.directory)  # the stores are closed: nothing in flight
            self.lock.release()
