"""A parsed file as the team index stores it: a content-addressed blob with its chunks, symbols,
lexical postings and embedding pieces.

The same parser, tokenizers and embedding-text rules as the local index (index/parse_pool.py,
index/tokens.py, embed/split.py), so a chunk, a term and a vector mean the same on both
backends. Nothing here depends on the file's path except the path field's terms, which live
with the tree entry (cc_path_terms), so two paths with the same bytes share one blob.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from code_compass_server.embed.split import model_texts
from code_compass_server.index.lexical import body_words
from code_compass_server.index.parse_pool import LoadedFile
from code_compass_server.index.tokens import path_terms, symbol_terms
from code_compass_server.records import text_hash

# Field numbers of cc_postings / cc_term_df / cc_field_stats.
FIELD_BODY, FIELD_CODE, FIELD_SYMBOL, FIELD_PATH = 0, 1, 2, 3
FIELD_NUMBERS = {"body": FIELD_BODY, "code": FIELD_CODE, "symbol": FIELD_SYMBOL}
FIELD_NUMBERS["path_parts"] = FIELD_PATH


def blob_key(language: str, data_hash: str) -> str:
    """The blob of some bytes parsed as `language` (a .h file may be C or C++ by its name)."""
    return hashlib.blake2b(f"{language}\0{data_hash}".encode(), digest_size=16).hexdigest()


class LineCounter(Protocol):
    def line_token_counts(self, text: str) -> list[int]: ...


@dataclass(slots=True)
class ChunkRecord:
    ordinal: int
    start_line: int
    end_line: int
    language: str
    kind: str
    symbol: str
    signature: str
    doc: str
    category: str
    content_hash: str
    text: str
    context: str  # records.Chunk.context: read by the embedding after the symbol
    # field -> term -> tf, and the field's length (tokens), as the local Tantivy fields hold them
    terms: dict[int, Counter[str]] = field(default_factory=dict)
    lengths: dict[int, int] = field(default_factory=dict)
    pieces: list[tuple[str, str]] = field(default_factory=list)  # (text_hash, model text)


@dataclass(slots=True)
class BlobRecord:
    blob: str
    language: str
    chunks: list[ChunkRecord]
    symbols: Sequence[tuple[object, ...]]  # cc_symbols rows without project_id and blob

    def field_length(self, f: int) -> int:
        return sum(c.lengths.get(f, 0) for c in self.chunks)


def field_terms(text: str, code: str, symbol: str) -> dict[int, list[str]]:
    """The tokens of each chunk field, exactly as index/lexical.py indexes them."""
    return {
        FIELD_BODY: body_words(text),
        FIELD_CODE: code.split(),
        FIELD_SYMBOL: symbol_terms(symbol).split(),
    }


def path_field(path: str) -> list[str]:
    return path_terms(path).split()


def blob_from_loaded(loaded: LoadedFile, blob: str, counter: LineCounter | None) -> BlobRecord:
    """The records of a parsed file; `counter` (the model's tokenizer) splits pieces for
    embedding, None when embeddings are off (the pieces are made by whoever embeds later)."""
    chunks: list[ChunkRecord] = []
    for ordinal, ((_cid, ch, category), code) in enumerate(
        zip(loaded.chunks, loaded.terms, strict=True)
    ):
        rec = ChunkRecord(
            ordinal, ch.start_line, ch.end_line, ch.language, ch.kind, ch.symbol,
            ch.signature, ch.doc, category, ch.content_hash, ch.text, ch.context,
        )  # fmt: skip
        for f, tokens in field_terms(ch.text, code, ch.symbol).items():
            rec.terms[f] = Counter(tokens)
            rec.lengths[f] = len(tokens)
        if counter is not None:
            rec.pieces = pieces_of(
                ch.text, ch.start_line, ch.symbol, ch.language, counter, ch.context
            )
        chunks.append(rec)
    symbols = [
        (s.name, s.kind, s.container, s.start_line, s.end_line, s.name_line, s.name_col,
         s.signature, s.language)
        for s in loaded.symbols
    ]  # fmt: skip
    return BlobRecord(blob, loaded.row.language, chunks, symbols)


def pieces_of(
    text: str,
    start_line: int,
    symbol: str,
    language: str,
    counter: LineCounter,
    context: str = "",
) -> list[tuple[str, str]]:
    """(hash, text) of what the model reads for each piece (embed/split.py::model_texts)."""
    texts = model_texts(text, start_line, symbol, language, counter, context)
    return [(text_hash(t), t) for t in texts]
