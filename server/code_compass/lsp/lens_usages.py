"""Which code tokens of a name are references to one definition: the code lens's usages.

The candidates are the name's identifier tokens in code (never in comments or strings); each
is resolved as its language does (the parse-tree resolvers, then jedi's cached answers for
Python) and kept when it names this definition. A token whose resolution fails stays a
candidate "by name": counted and listed apart, never silently dropped or promoted.

Resolving costs a parse of every file that holds a candidate, so a request resolves within a
budget; what it could not reach, and the Python tokens only jedi can decide, are resolved on a
background thread (jedi one file per call on its own process) and the request after that
sees them. Answers are cached per file version: a file whose text is unchanged is not
resolved again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from code_compass.index.languages import language_for
from code_compass.lsp.resolve import SymbolResolver
from code_compass.lsp.resolve_model import Resolution
from code_compass.lsp.resolve_tree import TS_LANGUAGES

log = logging.getLogger(__name__)

USAGE_CACHE_FILES = 4096  # files whose tokens' answers are kept (a few hundred bytes each)
JEDI_BATCH_POSITIONS = 200  # positions per file sent to jedi in the background
JEDI_BATCH_TIMEOUT_S = 30.0
BACKGROUND_PAUSE_S = 0.005  # between files resolved in the background
# Languages that can reference each other's definitions: a Python function is never used
# from a Go file, whatever the token says.
_FAMILIES = {"python": "python", "go": "go", **{lang: "ts" for lang in TS_LANGUAGES}}

_Answer = tuple[tuple[str, int], ...] | None  # the definitions named (path, line); None: undecided
_FileKey = tuple[str, str, int, int]  # root, rel, len(text), hash(text)


@dataclass(frozen=True, slots=True)
class Token:
    path: str  # workspace-relative
    line: int  # 1-based
    column: int  # 0-based, str units


@dataclass(frozen=True, slots=True)
class Usages:
    resolved: list[Token]  # references that resolve to the definition
    by_name: list[Token]  # tokens whose resolution failed (or is still running)


class FileTexts(Protocol):
    """What the usage resolver reads a file through (the request's text cache)."""

    def text(self, rel: str) -> str | None: ...

    def buffer(self, rel: str) -> str | None: ...


def same_family(def_language: str, language: str) -> bool:
    """Can a token in `language` reference a definition in `def_language`? Unknown
    languages cannot be resolved: every token of theirs is a candidate by name."""
    family = _FAMILIES.get(def_language)
    return family is None or _FAMILIES.get(language) == family


class UsageResolver:
    """Sorts candidate tokens into references to a definition and tokens matched by name."""

    def __init__(self, resolver: SymbolResolver) -> None:
        self.resolver = resolver
        self._answers: OrderedDict[_FileKey, dict[tuple[int, int], _Answer]] = OrderedDict()
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(1, thread_name_prefix="cc-lens-usages")
        self._queued: set[object] = set()
        self._closed = threading.Event()
        resolver.on_close(self.close)

    def classify(
        self,
        root: Path,
        wanted: frozenset[tuple[str, int]],
        candidates: dict[str, list[tuple[int, int]]],
        files: FileTexts,
        budget_s: float,
    ) -> tuple[Usages, list[tuple[str, str, list[tuple[int, int]]]]]:
        """(usages, the work left: (rel, text, positions) to resolve in the background).

        `wanted`: the definition's (path, 1-based line)s (overloads share one lens);
        `candidates`: rel -> (1-based line, column) tokens of the name, definitions excluded.
        """
        deadline = time.perf_counter() + budget_s
        resolved: list[Token] = []
        by_name: list[Token] = []
        left: list[tuple[str, str, list[tuple[int, int]]]] = []
        for rel, positions in candidates.items():
            text = files.text(rel)
            language = language_for(rel)
            if text is None or language is None:
                by_name.extend(Token(rel, ln, col) for ln, col in positions)
                continue
            answers = self._file_answers(root, rel, text)
            todo: list[tuple[int, int]] = []
            for ln, col in positions:
                key = (ln, col)
                if key in answers:
                    answer = answers[key]
                elif time.perf_counter() < deadline:
                    answer = self._fast(root, rel, language, files.buffer(rel), ln, col)
                    with self._lock:
                        answers[key] = answer
                else:
                    todo.append(key)
                    by_name.append(Token(rel, ln, col))
                    continue
                if answer is None and language == "python":
                    known, answer = self._jedi(root, rel, text, ln, col)
                    if not known:
                        todo.append(key)
                if answer is None:
                    by_name.append(Token(rel, ln, col))
                elif any(k in wanted for k in answer):
                    resolved.append(Token(rel, ln, col))
            if todo:
                left.append((rel, text, todo))
        return Usages(resolved, by_name), left

    def finish_later(
        self,
        key: object,
        root: Path,
        left: list[tuple[str, str, list[tuple[int, int]]]],
        buffers: dict[str, str],
        then: Callable[[], None],
    ) -> None:
        """Resolve what a request left, once per `key` at a time, then call `then`."""
        with self._lock:
            if key in self._queued:
                return
            self._queued.add(key)
        self._background.submit(self._finish, key, root, left, buffers, then)

    def _finish(
        self,
        key: object,
        root: Path,
        left: list[tuple[str, str, list[tuple[int, int]]]],
        buffers: dict[str, str],
        then: Callable[[], None],
    ) -> None:
        try:
            changed = False
            for rel, text, positions in left:
                language = language_for(rel)
                if self._closed.is_set():
                    return
                if language is None:
                    continue
                answers = self._file_answers(root, rel, text)
                undecided: list[tuple[int, int]] = []
                for ln, col in positions:
                    if (ln, col) not in answers:
                        answer = self._fast(root, rel, language, buffers.get(rel), ln, col)
                        changed = changed or answer is not None
                        with self._lock:
                            answers[(ln, col)] = answer
                    if (
                        answers[(ln, col)] is None
                        and language == "python"
                        and not self.resolver.jedi_known(root, rel, text, ln - 1, col)[0]
                    ):
                        undecided.append((ln - 1, col))
                # A parse holds the GIL throughout: leave room for the hovers between files.
                time.sleep(BACKGROUND_PAUSE_S)
                for i in range(0, len(undecided), JEDI_BATCH_POSITIONS):
                    batch = undecided[i : i + JEDI_BATCH_POSITIONS]
                    found = self.resolver.jedi_batch(root, rel, text, batch, JEDI_BATCH_TIMEOUT_S)
                    changed = changed or found
            if changed:
                then()
        except Exception:  # background refinement: the request already answered
            log.exception("resolving lens usages in the background failed")
        finally:
            with self._lock:
                self._queued.discard(key)

    def wait_idle(self, timeout: float) -> None:
        """Let background work finish (benchmarks, checks, tests)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self._lock:
                if not self._queued:
                    return
            time.sleep(0.02)

    def close(self) -> None:
        self._closed.set()
        self._background.shutdown(wait=False, cancel_futures=True)

    # -- answers ------------------------------------------------------------------------
    def _file_answers(self, root: Path, rel: str, text: str) -> dict[tuple[int, int], _Answer]:
        key: _FileKey = (str(root), rel, len(text), hash(text))
        with self._lock:
            found = self._answers.get(key)
            if found is None:
                found = self._answers[key] = {}
            self._answers.move_to_end(key)
            while len(self._answers) > USAGE_CACHE_FILES:
                self._answers.popitem(last=False)
            return found

    def _fast(
        self, root: Path, rel: str, language: str, buffer: str | None, line: int, col: int
    ) -> _Answer:
        return _named(self.resolver.fast(root, rel, language, buffer, line - 1, col))

    def _jedi(self, root: Path, rel: str, text: str, line: int, col: int) -> tuple[bool, _Answer]:
        """(jedi has answered, its answer) from its cache."""
        known, res = self.resolver.jedi_known(root, rel, text, line - 1, col)
        return known, _named(res) if known else None


def _named(res: Resolution | None) -> _Answer:
    """The definitions a resolution names; () for a name from outside or no symbol at all."""
    if res is None:
        return None
    return tuple((t.path, t.line) for t in res.targets)
