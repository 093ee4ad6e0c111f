"""Is a project's committed index still what its files say? Answered by `stat` alone, so a
read-only command (`search`, `ask`, `status`) serves the index without becoming its writer.

The writer records a manifest at the start of a full run: the mtime of every folder under the
root (a file added, removed or renamed changes its folder's mtime), of every ignore file (an
edit in place changes what is indexed without touching a folder) and the scan settings. It is
published only once that run completes (`Project.verify_after_run`), so a cancelled or killed
run leaves no manifest that vouches for it. A reader finds the index fresh when the manifest's
folders and ignore files are unchanged and every file the catalog lists has the size and mtime
the catalog recorded. Recording before the scan keeps it on the safe side: a change during the
run makes the next reader see a stale index, never the reverse.

What it cannot see: a file the last run skipped for its content or size (binary, minified, too
large; not in the catalog), edited in place without its folder changing. The next `index` or
the language server's watcher picks it up.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.index.catalog import Catalog
from code_compass_server.index.ignore import is_default_excluded_dir

FRESHNESS_FILE = "freshness.json"
_IGNORE_FILES = (".gitignore",)
_GIT_EXCLUDE = ".git/info/exclude"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class TreeStamp:
    """What a full run saw when it started: folder and ignore-file stamps, scan settings."""

    settings: str
    dirs: dict[str, int]  # root-relative folder ("" for the root) -> mtime_ns
    ignore_files: dict[str, tuple[int, int]]  # root-relative path -> (size, mtime_ns)


def stamp_tree(root: Path, settings_key: str) -> TreeStamp:
    """Stamp every folder the scan could enter (the default-excluded ones, `.git` and
    `node_modules` among them, are left out as the scan leaves them) and every ignore file."""
    dirs: dict[str, int] = {}
    ignore_files: dict[str, tuple[int, int]] = {}
    real_root = os.path.realpath(root)
    exclude = os.path.join(real_root, _GIT_EXCLUDE)
    with contextlib.suppress(OSError):
        st = os.stat(exclude)
        ignore_files[_GIT_EXCLUDE] = (st.st_size, st.st_mtime_ns)
    pending = [("", real_root)]
    while pending:
        rel_dir, abs_dir = pending.pop()
        try:
            dirs[rel_dir] = os.stat(abs_dir).st_mtime_ns
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                sub_rel = f"{rel_dir}{entry.name}/"
                if not is_default_excluded_dir(entry.name, sub_rel):
                    pending.append((sub_rel, entry.path))
            elif entry.name in _IGNORE_FILES:
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    ignore_files[rel_dir + entry.name] = (st.st_size, st.st_mtime_ns)
    return TreeStamp(settings_key, dirs, ignore_files)


def write_manifest(directory: Path, stamp: TreeStamp) -> None:
    """Publish the stamp of a completed run (writer only; atomic: a reader never sees half)."""
    data = {
        "format": _FORMAT,
        "settings": stamp.settings,
        "dirs": stamp.dirs,
        "ignoreFiles": {k: list(v) for k, v in stamp.ignore_files.items()},
    }
    tmp = directory / f"{FRESHNESS_FILE}.tmp"
    tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, directory / FRESHNESS_FILE)


def drop_manifest(directory: Path) -> None:
    """The writer is about to change the index: the old manifest no longer vouches for it."""
    with contextlib.suppress(OSError):
        (directory / FRESHNESS_FILE).unlink()


def read_manifest(directory: Path) -> TreeStamp | None:
    try:
        data = json.loads((directory / FRESHNESS_FILE).read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            return None
        return TreeStamp(
            str(data["settings"]),
            {str(k): int(v) for k, v in data["dirs"].items()},
            {str(k): (int(v[0]), int(v[1])) for k, v in data["ignoreFiles"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def stale_reason(directory: Path, root: Path, catalog: Catalog, settings_key: str) -> str:
    """'' when the committed index matches the files by stat; else why it may not."""
    manifest = read_manifest(directory)
    if manifest is None:
        return "no record of a completed run"
    if manifest.settings != settings_key:
        return "scan settings changed"
    prefix = os.path.realpath(root) + os.sep
    stat = os.stat
    for rel_dir, mtime_ns in manifest.dirs.items():
        try:
            if stat(prefix + rel_dir).st_mtime_ns != mtime_ns:
                return f"folder changed: {rel_dir or '.'}"
        except OSError:
            return f"folder gone: {rel_dir}"
    for rel, stamp in manifest.ignore_files.items():  # a new one changed its folder's mtime
        try:
            st = stat(prefix + rel, follow_symlinks=False)
        except OSError:
            return f"ignore file gone: {rel}"
        if (st.st_size, st.st_mtime_ns) != stamp:
            return f"ignore file changed: {rel}"
    for path, size, mtime_ns in catalog.file_stats():
        try:
            st = stat(prefix + path)
        except OSError:
            return f"file gone: {path}"
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            return f"file changed: {path}"
    return ""
