"""Which code tokens of a name are references to one definition: the code lens's usages.

The candidates are the name's identifier tokens in code (never in comments or strings); each
is resolved as its language does (the parse-tree resolvers, then jedi for Python) and kept
when it names this definition. A token whose resolution fails stays a candidate "by name":
counted and listed apart, never silently dropped or promoted.

Resolving costs a parse of every file that holds a candidate, so a request resolves within a
budget (a parse not cached yet starts only before its deadline); what it could not reach,
and the Python tokens only jedi can decide, are resolved on a background thread (jedi one
file per call, on its own process) that pauses while a request resolves, and the request
after that sees them. Answers are kept per file version: a file whose text is unchanged is
not resolved again.
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

from code_compass_server.index.languages import language_for
from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_model import Resolution
from code_compass_server.symbols.resolve_tree import TS_LANGUAGES
from code_compass_server.symbols.stamped_cache import build_until, file_stamp, refused

log = logging.getLogger(__name__)

USAGE_CACHE_FILES = 4096  # files whose tokens' answers are kept (a few hundred bytes each)
JEDI_BATCH_POSITIONS = 200  # positions per file sent to jedi in the background
JEDI_BATCH_TIMEOUT_S = 30.0
BACKGROUND_PAUSE_S = 0.005  # between files resolved in the background
# Larger files are not parsed on the background thread (ast.parse holds the GIL for the whole
# file, tens of ms at this size, which a request would wait for): Python ones go to jedi.
BACKGROUND_PARSE_MAX_BYTES = 60_000
# Languages that can reference each other's definitions: a Python function is never used
# from a Go file, whatever the token says.
_FAMILIES = {"python": "python", "go": "go", **{lang: "ts" for lang in TS_LANGUAGES}}

_Answer = tuple[tuple[str, int], ...] | None  # the definitions named (path, line); None: undecided


@dataclass(frozen=True, slots=True)
class Token:
    path: str  # workspace-relative
    line: int  # 1-based
    column: int  # 0-based, str units


@dataclass(frozen=True, slots=True)
class Usages:
    resolved: list[Token]  # references that resolve to the definition
    by_name: list[Token]  # tokens whose resolution failed (or is still running)


Buffers = Callable[[str], "str | None"]  # rel -> the open editor buffer's text, else None
_Left = list[tuple[str, object, "str | None", list[tuple[int, int]]]]  # rel, stamp, buffer, tokens


def same_family(def_language: str, language: str) -> bool:
    """Can a token in `language` reference a definition in `def_language`? Unknown
    languages cannot be resolved: every token of theirs is a candidate by name."""
    family = _FAMILIES.get(def_language)
    return family is None or _FAMILIES.get(language) == family


class UsageResolver:
    """Sorts candidate tokens into references to a definition and tokens matched by name."""

    def __init__(self, resolver: SymbolResolver) -> None:
        self.resolver = resolver
        self._answers: OrderedDict[tuple[str, str, object], dict[tuple[int, int], _Answer]] = (
            OrderedDict()
        )
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
        buffers: Buffers,
        budget_s: float,
        quiet: frozenset[tuple[str, int, int]] = frozenset(),
    ) -> tuple[Usages, _Left]:
        """(usages, the work left for `finish_later`).

        `wanted`: the definition's (path, 1-based line)s (overloads share one lens);
        `candidates`: rel -> (1-based line, column) tokens of the name, definitions excluded.
        A token whose answer is not known yet is counted by name, and left; a `quiet` one
        (maybe not code at all) counts only once it resolves to the definition.
        """
        deadline = time.perf_counter() + budget_s
        resolved: list[Token] = []
        by_name: list[Token] = []
        left: _Left = []
        with build_until(deadline), self.resolver.foreground():
            for rel, positions in candidates.items():
                language = language_for(rel)
                buffer = buffers(rel)
                stamp = file_stamp(root, rel, buffer)
                if language is None or stamp is None:
                    by_name.extend(Token(rel, ln, col) for ln, col in positions)
                    continue
                answers = self._file_answers(root, rel, stamp)
                todo: list[tuple[int, int]] = []
                for key in positions:
                    if key in answers:
                        answer = answers[key]
                    else:
                        answer = None
                        if time.perf_counter() < deadline:
                            answer = self._fast(root, rel, language, buffer, *key)
                            if refused():
                                answer = None  # a file it needed was not parsed in time
                        if answer is None:
                            todo.append(key)
                        else:
                            answers[key] = answer
                    if answer is None:
                        if (rel, *key) not in quiet:
                            by_name.append(Token(rel, *key))
                    elif any(k in wanted for k in answer):
                        resolved.append(Token(rel, *key))
                if todo:
                    left.append((rel, stamp, buffer, todo))
        return Usages(resolved, by_name), left

    def finish_later(self, key: object, root: Path, left: _Left, then: Callable[[], None]) -> None:
        """Resolve what a request left, once per `key` at a time, then call `then` if any
        answer changed."""
        with self._lock:
            if key in self._queued:
                return
            self._queued.add(key)
        self._background.submit(self._finish, key, root, left, then)

    def _finish(self, key: object, root: Path, left: _Left, then: Callable[[], None]) -> None:
        try:
            if self.finish_now(root, left):
                then()
        except Exception:  # background refinement: the request already answered
            log.exception("resolving lens usages in the background failed")
        finally:
            with self._lock:
                self._queued.discard(key)

    def finish_now(
        self,
        root: Path,
        left: _Left,
        max_parse_bytes: int | None = BACKGROUND_PARSE_MAX_BYTES,
        deadline: float | None = None,
    ) -> bool:
        """Resolve what `classify` left, in this thread (parse trees, then jedi for Python);
        answers are stored for the next `classify`. True when any answer changed.
        `max_parse_bytes`: larger files are not parsed (a request that waits for the answer,
        not the lens's background thread, passes None); past `deadline` (perf_counter) the
        files left stay undecided."""
        changed = False
        for rel, stamp, buffer, positions in left:
            language = language_for(rel)
            if self._closed.is_set() or (deadline is not None and time.perf_counter() > deadline):
                return changed
            if language is None:
                continue
            answers = self._file_answers(root, rel, stamp)
            undecided: list[tuple[int, int]] = []
            for pos in positions:
                if pos in answers:
                    continue
                self.resolver.wait_for_foreground()
                with build_until(max_bytes=max_parse_bytes):
                    answer = self._fast(root, rel, language, buffer, *pos)
                    if refused():
                        answer = None  # a file too large to parse here: jedi's process
                if answer is not None or language != "python":
                    answers[pos] = answer  # None: final, by name
                    changed = changed or answer is not None
                else:
                    undecided.append(pos)
            # A parse holds the GIL throughout: leave room for the hovers between files.
            time.sleep(BACKGROUND_PAUSE_S)
            if undecided:
                changed = self._jedi(root, rel, buffer, undecided, answers) or changed
        return changed

    def _jedi(
        self,
        root: Path,
        rel: str,
        buffer: str | None,
        positions: list[tuple[int, int]],
        answers: dict[tuple[int, int], _Answer],
    ) -> bool:
        """jedi's answers for a file's undecided tokens, stored (None: by name, for good)."""
        text = buffer
        if text is None:
            try:
                text = (root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = None
        changed = False
        for i in range(0, len(positions), JEDI_BATCH_POSITIONS):
            batch = positions[i : i + JEDI_BATCH_POSITIONS]
            found = None
            if text is not None:
                zero_based = [(ln - 1, col) for ln, col in batch]
                found = self.resolver.jedi_batch(root, rel, text, zero_based, JEDI_BATCH_TIMEOUT_S)
            for j, pos in enumerate(batch):
                answer = _named(found[j]) if found is not None else None
                answers[pos] = answer
                changed = changed or answer is not None
        return changed

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
    def _file_answers(self, root: Path, rel: str, stamp: object) -> dict[tuple[int, int], _Answer]:
        key = (str(root), rel, stamp)
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


def _named(res: Resolution | None) -> _Answer:
    """The definitions a resolution names; () for a name from outside or no symbol at all."""
    if res is None:
        return None
    return tuple((t.path, t.line) for t in res.targets)
