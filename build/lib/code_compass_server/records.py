"""Records that cross module boundaries (scan → chunk → index → search → answer)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

# A JSON object as the front doors send it (the answer, status): keys are the wire names.
JsonObject = dict[str, Any]


def text_hash(text: str) -> str:
    """Content hash used for chunks and the embedding cache (stable across renames)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable passage of a file.

    Lines are 1-based and inclusive; for PDFs start_line/end_line are page numbers.
    `symbol` is the qualified symbol name for code, the heading path for Markdown.
    """

    path: str  # workspace-relative, '/' separated
    start_line: int
    end_line: int
    language: str
    kind: str  # function | method | class | module | window | section | page | paragraph
    symbol: str
    text: str
    signature: str = ""
    doc: str = ""
    # What a reader of the chunk needs that its own lines do not show (index/chunk/context.py):
    # the enclosing class's signature, a class header's member list, the signature of a long
    # definition split into pieces. Read by the embedding only, never shown.
    context: str = ""

    @property
    def content_hash(self) -> str:
        return text_hash(self.text)


@dataclass(frozen=True, slots=True)
class SymbolDef:
    """A definition found by tree-sitter, for hover and code lens."""

    name: str
    # function | method | class | interface | struct | enum | type | ... and the value kinds
    # (VALUE_KINDS): module-level variables and constants, class attributes
    kind: str
    container: str  # enclosing class/module name, "" at top level
    path: str
    start_line: int  # whole definition, 1-based inclusive
    end_line: int
    name_line: int  # where the name itself is (1-based line, 0-based UTF-16-agnostic column)
    name_col: int
    signature: str
    language: str

    @property
    def qualified_name(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


# Symbol kinds of bound values rather than definitions with a body: named in the symbol table,
# their lines stay in the surrounding chunk.
VALUE_KINDS = frozenset({"variable", "constant", "attribute"})


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """What the chunker makes of one file."""

    chunks: list[Chunk]
    symbols: list[SymbolDef]


@dataclass(slots=True)
class SearchHit:
    """A search hit; `to_json` uses the wire field names (docs/rules.md: hit-shape)."""

    path: str
    start_line: int
    end_line: int
    score: float  # calibrated, in [0, 1]; the number minScore is compared with
    symbol: str
    kind: str
    language: str
    project: str
    snippet: str
    chunk_id: str = ""
    signals: dict[str, float] = field(default_factory=dict)
    relevance: float = 0.0  # calibrated P(relevant); `score` reads P(answers) at the top hit
    # The chunk's whole indexed text (not sent to clients): what evidence re-reading compares
    # with the current file. `snippet` is only the bounded display version.
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "symbol": self.symbol,
            "kind": self.kind,
            "language": self.language,
            "project": self.project,
            "snippet": self.snippet,
        }


class SearchResult(list[SearchHit]):
    """Hits best first, and what the list means: a one-line `reason` when it is empty, and
    `partial_index` when some project searched has not embedded every chunk yet (lexical
    evidence plus the embedded part, scored by the lexical calibration)."""

    def __init__(
        self,
        hits: list[SearchHit] | None = None,
        *,
        reason: str = "",
        partial_index: bool = False,
        answerable: float | None = None,
    ) -> None:
        super().__init__(hits or [])
        self.reason = reason
        self.partial_index = partial_index
        self.answerable = answerable  # the best list's P(the workspace answers), when scored

    def meta_json(self) -> dict[str, Any]:
        """The contract's fields next to `hits`: reason only when empty, partialIndex always."""
        out: dict[str, Any] = {"partialIndex": self.partial_index}
        if self.reason:
            out["reason"] = self.reason
        return out


def search_meta(hits: list[SearchHit]) -> dict[str, Any]:
    """The fields a front door sends next to `hits` (`reason`, `partialIndex`)."""
    return hits.meta_json() if isinstance(hits, SearchResult) else {"partialIndex": False}


def search_reason(hits: list[SearchHit]) -> str:
    return hits.reason if isinstance(hits, SearchResult) else ""


@dataclass(frozen=True, slots=True)
class FileText:
    """A workspace file's current text and where it came from: "buffer" (an editor's unsaved
    text, this process's or one published by the language server) or "disk"."""

    text: str
    source: str


@dataclass(frozen=True, slots=True)
class RetrievalQuery:
    """A question as retrieval reads it (built by `code_compass_server.query`, or by an LLM).

    `rewritten` is the English rendering the semantic channel embeds and the score's word
    signals read; `lexical` is what BM25 matches: the rendering, the other senses of ambiguous
    words and the question's own untranslated words. For an English question all three are
    the question itself and `source` is "none".
    """

    original: str
    language: str | None  # ISO 639-1 code, None when unsure
    rewritten: str
    lexical: str
    added: tuple[str, ...] = ()  # English terms that are not words of the question
    source: str = "none"  # none | lexicon | llm

    def to_json(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "rewritten": self.rewritten,
            "source": self.source,
            "added": list(self.added),
        }


@dataclass(frozen=True, slots=True)
class SearchParams:
    """Validated search/ask parameters (docs/rules.md: query-limits, top-k-clamp)."""

    query: str
    top_k: int
    path_prefix: str | None
    language: str | None
    min_score: float | None  # None: no filter (search); ask always filters
    project: str | None = None  # None: the current project; "*": all projects
    mode: str = "hybrid"
    # A rewrite made before searching (the ask pipeline's LLM query builder); used only while
    # `original` is this query, so a copy with another query never searches with a stale one.
    rewrite: RetrievalQuery | None = None
