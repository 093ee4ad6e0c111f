"""The definition an identifier really names, as its language resolves it (Python: jedi).

Hover and code lens used to match *names*; this module resolves the symbol at a position the
way the language does: local scopes and parameters, imports (aliased, relative, re-exported),
`self.x` attributes, module-level globals. Names defined outside the workspace (builtins,
stdlib, third-party) resolve to "outside" with their full name, never to a workspace
definition that merely shares the name.

jedi is not thread-safe and is slow on first use, so every call runs on one dedicated thread
within a time budget; past the budget (or when jedi fails) the caller gets `None` and falls back
to the name lookup, labelled as such. A call that ran over keeps going in the background and
warms jedi's caches for the next hover.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_compass.constants import RESOLVE_BUDGET_S

log = logging.getLogger(__name__)

RESOLVABLE_LANGUAGES = frozenset({"python"})


@dataclass(frozen=True, slots=True)
class Target:
    """One definition inside the workspace."""

    path: str  # workspace-relative
    line: int  # 1-based line of the name
    column: int  # 0-based column of the name
    name: str
    kind: str  # jedi's type: function | class | module | instance | statement | param | ...
    full_name: str  # dotted, as jedi names it ("flask.globals.request"); may be ""
    signature: str  # the definition's first line (or jedi's signature for callables)
    doc_summary: str  # first paragraph of the docstring, "" if none
    local: bool = False  # bound inside a function (a local or a parameter)


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the identifier names: workspace definitions, or a name from outside."""

    targets: tuple[Target, ...]  # in the workspace, best first; empty when outside/unknown
    outside: str  # full name when defined outside the workspace ("json.dumps"), else ""

    @property
    def is_outside(self) -> bool:
        return not self.targets and bool(self.outside)


class SymbolResolver:
    """Resolves positions in Python sources with jedi, one thread, within a time budget."""

    def __init__(self, budget_s: float = RESOLVE_BUDGET_S) -> None:
        self.budget_s = budget_s
        self._lane = ThreadPoolExecutor(1, thread_name_prefix="cc-resolve")
        self._projects: dict[Path, Any] = {}  # root -> jedi.Project (caches sys.path scan)
        self._busy: Future[Resolution | None] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        try:
            import jedi  # noqa: F401
        except ImportError:
            return False
        return True

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

        None: this language is not resolved here, jedi is missing or failed, or it ran over the
        budget (a previous call still running counts as over: the lane is one thread).
        """
        if language not in RESOLVABLE_LANGUAGES or not self.available():
            return None
        with self._lock:
            if self._busy is not None and not self._busy.done():
                return None
            fut = self._lane.submit(_resolve_python, self, root, rel, text, line, column)
            self._busy = fut
        try:
            return fut.result(timeout=self.budget_s if budget_s is None else budget_s)
        except FutureTimeout:
            return None
        except Exception:
            log.exception("jedi failed on %s:%d", rel, line + 1)
            return None

    def wait_idle(self, timeout: float) -> None:
        """Let a call that ran over the budget finish (benchmarks, tests)."""
        busy = self._busy
        if busy is not None:
            try:
                busy.result(timeout=timeout)
            except Exception:  # the caller already fell back; only the waiting matters
                return

    def project(self, root: Path) -> Any:
        import jedi

        proj = self._projects.get(root)
        if proj is None:
            # The workspace root and its src/ layout on the path: `import flask` inside
            # flask's own repository must resolve to the workspace, not to site-packages.
            extra = [str(p) for p in (root / "src", root / "lib") if p.is_dir()]
            proj = jedi.Project(root, added_sys_path=extra, smart_sys_path=True)
            self._projects[root] = proj
        return proj

    def close(self) -> None:
        self._lane.shutdown(wait=False, cancel_futures=True)


def _resolve_python(
    resolver: SymbolResolver, root: Path, rel: str, text: str, line: int, column: int
) -> Resolution | None:
    import jedi

    script = jedi.Script(text, path=str(root / rel), project=resolver.project(root))
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
    return Resolution(tuple(_dedupe(targets)), "" if targets else outside)


def _inside(root: Path, path: Path) -> str | None:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _target(n: Any, rel: str, text: str | None) -> Target:
    line_text = ""
    try:
        source = text if text is not None else Path(n.module_path).read_text(encoding="utf-8")
        lines = source.split("\n")
        if 0 < n.line <= len(lines):
            line_text = lines[n.line - 1].strip()
    except (OSError, UnicodeDecodeError):
        pass
    doc = ""
    if n.type in ("function", "class", "module"):
        try:
            doc = _summary(n.docstring(raw=True))
        except Exception:  # jedi raises assorted errors on odd code; the doc is optional
            doc = ""
    try:
        local = n.type in ("statement", "param") and n.parent().type == "function"
    except Exception:  # parent() fails on some synthesized names
        local = n.type == "param"
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


def _summary(doc: str) -> str:
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


def _dedupe(targets: list[Target]) -> list[Target]:
    seen: set[tuple[str, int]] = set()
    out: list[Target] = []
    for t in targets:
        if (t.path, t.line) not in seen:
            seen.add((t.path, t.line))
            out.append(t)
    return out
