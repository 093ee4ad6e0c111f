"""What the scanner leaves out: default excludes and gitignore-style matching.

`GlobMatcher` keeps gitignore semantics (pathspec GitWildMatch, negations, last match
wins) but answers the common "no pattern matches" case with one combined regex, so
checking thousands of paths against dozens of patterns stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pathspec

# Directory names never descended into (VCS, dependencies, build outputs, venvs, caches).
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "build",
        "dist",
        "out",
        "target",
        ".venv",
        "venv",
        "env",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".eggs",
        ".cache",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".angular",
        ".turbo",
        ".parcel-cache",
        ".gradle",
        ".idea",
        ".terraform",
        ".dart_tool",
        ".vscode-test",
        "htmlcov",
        "coverage",
    }
)

# File (and a few directory) patterns excluded by default: lock files, minified and
# generated code. Content-based "generated" detection happens in the chunker.
DEFAULT_EXCLUDED_PATTERNS: tuple[str, ...] = (
    "*.egg-info/",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Cargo.lock",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
    "mix.lock",
    "*.min.js",
    "*.min.mjs",
    "*.min.css",
    "*.map",
    "*.bundle.js",
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.gw.go",
    "*.generated.*",
    "*.g.dart",
    "*.designer.cs",
)

# A directory holding this file is a Python virtual environment, whatever its name.
VENV_MARKER = "pyvenv.cfg"

_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")
_ANY_DEPTH = "^(?:.+/)?"


class GlobMatcher:
    """Gitignore-style patterns relative to one base directory."""

    __slots__ = ("_any_base", "_any_path", "_has_negation", "_spec")

    def __init__(self, lines: Iterable[str]) -> None:
        line_list = list(lines)
        self._spec = pathspec.GitIgnoreSpec.from_lines(line_list)
        patterns = self._spec.patterns
        # A pattern without "/" (besides a trailing one) matches the last component only.
        basename_only = (
            ["/" not in line.strip().lstrip("!").rstrip("/") for line in line_list]
            if len(patterns) == len(line_list)
            else [False] * len(patterns)
        )
        base_regexes: list[str] = []
        path_regexes: list[str] = []
        self._has_negation = False
        for pattern, on_basename in zip(patterns, basename_only, strict=True):
            if pattern.include is None:
                continue  # comment or blank line
            if pattern.include is False:
                self._has_negation = True
            regex = getattr(pattern, "regex", None)
            if regex is None:
                continue
            text = _NAMED_GROUP.sub("(?:", regex.pattern)
            # "any depth" patterns only need the last path component, which avoids
            # the backtracking of "(?:.+/)?" across dozens of alternatives.
            if on_basename and text.startswith(_ANY_DEPTH):
                base_regexes.append("(?:" + text[len(_ANY_DEPTH) :] + ")")
            else:
                path_regexes.append("(?:" + text + ")")
        self._any_base = re.compile("|".join(base_regexes)) if base_regexes else None
        self._any_path = re.compile("|".join(path_regexes)) if path_regexes else None

    def __bool__(self) -> bool:
        return self._any_base is not None or self._any_path is not None

    def _maybe(self, rel: str) -> bool:
        if self._any_path is not None and self._any_path.match(rel) is not None:
            return True
        if self._any_base is None:
            return False
        cut = rel.rfind("/", 0, len(rel) - 1)
        return self._any_base.match(rel, cut + 1) is not None

    def check(self, rel: str) -> bool | None:
        """True: excluded; False: re-included by a negation; None: no pattern matched.

        Directories must be passed with a trailing "/" so "build/" patterns apply.
        """
        if not self._maybe(rel):
            return None
        if not self._has_negation:
            return True
        return self._spec.check_file(rel).include

    def matches(self, rel: str) -> bool:
        return self.check(rel) is True


_DEFAULT_PATTERNS = GlobMatcher(DEFAULT_EXCLUDED_PATTERNS)


def is_default_excluded_dir(name: str, rel_dir: str) -> bool:
    """`rel_dir` ends with "/"."""
    return name in DEFAULT_EXCLUDED_DIRS or _DEFAULT_PATTERNS.matches(rel_dir)


def is_default_excluded_file(rel: str) -> bool:
    return _DEFAULT_PATTERNS.matches(rel)


# (base prefix ending in "/" or "", matcher); deeper entries come later.
IgnoreStack = tuple[tuple[str, GlobMatcher], ...]


def is_gitignored(rel: str, stack: IgnoreStack) -> bool:
    """Deepest decisive pattern wins, as in git (negations included)."""
    for base, matcher in reversed(stack):
        if base and not rel.startswith(base):
            continue
        verdict = matcher.check(rel[len(base) :])
        if verdict is not None:
            return verdict
    return False


_file_cache: dict[tuple[str, int, int], GlobMatcher] = {}
_FILE_CACHE_MAX = 4096


def load_ignore_file(path: Path) -> GlobMatcher | None:
    """A .gitignore (or .git/info/exclude) as a matcher; None if missing or empty.

    Cached by (path, mtime, size) so the watcher's single-path checks stay cheap.
    """
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    cached = _file_cache.get(key)
    if cached is not None:
        return cached or None
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return None
    matcher = GlobMatcher(text.splitlines())
    if len(_file_cache) >= _FILE_CACHE_MAX:
        _file_cache.clear()
    _file_cache[key] = matcher
    return matcher or None
