"""Which folders are a Go package: the package clause says, not the folder's name.

A receiver like `jwt.WithAudience` names a package. In Python and TypeScript the package is
the folder (or module file) so named; in Go it is whatever folder's files say `package jwt`
— often the repository's root — while a folder named `jwt` may hold `package main` (a
`cmd/jwt` command). Read from the files themselves, the few a near miss's candidates are in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from code_compass_server.answer.source import EvidenceSource
from code_compass_server.records import SearchHit, SearchParams

_PROBE = 5  # Go passages looked at in a folder with none among the hits

# The clause comes first, after comments and build tags (which are comments).
_CLAUSE = re.compile(r"^(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*package\s+(\w+)", re.S)


def go_package_clause(text: str) -> str | None:
    """The package a Go file declares, or None if it has no clause."""
    m = _CLAUSE.match(text)
    return m.group(1) if m else None


def hit_folder(hit: SearchHit) -> tuple[str, str]:
    """(project, folder) of a hit: the unit a Go package is."""
    return hit.project, hit.path.rpartition("/")[0]


def foreign_go_folders(
    hits: Iterable[SearchHit], package: str, source: EvidenceSource
) -> set[tuple[str, str]]:
    """Folders of `hits` whose Go files declare another package than `package`: nothing in
    them is that package's (a README beside `package main` is the command's). A folder with
    no Go file among the hits is looked into for one; with none at all, the folder's name is
    all there is and it is not said foreign."""
    declared: dict[tuple[str, str], set[str]] = {}
    folders: set[tuple[str, str]] = set()
    for h in hits:
        folders.add(hit_folder(h))
        if h.path.endswith(".go"):
            _declare(declared, h, source)
    for project, folder in folders - declared.keys():
        probe = SearchParams(
            query="package", top_k=_PROBE, path_prefix=f"{folder}/" if folder else None,
            language="go", min_score=None, project=project, mode="lexical",
        )  # fmt: skip
        for h in source.search(probe):
            if hit_folder(h) == (project, folder):
                _declare(declared, h, source)
                break
    return {folder for folder, names in declared.items() if package not in names}


def _declare(
    declared: dict[tuple[str, str], set[str]], hit: SearchHit, src: EvidenceSource
) -> None:
    text = src.read_text(hit.project, hit.path)
    clause = go_package_clause(text) if text is not None else None
    if clause is not None:
        declared.setdefault(hit_folder(hit), set()).add(clause)
