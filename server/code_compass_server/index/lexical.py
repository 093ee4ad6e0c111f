"""The Tantivy BM25 index of one project: code-aware fields, filters, batched commits.

One writer per index, also across processes (Tantivy's lock file): a second process opens the
index read-only. Documents are deleted by the raw `path` term, so re-indexing a file is
delete-by-path + add, inside the same commit.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

import tantivy

from code_compass_server.constants import TANTIVY_WRITER_HEAP, TANTIVY_WRITER_THREADS
from code_compass_server.index.tokens import (
    WORDS_TOKENIZER,
    code_terms,
    identifier_parts,
    identifiers,
    is_stop_word,
    is_underscored,
    path_terms,
    register_tokenizers,
    stem_words,
    symbol_terms,
    word_stem,
    words_analyzer,
)

log = logging.getLogger(__name__)

# Field boosts: a match on a symbol name or path says more than one in a body.
BOOST_BODY = 1.0  # a query word as written
BOOST_STEM = 0.6  # another form of it ("parsing" for `parse`)
BOOST_WHOLE = 1.0  # a snake_case identifier of the query, whole
BOOST_PART = 0.5  # a query word as a camelCase part (`parseConfig` for "config")
BOOST_SYMBOL = 3.0  # a query identifier is a definition's name
BOOST_SYMBOL_PART = 1.5  # a query word is part of a definition's name
BOOST_PATH = 1.2  # a query word names a directory or file
# Word forms: stems shorter than this are not expanded (too many unrelated words share them);
# at most this many indexed words are looked at per stem (most frequent first).
STEM_MIN_CHARS = 3
STEM_MAX_VARIANTS = 200
STEM_MAX_SUFFIX = 8  # Snowball strips at most about this much ("-izations"): skip longer words
STEM_CACHE_SIZE = 4096
_FIELD_TOKENIZER = {
    "body": WORDS_TOKENIZER,  # every word of the chunk (simple tokenizer)
    "code": "whitespace",  # tokens.code_terms: snake_case wholes, camelCase parts
    "symbol": "whitespace",  # tokens.symbol_terms
    "path_parts": "whitespace",  # tokens.path_terms
}


class IndexBusyError(RuntimeError):
    """Another process holds this index's writer lock."""


class LexicalReadError(RuntimeError):
    """Tantivy failed to answer (a damaged segment file panics): the index needs a repair."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """A read that fails reports the damage once (`on_failure`) and raises LexicalReadError:
    tantivy's PanicException is a BaseException that no front door would catch."""

    @functools.wraps(method)
    def read(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            self = args[0]
            assert isinstance(self, LexicalIndex)
            reason = f"lexical index failed a read ({type(exc).__name__}: {exc})"[:300]
            self.report_failure(reason)
            raise LexicalReadError(reason) from exc

    return read


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    chunk_id: str
    path: str
    language: str
    category: str
    symbol: str
    text: str
    code: str | None = None  # tokens.code_terms(text), precomputed by the parse workers


@dataclass(frozen=True, slots=True)
class LexicalHit:
    chunk_id: str
    bm25: float


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("path", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("language", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("category", tokenizer_name="raw", index_option="basic")
    for name, tok in _FIELD_TOKENIZER.items():
        sb.add_text_field(name, tokenizer_name=tok, index_option="freq")
    return sb.build()


def body_words(text: str) -> list[str]:
    """Words of a text as the body field holds them."""
    return list(words_analyzer().analyze(text))


def weighted_terms(
    query: str, stems: list[str], forms: Callable[[str], tuple[str, ...]]
) -> dict[tuple[str, str], float]:
    """The query's (field, term) -> summed boost (the BOOST_* constants): what BM25 scores.
    `forms(stem)` gives the indexed body words of a stem. One definition for both backends
    (Tantivy here, the team index's SQL in team/lexical_sql.py)."""
    boosts: dict[tuple[str, str], float] = {}

    def add(field: str, term: str, boost: float) -> None:
        boosts[field, term] = boosts.get((field, term), 0.0) + boost

    for word in body_words(query):
        if not is_stop_word(word):  # long posting lists that order nothing
            add("body", word, BOOST_BODY)
    wholes = [i.lower() for i in identifiers(query)]
    parts = identifier_parts(query)
    for whole in wholes:
        if is_underscored(whole):
            add("code", whole, BOOST_WHOLE)
        add("symbol", whole, BOOST_SYMBOL)
    for part in parts:
        add("code", part, BOOST_PART)
        add("symbol", part, BOOST_SYMBOL_PART)
        add("path_parts", part, BOOST_PATH)
    for stem in stems:
        for form in forms(stem):
            add("body", form, BOOST_STEM)
    return boosts


def stem_forms_of(stem: str, prefix_walk: Callable[[str], Iterable[str]]) -> tuple[str, ...]:
    """Indexed body words whose stem is `stem` ("pars" -> parse, parsed, parsing), found by
    walking the vocabulary under the stem's prefixes (`prefix_walk(prefix)`)."""
    found: list[str] = []
    if len(stem) >= STEM_MIN_CHARS:
        prefixes = [stem, stem[:-1] + "y"] if stem.endswith("i") else [stem]  # queri: query
        for prefix in prefixes:
            found.extend(
                word
                for word in prefix_walk(prefix)
                if len(word) <= len(stem) + STEM_MAX_SUFFIX and word_stem(word) == stem
            )
    return tuple(found)


class LexicalIndex:
    def __init__(self, directory: Path, *, read_only: bool = False) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(directory), reuse=True)
        register_tokenizers(self.index)
        self._lock = threading.Lock()
        self._writer: tantivy.IndexWriter | None = None
        # stem -> indexed word forms; replaced whole (never under _lock: a search must not
        # wait for the writer's commit, which holds _lock for up to a second on big batches)
        self._forms: dict[str, tuple[str, ...]] = {}
        self.read_only = read_only
        # Why a read failed (first failure only), and who hears of it (the project: it asks
        # the writer for a repair).
        self.failure = ""
        self.on_failure: Callable[[str], None] | None = None
        if not read_only:
            self._open_writer()

    def report_failure(self, reason: str) -> None:
        if self.failure:
            return
        self.failure = reason
        log.error("%s: %s", self.directory, reason)
        if self.on_failure is not None:
            try:
                self.on_failure(reason)
            except Exception:
                log.exception("lexical failure listener failed")

    def _open_writer(self) -> None:
        try:
            self._writer = self.index.writer(TANTIVY_WRITER_HEAP, TANTIVY_WRITER_THREADS)
        except ValueError as exc:  # the lock file is held by another process
            raise IndexBusyError(str(exc)) from exc
        # A writer killed mid-commit leaves segment and delete files that no meta.json
        # references; the next writer restarts from the committed opstamp and would collide
        # with them (FileAlreadyExists on `<segment>.<opstamp>.del`). Only the lock holder may
        # remove them, so this runs right after taking the lock.
        try:
            self._writer.garbage_collect_files()
        except Exception as exc:  # a failed sweep must not stop indexing
            log.warning("tantivy: removing orphan files failed: %s", exc)
        self.read_only = False

    def try_upgrade(self) -> bool:
        """A read-only index takes the writer once the other process has let it go."""
        if not self.read_only:
            return True
        try:
            self._open_writer()
        except IndexBusyError:
            return False
        self.index.reload()
        return True

    # --- writing (one writer thread at a time; searches never wait on it) ---
    def replace_paths(self, paths: Iterable[str], docs: Iterable[LexicalDoc]) -> None:
        writer = self._require_writer()
        with self._lock:
            for path in paths:
                writer.delete_documents_by_term("path", path)
            for d in docs:
                writer.add_document(self._document(d))

    def commit(self) -> None:
        writer = self._require_writer()
        with self._lock:
            writer.commit()
        self.index.reload()
        self._forms = {}  # after the reload: forms are looked up in the new snapshot

    def _require_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise IndexBusyError("index opened read-only")
        return self._writer

    @staticmethod
    def _document(d: LexicalDoc) -> tantivy.Document:
        return tantivy.Document(
            chunk_id=d.chunk_id,
            path=d.path,
            language=d.language,
            category=d.category,
            body=d.text,
            code=code_terms(d.text) if d.code is None else d.code,
            symbol=symbol_terms(d.symbol),
            path_parts=path_terms(d.path),
        )

    # --- reading ---
    @_guarded
    def reload(self) -> None:
        self.index.reload()
        self._forms = {}

    @_guarded
    def num_docs(self) -> int:
        return int(self.index.searcher().num_docs)

    @_guarded
    def search(
        self,
        query: str,
        limit: int,
        *,
        path_prefix: str | None = None,
        language: str | None = None,
        categories: tuple[str, ...] | None = None,
    ) -> list[LexicalHit]:
        stems = self.query_words(query)
        if not stems:
            return []
        searcher = self.index.searcher()
        text_q = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in self._clauses(query, stems, searcher)]
        )
        query_obj = self._filtered(text_q, path_prefix, language, categories)
        result = searcher.search(query_obj, limit, count=False)
        hits: list[LexicalHit] = []
        for score, addr in result.hits:
            doc = searcher.doc(addr)
            hits.append(LexicalHit(chunk_id=doc["chunk_id"][0], bm25=float(score)))
        return hits

    def _clauses(
        self, query: str, stems: list[str], searcher: tantivy.Searcher
    ) -> list[tantivy.Query]:
        """One boosted term clause per (field, term) (weights: `weighted_terms`). Only term
        clauses: Tantivy then prunes with block-max WAND (a disjunction-max clause for the word
        forms measured ~2x slower: it scores every matching document)."""
        boosts = weighted_terms(query, stems, lambda stem: self._stem_forms(searcher, stem))
        return [self._term(f, t, b) for (f, t), b in boosts.items()]

    def _term(self, field: str, term: str, boost: float) -> tantivy.Query:
        return tantivy.Query.boost_query(tantivy.Query.term_query(self.schema, field, term), boost)

    def _stem_forms(self, searcher: tantivy.Searcher, stem: str) -> tuple[str, ...]:
        """The indexed body words whose stem is `stem` ("pars" -> parse, parsed, parsing):
        stemming at query time against the index's own vocabulary costs a few term-dictionary
        walks per query instead of a second, stemmed copy of every body (~1.5x index time).
        Cached until the next commit or reload."""
        forms = self._forms.get(stem)
        if forms is not None:
            return forms
        forms = stem_forms_of(
            stem,
            lambda prefix: (
                word
                for word, _n in searcher.terms_with_prefix("body", prefix, limit=STEM_MAX_VARIANTS)
            ),
        )
        cache = self._forms
        if len(cache) >= STEM_CACHE_SIZE:
            self._forms = cache = {}
        cache[stem] = forms
        return forms

    def _identifier_query(self, name: str) -> tantivy.Query:
        """An identifier as a whole token: snake_case ones live whole in `code`, any other is
        one body word."""
        name = _dollar_free(name)
        field = "code" if is_underscored(name) else "body"
        return tantivy.Query.term_query(self.schema, field, name.lower())

    @_guarded
    def count(self, term: str, *, categories: tuple[str, ...] | None = None) -> int:
        query_obj = self._filtered(self._identifier_query(term), None, None, categories)
        # limit >= 1: tantivy 0.27's binding panics on a zero limit; the count ignores it.
        result = self.index.searcher().search(query_obj, 1, count=True)
        return int(getattr(result, "count", 0) or 0)

    @_guarded
    def word_count(self, word: str) -> int:
        """Chunks holding a body word, or any indexed form of its stem ("registers" counts
        "register", "registered"): how common a question's word is here, and whether it is
        here at all."""
        n = self.count(word)
        if n:
            return n
        forms = self._stem_forms(self.index.searcher(), word_stem(word.lower()))
        return sum(self.count(f) for f in forms[:4])

    @_guarded
    def term_hits(
        self, term: str, limit: int, *, categories: tuple[str, ...] | None = None
    ) -> list[LexicalHit]:
        """Chunks containing an identifier as a whole token (hover evidence, code-lens lists)."""
        query_obj = self._filtered(self._identifier_query(term), None, None, categories)
        searcher = self.index.searcher()
        result = searcher.search(query_obj, limit, count=False)
        return [LexicalHit(searcher.doc(a)["chunk_id"][0], float(s)) for s, a in result.hits]

    def _filtered(
        self,
        q: tantivy.Query,
        path_prefix: str | None,
        language: str | None,
        categories: tuple[str, ...] | None,
    ) -> tantivy.Query:
        musts: list[tuple[tantivy.Occur, tantivy.Query]] = [(tantivy.Occur.Must, q)]
        if path_prefix:
            rx = re.escape(path_prefix) + ".*"
            musts.append((tantivy.Occur.Must, tantivy.Query.regex_query(self.schema, "path", rx)))
        if language:
            musts.append(
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "language", language))
            )
        if categories:
            cats = [
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "category", c))
                for c in categories
            ]
            musts.append((tantivy.Occur.Must, tantivy.Query.boolean_query(cats)))
        return musts[0][1] if len(musts) == 1 else tantivy.Query.boolean_query(musts)

    @staticmethod
    def query_words(query: str) -> list[str]:
        return list(dict.fromkeys(stem_words(query)))

    def close(self) -> None:
        with self._lock:
            self._writer = None  # dropping the writer releases the lock file


_DOLLAR_FREE = re.compile(r"[^$]+")


def _dollar_free(name: str) -> str:
    """`$mobx` is indexed as `mobx`: a name with a `$` is looked up by its longest part (the
    caller then scans the passages for the whole name); `$` alone stays as it is."""
    if "$" not in name:
        return name
    return max(_DOLLAR_FREE.findall(name), key=len, default=name)
