"""What a resolved identifier names: records shared by the resolvers and their callers."""

from __future__ import annotations

from dataclasses import dataclass

# Import, re-export and base-class hops a resolver follows before giving up (cycles, long
# re-export chains); every language's resolver reads this one.
MAX_FOLLOW = 12


@dataclass(frozen=True, slots=True)
class Target:
    """One definition inside the workspace."""

    path: str  # workspace-relative
    line: int  # 1-based line of the name
    column: int  # 0-based column of the name
    name: str
    kind: str  # function | class | module | instance | statement | param | ...
    full_name: str  # dotted ("flask.globals.request"); may be ""
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


def doc_summary(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    if not doc:
        return ""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


def dedupe(targets: list[Target]) -> list[Target]:
    seen: set[tuple[str, int]] = set()
    out: list[Target] = []
    for t in targets:
        if (t.path, t.line) not in seen:
            seen.add((t.path, t.line))
            out.append(t)
    return out
