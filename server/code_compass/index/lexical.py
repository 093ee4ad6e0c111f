"""The Tantivy BM25 index of one project: code-aware fields, filters, batched commits.

One writer per index, also across processes (Tantivy's lock file): a second process opens the
index read-only. Documents are deleted by the raw `path` term, so re-indexing a file is
delete-by-path + add, inside the same commit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import tantivy

from code_compass.constants import TANTIVY_WRITER_HEAP, TANTIVY_WRITER_THREADS
from code_compass.index.tokens import (
    BODY_STEM_TOKENIZER,
    IDENT_TOKENIZER,
    PARTS_TOKENIZER,
    STEM_TOKENIZER,
    WORDS_TOKENIZER,
    body_stem_analyzer,
    ident_analyzer,
    identifiers,
    is_compound,
    parts_analyzer,
    path_words,
    register_tokenizers,
    split_identifier,
    stem_analyzer,
    words_analyzer,
)

# Field boosts: a match on a symbol name or path says more than one in a body (issue 2 item 5).
FIELD_BOOSTS: dict[str, float] = {
    "body": 1.0,
    "ids": 1.0,
    "stem": 0.6,
    "extra": 0.5,
    "symbol": 3.0,
    "symbol_parts": 1.5,
    "path_parts": 1.2,
}
_ANALYZERS = {
    IDENT_TOKENIZER: ident_analyzer,
    PARTS_TOKENIZER: parts_analyzer,
    STEM_TOKENIZER: stem_analyzer,
    BODY_STEM_TOKENIZER: body_stem_analyzer,
    WORDS_TOKENIZER: words_analyzer,
}
_FIELD_TOKENIZER = {
    "body": WORDS_TOKENIZER,
    "ids": "whitespace",
    "stem": BODY_STEM_TOKENIZER,
    "extra": "whitespace",
    "symbol": IDENT_TOKENIZER,
    "symbol_parts": PARTS_TOKENIZER,
    "path_parts": PARTS_TOKENIZER,
}


class IndexBusyError(RuntimeError):
    """Another process holds this index's writer lock."""


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    chunk_id: str
    path: str
    language: str
    category: str
    symbol: str
    text: str
    extra: str = ""  # parts of camelCase identifiers (tokens.compound_terms)
    ids: str = ""  # whole compound identifiers, lowercased (tokens.compound_terms)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    chunk_id: str
    bm25: float
    matched_terms: int  # how many distinct query words the chunk contains (for calibration)


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("path", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("language", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("category", tokenizer_name="raw", index_option="basic")
    for name, tok in _FIELD_TOKENIZER.items():
        sb.add_text_field(name, tokenizer_name=tok, index_option="freq")
    return sb.build()


def analyze(text: str, tokenizer: str) -> list[str]:
    if tokenizer == "whitespace":
        return text.lower().split()
    return list(_ANALYZERS[tokenizer]().analyze(text))


class LexicalIndex:
    def __init__(self, directory: Path, *, read_only: bool = False) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(directory), reuse=True)
        register_tokenizers(self.index)
        self._lock = threading.Lock()
        self._writer: tantivy.IndexWriter | None = None
        self.read_only = read_only
        if not read_only:
            self._open_writer()

    def _open_writer(self) -> None:
        try:
            self._writer = self.index.writer(TANTIVY_WRITER_HEAP, TANTIVY_WRITER_THREADS)
        except ValueError as exc:  # the lock file is held by another process
            raise IndexBusyError(str(exc)) from exc
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
            stem=d.text,
            extra=d.extra,
            ids=d.ids,
            symbol=d.symbol,
            symbol_parts=d.symbol,
            path_parts=path_words(d.path),
        )

    # --- reading ---
    def reload(self) -> None:
        self.index.reload()

    def num_docs(self) -> int:
        return int(self.index.searcher().num_docs)

    def search(
        self,
        query: str,
        limit: int,
        *,
        path_prefix: str | None = None,
        language: str | None = None,
        categories: tuple[str, ...] | None = None,
    ) -> list[LexicalHit]:
        words = self.query_words(query)
        if not words:
            return []
        shoulds: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for field, tok in _FIELD_TOKENIZER.items():
            for term in self._query_terms(query, field, tok):
                q = tantivy.Query.term_query(self.schema, field, term)
                shoulds.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(q, FIELD_BOOSTS[field]))
                )
        if not shoulds:
            return []
        text_q = tantivy.Query.boolean_query(shoulds)
        query_obj = self._filtered(text_q, path_prefix, language, categories)
        searcher = self.index.searcher()
        result = searcher.search(query_obj, limit, count=False)
        hits: list[LexicalHit] = []
        for score, addr in result.hits:
            doc = searcher.doc(addr)
            hits.append(LexicalHit(chunk_id=doc["chunk_id"][0], bm25=float(score), matched_terms=0))
        return hits

    @staticmethod
    def _identifier_field(name: str) -> str:
        """Whole compound identifiers live in `ids`; one-word ones are body words."""
        return "ids" if is_compound(name) else "body"

    def count(self, term: str, *, categories: tuple[str, ...] | None = None) -> int:
        q = tantivy.Query.term_query(self.schema, self._identifier_field(term), term.lower())
        query_obj = self._filtered(q, None, None, categories)
        # limit >= 1: tantivy 0.27's binding panics on a zero limit; the count ignores it.
        result = self.index.searcher().search(query_obj, 1, count=True)
        return int(getattr(result, "count", 0) or 0)

    def term_hits(
        self, term: str, limit: int, *, categories: tuple[str, ...] | None = None
    ) -> list[LexicalHit]:
        """Chunks containing an identifier as a whole token (hover evidence, code-lens lists)."""
        q = tantivy.Query.term_query(self.schema, self._identifier_field(term), term.lower())
        searcher = self.index.searcher()
        result = searcher.search(self._filtered(q, None, None, categories), limit, count=False)
        return [LexicalHit(searcher.doc(a)["chunk_id"][0], float(s), 1) for s, a in result.hits]

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
    def _query_terms(query: str, field: str, tokenizer: str) -> list[str]:
        if field == "extra":  # Python-side camelCase splits
            return list(dict.fromkeys(w for i in identifiers(query) for w in split_identifier(i)))
        if field == "ids":  # whole compound identifiers
            return list(dict.fromkeys(i.lower() for i in identifiers(query) if is_compound(i)))
        return list(dict.fromkeys(analyze(query, tokenizer)))

    @staticmethod
    def query_words(query: str) -> list[str]:
        return list(dict.fromkeys(analyze(query, STEM_TOKENIZER)))

    def close(self) -> None:
        with self._lock:
            self._writer = None  # dropping the writer releases the lock file
