"""One project = one workspace root with its own isolated stores (catalog, lexical, vectors).

Opening checks the index format version and the stores' health; anything off means a clean
rebuild, and the reason is reported as `rebuilt`.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from code_compass.constants import INDEX_FORMAT_VERSION
from code_compass.index.catalog import Catalog
from code_compass.index.lexical import IndexBusyError, LexicalIndex

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Project:
    name: str
    root: Path
    directory: Path
    catalog: Catalog
    lexical: LexicalIndex
    read_only: bool = False
    rebuilt: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def open(cls, name: str, root: Path, directory: Path) -> Project:
        reason = _health_problem(directory)
        if reason:
            log.warning("rebuilding index for %s: %s", root, reason)
            shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            catalog = Catalog(directory / "catalog.sqlite")
            read_only = False
            try:
                lexical = LexicalIndex(directory / "lexical")
            except IndexBusyError:
                # Another server holds the writer: serve what is committed, never write.
                lexical = LexicalIndex(directory / "lexical", read_only=True)
                read_only = True
        except Exception as exc:  # a half-written store that the checks did not catch
            if reason:
                raise
            log.warning("index for %s did not open (%s); rebuilding", root, exc)
            shutil.rmtree(directory, ignore_errors=True)
            return cls.open(name, root, directory)
        if catalog.get_meta("format_version") is None and not read_only:
            catalog.set_meta("format_version", str(INDEX_FORMAT_VERSION))
            catalog.set_meta("root", str(root))
        return cls(name, root, directory, catalog, lexical, read_only, reason)

    def try_upgrade(self) -> bool:
        if self.read_only and self.lexical.try_upgrade():
            self.read_only = False
        return not self.read_only

    def close(self) -> None:
        self.lexical.close()
        self.catalog.close()


def _health_problem(directory: Path) -> str:
    """Why an existing index folder can't be trusted, or '' if it can (or doesn't exist yet)."""
    db = directory / "catalog.sqlite"
    if not directory.exists() or not db.exists():
        return ""
    try:
        cat = Catalog(db)
        try:
            version = cat.get_meta("format_version")
            if version != str(INDEX_FORMAT_VERSION):
                return f"index format {version} != {INDEX_FORMAT_VERSION}"
            if not cat.check():
                return "catalog failed its integrity check"
        finally:
            cat.close()
    except Exception as exc:
        return f"catalog unreadable ({exc})"
    if not (directory / "lexical" / "meta.json").exists():
        return "lexical index missing"
    return ""
