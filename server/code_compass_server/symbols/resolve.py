"""The definition an identifier really names, as its language resolves it.

Hover and code lens used to match *names*; this module resolves the symbol at a position the
way the language does: local scopes and parameters, imports (aliased, relative, re-exported),
`self.x` attributes, module-level globals. Names defined outside the workspace (builtins,
stdlib, third-party) resolve to "outside" with their full name, never to a workspace
definition that merely shares the name.

Two paths. The fast one (`resolve_python`, `resolve_tree`) reads scopes and imports from the
parse tree, cached per file version: it answers most positions in well under a millisecond
and says `None` when it cannot decide. Only then, for Python, does jedi run: it is not
thread-safe and slow on first use, so it runs on one dedicated process within a short budget;
past it the caller gets `None` (the name lookup answers, labelled as such) while jedi keeps
going and stores its answer for the next request at that position.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import multiprocessing
import os
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from code_compass_server.constants import RESOLVE_BUDGET_S, RESOLVER_WARMED_VERSIONS
from code_compass_server.index.parse_pool import watch_parent
from code_compass_server.symbols.gc_pacer import CollectionPacer
from code_compass_server.symbols.resolve_model import Resolution, Target, dedupe, doc_summary
from code_compass_server.symbols.resolve_python import MODULE_CACHE_FILES, PythonScopes
from code_compass_server.symbols.resolve_tree import TREE_LANGUAGES, TreeScopes
from code_compass_server.symbols.resolve_treecache import TREE_CACHE_FILES

log = logging.getLogger(__name__)

__all__ = ["Resolution", "SymbolResolver", "Target"]

RESOLVABLE_LANGUAGES = frozenset({"python"}) | TREE_LANGUAGES
JEDI_CACHE_ENTRIES = 32768  # jedi answers kept per (file version, position): hovers and lenses
PARSO_CACHE_FILES = 600  # parses jedi's process keeps between calls (parso's own trigger)
_JediKey = tuple[str, str, int, int, int, int]  # root, rel, len, hash(text), line, column


class SymbolResolver:
    """Resolves positions: the parse-tree fast path first, then (Python) jedi on its own
    thread within a budget, its late answers cached for the next request."""

    def __init__(self, budget_s: float = RESOLVE_BUDGET_S) -> None:
        self.budget_s = budget_s
        self._lane: ProcessPoolExecutor | None = None  # started on first use
        self._scopes: dict[Path, PythonScopes] = {}
        self._trees: dict[Path, TreeScopes] = {}
        self._busy: Future[Any] | None = None  # jedi's one call running (a hover's or a batch)
        self._lock = threading.Lock()
        self._jedi_cache: OrderedDict[_JediKey, Resolution | None] = OrderedDict()
        self._warmer = ThreadPoolExecutor(1, thread_name_prefix="cc-resolve-warm")
        # File versions warmed (or queued), the oldest forgotten past the bound: a lens
        # request warms each version an editor shows, every edit a new one.
        self._warming: OrderedDict[tuple[Path, str, int], None] = OrderedDict()
        self._on_close: list[Callable[[], None]] = []
        self._foreground = 0  # requests resolving now (background work waits for them)
        self._gc_was_enabled = True
        self._gc_held = False  # gc disabled by foreground() and not re-enabled yet
        # Past a cache's worth of evicted parses a reclaim is due even without idle time.
        self.pacer = CollectionPacer(
            busy=lambda: self._foreground > 0,
            max_evicted=min(MODULE_CACHE_FILES, TREE_CACHE_FILES),
        )

    @staticmethod
    def available() -> bool:
        try:
            import jedi  # noqa: F401
        except ImportError:
            return False
        return True

    def python_scopes(self, root: Path) -> PythonScopes:
        with self._lock:
            found = self._scopes.get(root)
            if found is None:
                found = self._scopes[root] = PythonScopes(root)
            return found

    def tree_scopes(self, root: Path) -> TreeScopes:
        with self._lock:
            found = self._trees.get(root)
            if found is None:
                found = self._trees[root] = TreeScopes(root)
            return found

    def fast(
        self, root: Path, rel: str, language: str, text: str | None, line: int, column: int
    ) -> Resolution | None:
        """The parse-tree answer alone (no jedi); None when it cannot decide. `text`: the
        open buffer, or None to read the file from disk."""
        try:
            if language == "python":
                return self.python_scopes(root).resolve(rel, text, line, column)
            if language in TREE_LANGUAGES:
                return self.tree_scopes(root).resolve(rel, language, text, line, column)
        except RecursionError:
            return None
        except Exception:  # a resolver bug must cost a hover its precision, not the hover
            log.exception("scope resolution failed on %s:%d", rel, line + 1)
        return None

    def warm(self, root: Path, rel: str, language: str, text: str) -> None:
        """On open: parse the file and what it imports, and let jedi parse it in the
        background, so the first hovers take the fast path."""
        self.wait_for_foreground()
        try:
            if language == "python":
                self.python_scopes(root).warm(rel, text, self.wait_for_foreground)
            elif language in TREE_LANGUAGES:
                self.tree_scopes(root).warm(rel, language, text)
        except Exception:
            log.exception("warming %s failed", rel)
        self.pacer.settle()
        if language == "python" and self.available():
            with self._lock:
                if self._busy is None or self._busy.done():
                    self._busy = self._jedi().submit(_warm_jedi, root, rel, text)

    def warm_later(self, root: Path, rel: str, language: str, text: str) -> None:
        """`warm` on a background thread (once per file version), off the request's path."""
        if language not in RESOLVABLE_LANGUAGES:
            return
        key = (root, rel, hash(text))
        with self._lock:
            if key in self._warming:
                return
            self._warming[key] = None
            while len(self._warming) > RESOLVER_WARMED_VERSIONS:
                self._warming.popitem(last=False)
        self._warmer.submit(self.warm, root, rel, language, text)

    def resolve(
        self,
        root: Path,
        rel: str,
        language: str,
        text: str,
        line: int,
        column: int,
        budget_s: float | None = None,
    ) -> Resolution | None:
        """Definitions of the identifier at (0-based `line`, `column` in str units) of `text`.

        None: this language is not resolved here, the fast path could not decide and jedi
        is missing, failed, or ran over the budget (a previous call still running counts as
        over: the lane is one thread). A jedi call past the budget still stores its answer.
        """
        if language not in RESOLVABLE_LANGUAGES:
            return None
        with self.foreground():
            found = self.fast(root, rel, language, text, line, column)
        if found is not None or language != "python" or not self.available():
            return found
        key: _JediKey = (str(root), rel, len(text), hash(text), line, column)
        with self._lock:
            if key in self._jedi_cache:
                self._jedi_cache.move_to_end(key)
                return self._jedi_cache[key]
            if self._busy is not None and not self._busy.done():
                return None
            fut = self._jedi().submit(_resolve_python, root, rel, text, line, column)
            self._busy = fut
        # Outside the lock: a call that already finished runs the callback here and now, and
        # _store takes the lock (held, this thread waited for itself and every request after
        # it for ever: a 10-minute replay hung so).
        fut.add_done_callback(functools.partial(self._store, key))
        try:
            return fut.result(timeout=self.budget_s if budget_s is None else budget_s)
        except FutureTimeout:
            return None
        except Exception:
            log.exception("jedi failed on %s:%d", rel, line + 1)
            return None

    def jedi_batch(
        self, root: Path, rel: str, text: str, positions: list[tuple[int, int]], timeout: float
    ) -> list[Resolution | None] | None:
        """jedi's answers for many (0-based) positions of one file, in one call on its
        process (background work: it waits while a hover's jedi call runs, and holds the lane
        for one file only); also kept for later hovers. None when jedi is missing, failed or
        ran out of time."""
        if not positions or not self.available():
            return None
        deadline = time.perf_counter() + timeout
        while True:
            with self._lock:
                if self._busy is None or self._busy.done():
                    fut = self._jedi().submit(_resolve_python_many, root, rel, text, positions)
                    self._busy = fut
                    break
            if time.perf_counter() > deadline:
                return None
            time.sleep(0.01)
        try:
            answers: list[Resolution | None] = fut.result(
                timeout=max(0.0, deadline - time.perf_counter())
            )
        except FutureTimeout:
            log.warning("jedi ran out of time on %d positions of %s", len(positions), rel)
            return None
        except Exception:
            log.warning("jedi failed on %s", rel, exc_info=True)
            return None
        for (line, column), res in zip(positions, answers, strict=True):
            self.remember((str(root), rel, len(text), hash(text), line, column), res)
        return answers

    def _jedi(self) -> ProcessPoolExecutor:
        """jedi's own process (called with the lock held): its inference is pure Python and
        would otherwise take the GIL from the hovers it is meant to refine."""
        if self._lane is None:
            self._lane = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=watch_parent,  # a SIGTERM/SIGKILL of the server must not leave it
                initargs=(os.getpid(),),
            )
        return self._lane

    def _store(self, key: _JediKey, fut: Future[Resolution | None]) -> None:
        try:
            res = fut.result()
        except Exception:  # a crashed or cancelled worker: nothing to remember
            log.warning("jedi failed on %s:%d", key[1], key[4] + 1, exc_info=True)
            return
        self.remember(key, res)

    def remember(self, key: _JediKey, res: Resolution | None) -> None:
        with self._lock:
            self._jedi_cache[key] = res
            self._jedi_cache.move_to_end(key)
            while len(self._jedi_cache) > JEDI_CACHE_ENTRIES:
                self._jedi_cache.popitem(last=False)

    def wait_idle(self, timeout: float) -> None:
        """Let a call that ran over the budget finish (benchmarks, tests)."""
        busy = self._busy
        if busy is not None:
            try:
                busy.result(timeout=timeout)
            except Exception:  # the caller already fell back; only the waiting matters
                return
            time.sleep(0.01)  # the done-callback that caches the answer runs just after

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """A request is resolving: background resolution pauses meanwhile (a parse on a
        background thread would hold the GIL the request needs), and no garbage collection
        starts. Once done, what it parsed is frozen (see gc_pacer: full collections would
        walk every cached tree, and the next request would wait for them)."""
        self.pacer.touch()
        with self._lock:
            self._foreground += 1
            if not self._gc_held:  # else a request just ended and has not re-enabled it yet
                self._gc_was_enabled = gc.isenabled()
                self._gc_held = True
                gc.disable()
        try:
            yield
        finally:
            self.pacer.touch()
            with self._lock:
                self._foreground -= 1
                last = self._foreground == 0
            # Freeze what the request parsed before a collection may start (outside the
            # lock: the threads waiting on it need not wait for this too).
            try:
                if last:
                    self.pacer.settle()
            finally:
                with self._lock:
                    if self._foreground == 0 and self._gc_held:
                        self._gc_held = False
                        if self._gc_was_enabled:
                            gc.enable()

    def wait_for_foreground(self, timeout: float = 1.0) -> None:
        """Background work: wait (up to `timeout`) while a request is resolving. Called
        between parses, so what the last one cached is frozen here too."""
        self.pacer.settle()
        deadline = time.perf_counter() + timeout
        while self._foreground and time.perf_counter() < deadline:
            time.sleep(0.002)

    def on_close(self, fn: Callable[[], None]) -> None:
        """Call `fn` when the resolver closes (work that uses it stops with it)."""
        self._on_close.append(fn)

    def close(self) -> None:
        self.pacer.close()
        for fn in self._on_close:
            fn()
        if self._lane is not None:
            self._lane.shutdown(wait=False, cancel_futures=True)
        self._warmer.shutdown(wait=False, cancel_futures=True)


_SHARED: weakref.WeakKeyDictionary[object, SymbolResolver] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_resolver(owner: object) -> SymbolResolver:
    """One resolver per server (hover and code lens share its caches and jedi's process)."""
    with _SHARED_LOCK:
        found = _SHARED.get(owner)
        if found is None:
            found = _SHARED[owner] = SymbolResolver()
        return found


def close_shared_resolver(owner: object) -> None:
    """Stop the server's resolver (and jedi's process) if it has one: at shutdown."""
    with _SHARED_LOCK:
        found = _SHARED.pop(owner, None)
    if found is not None:
        found.close()


_PROJECTS: dict[Path, Any] = {}  # jedi's process: root -> jedi.Project (caches sys.path)


def _project(root: Path) -> Any:
    import jedi

    proj = _PROJECTS.get(root)
    if proj is None:
        # The workspace root and its src/ layout at the front of the path: `import flask`
        # inside flask's own repository must resolve to the workspace, not to a copy in
        # site-packages (jedi's `added_sys_path` goes after site-packages, where a package
        # installed beside the server, or released, would shadow the code being read).
        extra = [str(p) for p in (root / "src", root / "lib") if p.is_dir()]
        base = [p for p in jedi.get_default_environment().get_sys_path() if p]
        proj = jedi.Project(root, sys_path=[*extra, *base], smart_sys_path=True)
        _PROJECTS[root] = proj
    return proj


def _script(root: Path, rel: str, text: str) -> Any:
    """A jedi script in jedi's process, parso's cache bounded between calls, never during one.

    parso prunes its cache while it parses (past 600 files, what was unused for 10 minutes),
    and a parse loaded from its disk cache keeps the last-use time it was saved with, so a
    module loaded a moment ago can be dropped before jedi reads it back: KeyError, and the
    position loses jedi's answer (seen twenty times in a ten-minute Django navigation)."""
    import jedi
    import parso.cache

    parso.cache._CACHED_SIZE_TRIGGER = sys.maxsize
    if sum(len(v) for v in parso.cache.parser_cache.values()) > PARSO_CACHE_FILES:
        parso.cache.parser_cache.clear()
    return jedi.Script(text, path=str(root / rel), project=_project(root))


def _warm_jedi(root: Path, rel: str, text: str) -> None:
    try:
        _script(root, rel, text).get_names()
    except Exception:  # warming is best effort; the request path reports real failures
        log.debug("jedi could not warm %s", rel, exc_info=True)


def _resolve_python(root: Path, rel: str, text: str, line: int, column: int) -> Resolution | None:
    """In jedi's process."""
    return _answer(_script(root, rel, text), root, rel, text, line, column)


def _answer(
    script: Any, root: Path, rel: str, text: str, line: int, column: int
) -> Resolution | None:
    names = script.goto(line + 1, column, follow_imports=True)
    if not names:
        # goto finds nothing for some attribute chains jedi can still infer.
        names = script.infer(line + 1, column)
    if not names:
        return None
    root_resolved = root.resolve()
    targets: list[Target] = []
    outside = ""
    for n in names:
        path = n.module_path
        rel_def = _inside(root_resolved, Path(path)) if path is not None else None
        if rel_def is None or n.in_builtin_module() or n.line is None:
            outside = outside or (n.full_name or n.name)
            continue
        targets.append(_target(n, rel_def, text if rel_def == rel else None))
    return Resolution(tuple(dedupe(targets)), "" if targets else outside)


def _resolve_python_many(
    root: Path, rel: str, text: str, positions: list[tuple[int, int]]
) -> list[Resolution | None]:
    """In jedi's process: one file's positions, one parse."""
    script = _script(root, rel, text)
    out: list[Resolution | None] = []
    for line, column in positions:
        try:
            out.append(_answer(script, root, rel, text, line, column))
        except Exception:  # one position jedi chokes on leaves the others answered
            out.append(None)
    return out


def _inside(root: Path, path: Path) -> str | None:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _target(n: Any, rel: str, text: str | None) -> Target:
    line_text = raw_line = ""
    try:
        source = text if text is not None else Path(n.module_path).read_text(encoding="utf-8")
        lines = source.split("\n")
        if 0 < n.line <= len(lines):
            raw_line = lines[n.line - 1]
            line_text = raw_line.strip()
    except (OSError, UnicodeDecodeError):
        pass
    doc = ""
    if n.type in ("function", "class", "module"):
        try:
            doc = doc_summary(n.docstring(raw=True))
        except Exception:  # jedi raises assorted errors on odd code; the doc is optional
            doc = ""
    try:
        local = n.type in ("statement", "param") and n.parent().type == "function"
    except Exception:  # parent() fails on some synthesized names
        local = n.type == "param"
    if local and 0 < n.column <= len(raw_line) and raw_line[n.column - 1] == ".":
        local = False  # `self.x = …` inside a method: an attribute, not a local
    return Target(
        local=local,
        path=rel,
        line=n.line,
        column=n.column,
        name=n.name,
        kind=n.type,
        full_name=n.full_name or "",
        signature=line_text,
        doc_summary=doc,
    )
