"""What the scanner leaves out: default excludes and gitignore-style matching.

`GlobMatcher` keeps gitignore semantics (negations, last match wins, a pattern without
"/" matches at any depth, `**`) with a matcher that cannot backtrack (glob_match), so
one hostile `.gitignore` line cannot freeze a scan, and a path that still takes too
long is skipped with a reason rather than holding up the scan.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.constants import IGNORE_PATH_BUDGET_S
from code_compass_server.index.glob_match import (
    ANY_DEPTH,
    PathGlob,
    SegmentGlob,
    compile_path,
    compile_segment,
)

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


class IgnoreBudgetExceeded(Exception):
    """One path took longer than IGNORE_PATH_BUDGET_S against its ignore rules."""


@dataclass(frozen=True, slots=True)
class _Rule:
    index: int  # line order: the last matching rule wins
    include: bool  # True: excludes the path; False: a "!" negation re-includes it
    dir_only: bool  # pattern ended with "/"
    # A pattern without "/" matches any one component; otherwise the path from the base.
    glob: SegmentGlob | PathGlob
    # Literal pieces every match contains: a rule whose pieces are not all in the path is
    # passed over with a substring test instead of a match.
    required: tuple[str, ...]
    source: str  # the pattern without its "!": a later line with the same one supersedes it

    @property
    def letters(self) -> frozenset[str]:
        """Characters every match contains (a cheaper pre-filter than substring tests)."""
        return frozenset("".join(self.required))


def _parse(line: str, index: int) -> _Rule | None:
    """One gitignore line as a rule; None for blanks and comments."""
    text = line.rstrip("\r\n")
    # Trailing spaces are dropped unless escaped with a backslash.
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text or text.startswith("#"):
        return None
    include = True
    if text.startswith("!"):
        include, text = False, text[1:]
    elif text.startswith(("\\!", "\\#")):
        text = text[1:]
    source = text
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    if "/" in text:
        segments = [s for s in text.lstrip("/").split("/") if s != ""]
        if not segments:
            return None
        path = compile_path(segments)
        pieces = [p for run in path.runs for seg in run for p in seg.pieces]
        return _Rule(index, include, dir_only, path, _literals(pieces), source)
    if text == ANY_DEPTH:
        text = "*"
    seg = compile_segment(text)
    return _Rule(index, include, dir_only, seg, _literals(list(seg.pieces)), source)


def _literals(pieces: list[str | re.Pattern[str]]) -> tuple[str, ...]:
    return tuple(sorted({p for p in pieces if isinstance(p, str)}, key=len, reverse=True))


def _literal_path(glob: PathGlob) -> str | None:
    """ "a/b/c" for an anchored pattern without any wildcard, else None."""
    if len(glob.runs) != 1 or glob.needs_more:
        return None
    names = []
    for seg in glob.runs[0]:
        if len(seg.pieces) != 1 or seg.lead_star or seg.trail_star:
            return None
        piece = seg.pieces[0]
        if not isinstance(piece, str):
            return None
        names.append(piece)
    return "/".join(names)


def _applies(rule: _Rule, parts: list[str], is_dir: bool) -> bool:
    """Does the rule match the path or one of its parent directories (as git does)?"""
    n = len(parts)
    glob = rule.glob
    if isinstance(glob, SegmentGlob):
        last = n if (is_dir or not rule.dir_only) else n - 1
        # A deep path often repeats its folder names: each distinct name is tried once.
        return any(glob.matches(name) for name in set(parts[:last]))
    if len(glob.runs) == 1:
        k = len(glob.runs[0])
        if k > n or (k == n and rule.dir_only and not is_dir):
            return False
        return glob.matches(parts, 0, k)
    for k in range(1, n + 1):
        if k == n and rule.dir_only and not is_dir:
            break
        if glob.matches(parts, 0, k):
            return True
    return False


class GlobMatcher:
    """Gitignore-style patterns relative to one base directory (negations: last match wins).

    Matching is linear in pattern × path (see glob_match). Plain names (`yarn.lock`) and
    suffix patterns (`*.pyc`) are looked up by dict, so a rule file of thousands of
    literal paths costs one lookup per path component; the rest are tried newest first.
    """

    __slots__ = ("_by_name", "_by_path", "_by_suffix", "_others", "_others_letters", "_rules")

    def __init__(self, lines: Iterable[str]) -> None:
        self._rules: list[_Rule] = []
        self._by_name: dict[str, list[_Rule]] = {}
        self._by_path: dict[str, list[_Rule]] = {}
        self._by_suffix: dict[str, list[tuple[str, _Rule]]] = {}
        self._others: list[_Rule] = []
        parsed = [r for r in (_parse(line, i) for i, line in enumerate(lines)) if r is not None]
        # Only the last of identical patterns can decide (last match wins).
        last = {rule.source: rule.index for rule in parsed}
        for rule in parsed:
            if last[rule.source] != rule.index:
                continue
            self._rules.append(rule)
            glob = rule.glob
            if isinstance(glob, PathGlob):
                literal = _literal_path(glob)
                if literal is not None:
                    self._by_path.setdefault(literal, []).append(rule)
                    continue
            elif len(glob.pieces) == 1:
                piece = glob.pieces[0]
                if isinstance(piece, str) and not glob.lead_star and not glob.trail_star:
                    self._by_name.setdefault(piece, []).append(rule)
                    continue
                if (
                    isinstance(piece, str)
                    and glob.lead_star
                    and not glob.trail_star
                    and "." in piece
                ):
                    ext = piece[piece.rfind(".") :]
                    self._by_suffix.setdefault(ext, []).append((piece, rule))
                    continue
            self._others.append(rule)
        self._others_letters = [rule.letters for rule in self._others]

    def __bool__(self) -> bool:
        return bool(self._rules)

    def check(self, rel: str) -> bool | None:
        """True: excluded; False: re-included by a negation; None: no pattern matched.

        Directories must be passed with a trailing "/" so "build/" patterns apply.
        Raises IgnoreBudgetExceeded when the path takes longer than the budget.
        """
        is_dir = rel.endswith("/")
        parts = rel.rstrip("/").split("/")
        n = len(parts)
        best: _Rule | None = None
        if self._by_name or self._by_suffix:
            for i, part in enumerate(parts):
                as_dir = is_dir or i < n - 1
                for rule in self._by_name.get(part, ()):
                    if (as_dir or not rule.dir_only) and (best is None or rule.index > best.index):
                        best = rule
                dot = part.rfind(".")
                if dot < 0:
                    continue
                for suffix, rule in self._by_suffix.get(part[dot:], ()):
                    if (
                        (as_dir or not rule.dir_only)
                        and (best is None or rule.index > best.index)
                        and part.endswith(suffix)
                    ):
                        best = rule
        if self._by_path:
            prefix = ""
            for i, part in enumerate(parts):
                prefix = f"{prefix}/{part}" if i else part
                as_dir = is_dir or i < n - 1
                for rule in self._by_path.get(prefix, ()):
                    if (as_dir or not rule.dir_only) and (best is None or rule.index > best.index):
                        best = rule
        others = self._others
        deadline = time.perf_counter() + IGNORE_PATH_BUDGET_S if len(others) > 64 else 0.0
        count = 0
        present = frozenset(rel) if others else frozenset()
        for rule, letters in zip(reversed(others), reversed(self._others_letters), strict=True):
            if best is not None and rule.index < best.index:
                break
            if not letters <= present:
                continue
            required = rule.required
            if required and required[0] not in rel:  # the longest literal: the rarest
                continue
            count += 1
            if deadline and count % 16 == 0 and time.perf_counter() > deadline:
                raise IgnoreBudgetExceeded(rel)
            if all(lit in rel for lit in required[1:]) and _applies(rule, parts, is_dir):
                best = rule
                break
        return None if best is None else best.include

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
