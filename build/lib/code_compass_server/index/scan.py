"""Walk a workspace and decide, file by file, what gets indexed and why not.

Excluded directories are never descended into. Every skip is counted by reason;
an excluded directory counts once, whatever it holds.
"""

from __future__ import annotations

import functools
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from code_compass_server.constants import DEFAULT_MAX_FILE_BYTES
from code_compass_server.index.ignore import (
    VENV_MARKER,
    GlobMatcher,
    IgnoreBudgetExceeded,
    IgnoreStack,
    is_default_excluded_dir,
    is_default_excluded_file,
    is_gitignored,
    load_ignore_file,
)
from code_compass_server.index.languages import language_for
from code_compass_server.index.secret_files import is_secret
from code_compass_server.index.summary import MAX_SKIPPED_LISTED, SkippedPath

# Skip reasons (keys of ScanResult.skipped).
SKIP_SECRET = "secret"
SKIP_DEFAULT_EXCLUDED = "default_excluded"
SKIP_GITIGNORED = "gitignored"
SKIP_EXCLUDED = "excluded"  # user setting `exclude`
SKIP_NOT_INCLUDED = "not_included"  # user setting `include` is set and does not match
SKIP_SYMLINK_OUTSIDE = "symlink_outside"
SKIP_SYMLINK_DIR = (
    "symlink_dir"  # linked dir inside the root: its files are scanned at their real path
)
SKIP_UNSUPPORTED = "unsupported_type"
SKIP_TOO_LARGE = "too_large"
SKIP_UNREADABLE = "unreadable"
SKIP_IGNORE_BUDGET = "ignore_budget"  # ignore rules took longer than IGNORE_PATH_BUDGET_S
SKIP_MISSING = "missing"  # classify_path only: the path no longer exists (or is a directory)


@dataclass(frozen=True, slots=True)
class ScanSettings:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Whitelist of gitignore-style globs (root-relative); empty = every supported file.
    include: tuple[str, ...] = ()
    # Extra gitignore-style globs to leave out, on top of .gitignore and the defaults.
    exclude: tuple[str, ...] = ()
    # Files to index as plain-text documents even when their type is not known (`*.adoc`).
    documents: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileEntry:
    rel: str  # workspace-relative posix path
    abs: Path
    size: int
    mtime_ns: int
    language: str


@dataclass(slots=True)
class ScanResult:
    files: list[FileEntry]
    skipped: dict[str, int] = field(default_factory=dict)
    # Which paths were skipped and why (an excluded folder once, ending with "/"), up to
    # MAX_SKIPPED_LISTED: what `index -v` lists.
    skipped_paths: list[SkippedPath] = field(default_factory=list)


class _Rules:
    """Everything that does not depend on the directory being visited."""

    def __init__(self, root: str, settings: ScanSettings) -> None:
        self.root = root
        self.root_prefix = root.rstrip(os.sep) + os.sep
        self.settings = settings
        self.exclude = GlobMatcher(settings.exclude) if settings.exclude else None
        self.include = GlobMatcher(settings.include) if settings.include else None
        self.documents = GlobMatcher(settings.documents) if settings.documents else None

    def base_stack(self) -> IgnoreStack:
        """.git/info/exclude, below every .gitignore in precedence."""
        info = load_ignore_file(Path(self.root, ".git", "info", "exclude"))
        return (("", info),) if info is not None else ()

    def inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root_prefix)

    def dir_reason(self, rel_dir: str, name: str, stack: IgnoreStack) -> str | None:
        """`rel_dir` ends with "/"."""
        if is_secret(rel_dir):
            return SKIP_SECRET
        if is_default_excluded_dir(name, rel_dir):
            return SKIP_DEFAULT_EXCLUDED
        return self._rule_reason(rel_dir, stack)

    def _rule_reason(self, rel: str, stack: IgnoreStack) -> str | None:
        """.gitignore files and the `exclude` setting; a path too costly to judge is skipped."""
        try:
            if is_gitignored(rel, stack):
                return SKIP_GITIGNORED
            if self.exclude is not None and self.exclude.matches(rel):
                return SKIP_EXCLUDED
        except IgnoreBudgetExceeded:
            return SKIP_IGNORE_BUDGET
        return None

    def file_reason(self, rel: str, stack: IgnoreStack) -> str | None:
        """Name-based exclusions (no I/O); symlinks, type and size are checked after."""
        if is_secret(rel):
            return SKIP_SECRET
        if is_default_excluded_file(rel):
            return SKIP_DEFAULT_EXCLUDED
        return self._rule_reason(rel, stack)

    def type_reason(self, rel: str, language: str | None) -> str | None:
        """After the exclusions and the symlink check: the include list and file type."""
        try:
            if self.include is not None and not self.include.matches(rel):
                return SKIP_NOT_INCLUDED
        except IgnoreBudgetExceeded:
            return SKIP_IGNORE_BUDGET
        if language is None and not (self.documents is not None and self.documents.matches(rel)):
            return SKIP_UNSUPPORTED
        return None

    def link_reason(self, abs_path: str) -> str | None:
        """Reason to skip a symlinked file, judged on its target."""
        real = os.path.realpath(abs_path)
        if not self.inside(real):
            return SKIP_SYMLINK_OUTSIDE
        target_rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        if is_secret(target_rel):
            return SKIP_SECRET
        return None


def _push_gitignore(stack: IgnoreStack, abs_dir: str, rel_dir: str) -> IgnoreStack:
    matcher = load_ignore_file(Path(abs_dir, ".gitignore"))
    return (*stack, (rel_dir, matcher)) if matcher is not None else stack


def scan_workspace(root: Path, settings: ScanSettings = ScanSettings()) -> ScanResult:
    """Every indexable file under `root`, sorted by relative path."""
    real_root = os.path.realpath(root)
    rules = _Rules(real_root, settings)
    files: list[FileEntry] = []
    skipped: Counter[str] = Counter()
    listed: list[SkippedPath] = []

    def skip(rel: str, reason: str) -> None:
        skipped[reason] += 1
        if len(listed) < MAX_SKIPPED_LISTED:
            listed.append(SkippedPath(rel, reason))

    max_bytes = settings.max_file_bytes
    # (rel_dir with trailing "/" or "", absolute dir, gitignore stack of its parent)
    pending: list[tuple[str, str, IgnoreStack]] = [("", real_root, rules.base_stack())]
    while pending:
        rel_dir, abs_dir, stack = pending.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except OSError:
            skip(rel_dir, SKIP_UNREADABLE)
            continue
        names = {e.name for e in entries}
        if rel_dir and VENV_MARKER in names:
            skip(rel_dir, SKIP_DEFAULT_EXCLUDED)
            continue
        if ".gitignore" in names:
            stack = _push_gitignore(stack, abs_dir, rel_dir)
        for entry in entries:
            rel = rel_dir + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError:
                skip(rel, SKIP_UNREADABLE)
                continue
            if is_dir:
                sub_rel = rel + "/"
                reason = rules.dir_reason(sub_rel, entry.name, stack)
                if reason is None and is_link:
                    real = os.path.realpath(entry.path)
                    reason = SKIP_SYMLINK_DIR if rules.inside(real) else SKIP_SYMLINK_OUTSIDE
                if reason is not None:
                    skip(sub_rel, reason)
                else:
                    pending.append((sub_rel, entry.path, stack))
                continue
            reason = rules.file_reason(rel, stack)
            if reason is None and is_link:
                reason = rules.link_reason(entry.path)
            language: str | None = None
            if reason is None:
                language = language_for(rel)
                reason = rules.type_reason(rel, language)
            if reason is None:
                try:
                    if not entry.is_file():  # fifo, socket, device, broken link
                        reason = SKIP_UNREADABLE if is_link else SKIP_UNSUPPORTED
                    else:
                        st = entry.stat()
                        if st.st_size > max_bytes:
                            reason = SKIP_TOO_LARGE
                        else:
                            files.append(
                                FileEntry(
                                    rel=rel,
                                    abs=Path(entry.path),
                                    size=st.st_size,
                                    mtime_ns=st.st_mtime_ns,
                                    language=language or "text",
                                )
                            )
                except OSError:
                    reason = SKIP_UNREADABLE
            if reason is not None:
                skip(rel, reason)
    files.sort(key=lambda f: f.rel)
    listed.sort(key=lambda s: s.path)
    return ScanResult(files=files, skipped=dict(sorted(skipped.items())), skipped_paths=listed)


@functools.lru_cache(maxsize=16)
def _rules_for(real_root: str, settings: ScanSettings) -> _Rules:
    return _Rules(real_root, settings)


def classify_path(root: Path, rel: str, settings: ScanSettings = ScanSettings()) -> str | None:
    """Why one workspace-relative file would be skipped by `scan_workspace`, or None.

    For the file watcher: applies the same rules to a single path, reading only the
    .gitignore files of its ancestors (cached by mtime).
    """
    real_root = os.path.realpath(root)
    rules = _rules_for(real_root, settings)
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return SKIP_MISSING
    stack = _push_gitignore(rules.base_stack(), real_root, "")
    abs_dir = real_root
    rel_dir = ""
    for name in parts[:-1]:
        sub_rel = rel_dir + name + "/"
        abs_sub = os.path.join(abs_dir, name)
        reason = rules.dir_reason(sub_rel, name, stack)
        if reason is not None:
            return reason
        if os.path.islink(abs_sub):
            real = os.path.realpath(abs_sub)
            return SKIP_SYMLINK_DIR if rules.inside(real) else SKIP_SYMLINK_OUTSIDE
        if os.path.exists(os.path.join(abs_sub, VENV_MARKER)):
            return SKIP_DEFAULT_EXCLUDED
        rel_dir, abs_dir = sub_rel, abs_sub
        stack = _push_gitignore(stack, abs_dir, rel_dir)
    file_rel = rel_dir + parts[-1]
    abs_path = os.path.join(abs_dir, parts[-1])
    reason = rules.file_reason(file_rel, stack)
    if reason is not None:
        return reason
    if os.path.islink(abs_path):
        reason = rules.link_reason(abs_path)
        if reason is not None:
            return reason
    reason = rules.type_reason(file_rel, language_for(file_rel))
    if reason is not None:
        return reason
    try:
        st = os.stat(abs_path)
    except OSError:
        return SKIP_UNREADABLE if os.path.islink(abs_path) else SKIP_MISSING
    if stat.S_ISDIR(st.st_mode):
        return SKIP_MISSING
    if not stat.S_ISREG(st.st_mode):
        return SKIP_UNSUPPORTED
    if st.st_size > settings.max_file_bytes:
        return SKIP_TOO_LARGE
    return None
