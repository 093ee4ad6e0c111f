"""Cheap checks of one project's stores, and the repairs only the writer may make.

What is checked is what costs little on a big index: the catalog opens, has our format and
passes SQLite's quick check (writer only: it reads every page); Tantivy opens and answers a
probe (a few term queries on every text field and a stored document: a damaged term
dictionary, posting list or doc store panics there); Tantivy's document count matches the
catalog's chunk count after a run. Vectors against the `embedded` flags are reconciled by the
embeddings (embed/project_link.py).

The quick check and the probe (about 0.3 s on Django) run when a process becomes the writer,
unless the last writer closed cleanly and no store file changed since (`take_clean_close`): a
kill, a crash or a damaged file brings them back; rot that keeps a file's size and mtime does
not, until the next unclean close.

A failed check is repaired once, by the holder of the writer lock (index/writer_lock.py), and
the reason is reported as the project's `rebuilt`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from pathlib import Path

import tantivy

from code_compass_server.constants import INDEX_FORMAT_VERSION
from code_compass_server.index.catalog import Catalog
from code_compass_server.index.lexical import LexicalDoc, LexicalIndex
from code_compass_server.index.shared_buffers import BUFFERS_DIR
from code_compass_server.index.writer_lock import WRITER_LOCK_FILE

log = logging.getLogger(__name__)

CATALOG_FILE = "catalog.sqlite"
LEXICAL_DIR = "lexical"
# Written by a writer that closed its stores; its absence means the last writer died (or is
# still running), and the next writer runs the thorough checks.
CLEAN_CLOSE_FILE = "clean-close.json"
_PROBE_TERMS = 3  # indexed terms per field tried by the probe
_PROBE_FIELDS = ("body", "code", "symbol", "path_parts", "path", "chunk_id")
_REBUILD_BATCH = 2_000  # catalog chunks per read while Tantivy is rebuilt from it
# Files of the folder a repair keeps: the lock (held by the repairer itself) and the editor
# buffers another process publishes (not index data).
_KEEP = {WRITER_LOCK_FILE, BUFFERS_DIR}


def catalog_problem(directory: Path, *, thorough: bool) -> str:
    """Why an existing index folder can't be trusted, or '' if it can (or is new).

    `thorough` adds SQLite's quick check (reads the whole file: writer only)."""
    db = directory / CATALOG_FILE
    if not db.exists():
        if any((directory / LEXICAL_DIR).glob("*.idx")):
            return "catalog missing while the lexical index holds documents"
        return ""
    try:
        cat = Catalog(db)
        try:
            version = cat.get_meta("format_version")
            files = cat.counts()["files"]
            if version is None and files == 0:
                if any((directory / LEXICAL_DIR).glob("*.idx")):
                    return "catalog empty while the lexical index holds documents"
                return ""  # created a moment ago (by us or by another process): new
            if version != str(INDEX_FORMAT_VERSION):
                return f"index format {version} != {INDEX_FORMAT_VERSION}"
            if thorough and not cat.check():
                return "catalog failed its integrity check"
        finally:
            cat.close()
    except Exception as exc:
        return f"catalog unreadable ({type(exc).__name__}: {exc})"
    if files and not (directory / LEXICAL_DIR / "meta.json").exists():
        return "lexical index missing"
    return ""


def clear_folder(directory: Path) -> None:
    """Remove every store of the folder (writer only), keeping the lock and shared buffers."""
    if not directory.exists():
        return
    for entry in directory.iterdir():
        if entry.name in _KEEP:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def lexical_problem(lexical: LexicalIndex) -> str:
    """'' if Tantivy answers a probe on every field and returns a stored document."""
    try:
        lexical.reload()
        searcher = lexical.index.searcher()
        if searcher.num_docs == 0:
            return ""
        for field in _PROBE_FIELDS:
            terms = [t for t, _n in searcher.terms_with_prefix(field, "", limit=_PROBE_TERMS)]
            for term in terms:
                q = tantivy.Query.term_query(lexical.schema, field, term)
                result = searcher.search(q, 2, count=True)
                for _score, addr in result.hits:
                    searcher.doc(addr)["chunk_id"][0]
        hits = searcher.search(tantivy.Query.all_query(), 1).hits
        for _score, addr in hits:
            searcher.doc(addr)["chunk_id"][0]
    except BaseException as exc:  # tantivy's PanicException is a BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return f"lexical index failed its probe ({type(exc).__name__}: {exc})"[:300]
    return ""


def lexical_paths(lexical: LexicalIndex) -> set[str]:
    """Every path Tantivy holds documents of (one term-dictionary walk)."""
    searcher = lexical.index.searcher()
    n = max(1, int(searcher.num_docs))
    return {str(t) for t, _n in searcher.terms_with_prefix("path", "", limit=n)}


def orphan_paths(lexical: LexicalIndex, catalog: Catalog) -> list[str]:
    """Paths Tantivy has documents of that the catalog does not list: a writer killed between
    its Tantivy commit and its catalog transaction. A file still on disk is indexed again by the
    next run; one that is gone would stay searchable for ever."""
    counts = catalog.counts()
    if lexical.num_docs() == counts["chunks"]:
        return []
    known = set(catalog.files())
    return sorted(p for p in lexical_paths(lexical) if p not in known)


def rebuild_lexical(directory: Path, catalog: Catalog) -> LexicalIndex:
    """A fresh Tantivy index filled from the catalog's chunks (writer only). The caller closed
    the old index; the returned one holds the writer."""
    folder = directory / LEXICAL_DIR
    shutil.rmtree(folder, ignore_errors=True)
    lexical = LexicalIndex(folder)
    after = ""
    while True:
        rows = catalog._query(
            "SELECT id, path, language, category, symbol, text FROM chunks WHERE id > ?"
            " ORDER BY id LIMIT ?",
            (after, _REBUILD_BATCH),
        )
        if not rows:
            break
        docs = [LexicalDoc(*(str(v) for v in r)) for r in rows]
        lexical.replace_paths([], docs)
        after = docs[-1].chunk_id
    lexical.commit()
    log.warning(
        "%s: lexical index rebuilt from the catalog (%d docs)", directory, lexical.num_docs()
    )
    return lexical


def _store_stamps(directory: Path) -> dict[str, list[int]]:
    """(size, mtime_ns) of the catalog and of every Tantivy file: what a clean close vouches
    for. The catalog's -wal and -shm are left out: a reader opening it creates them."""
    stamps: dict[str, list[int]] = {}
    files = [directory / CATALOG_FILE]
    lexical = directory / LEXICAL_DIR
    if lexical.is_dir():
        files += sorted(p for p in lexical.iterdir() if p.is_file())
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        stamps[path.relative_to(directory).as_posix()] = [st.st_size, st.st_mtime_ns]
    return stamps


def record_clean_close(directory: Path) -> None:
    """The writer closed its stores (catalog and Tantivy committed and closed): remember how they
    looked, so the next writer can skip the thorough checks (writer only)."""
    tmp = directory / f"{CLEAN_CLOSE_FILE}.tmp"
    try:
        tmp.write_text(json.dumps(_store_stamps(directory)), encoding="utf-8")
        os.replace(tmp, directory / CLEAN_CLOSE_FILE)
    except OSError as exc:  # then the next writer checks thoroughly: slower, never wrong
        log.info("%s: clean close not recorded (%s)", directory, exc)


def closed_cleanly(directory: Path) -> bool:
    """Whether the last writer left its clean-close record (read-only: nothing consumed)."""
    return (directory / CLEAN_CLOSE_FILE).is_file()


def take_clean_close(directory: Path) -> bool:
    """True if the last writer closed cleanly and no store file changed since; the record is
    consumed, so a writer that dies from now on leaves none (writer only)."""
    path = directory / CLEAN_CLOSE_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    return isinstance(recorded, dict) and recorded == _store_stamps(directory)
