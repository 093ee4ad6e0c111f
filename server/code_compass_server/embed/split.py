"""Split a chunk's text into pieces of at most 256 model tokens, at line boundaries.

Decision: a chunk longer than the model's window gets several vectors (one per piece), and the
vector store scores a chunk by its best piece (max-sim). Truncating to the first 256 tokens would
make the tail of long functions invisible to semantic search; averaging piece vectors blurs them.
Pieces partition the chunk's lines (no overlap), so each maps back to an exact line range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from code_compass_server.constants import (
    EMBED_CONTEXT_MAX_CHARS,
    EMBED_MAX_PIECES_PER_CHUNK,
    EMBED_MAX_TOKENS,
)
from code_compass_server.index.languages import CODE_LANGUAGES
from code_compass_server.index.tokens import identifier_parts

SPECIAL_TOKENS = 2  # [CLS] and [SEP]


class LineTokenCounter(Protocol):
    def line_token_counts(self, text: str) -> list[int]:
        """Content tokens on each '\\n'-separated line of text."""
        ...


class LineTokenizer(Protocol):
    def line_token_ids(self, text: str) -> list[list[int]]:
        """Content token ids on each '\\n'-separated line of text."""
        ...

    def wrap(self, content: Sequence[int]) -> list[int]:
        """The model's input for these content tokens ([CLS], [SEP], truncation)."""
        ...


@dataclass(frozen=True, slots=True)
class ModelPiece:
    text: str  # what the model reads (the header, then the piece): the cache's key
    ids: list[int]  # the same text's token ids as the model takes them


@dataclass(frozen=True, slots=True)
class Piece:
    start_line: int  # 1-based, inclusive, in the file's numbering
    end_line: int
    text: str


def split_for_embedding(
    text: str,
    start_line: int,
    counter: LineTokenCounter,
    max_tokens: int = EMBED_MAX_TOKENS,
    max_pieces: int = EMBED_MAX_PIECES_PER_CHUNK,
) -> list[Piece]:
    """Pieces of `text` (whose first line is `start_line`) that each fit in `max_tokens`.

    A single line longer than the budget becomes its own piece and is truncated by the tokenizer.
    Blank-only text yields no piece. At most `max_pieces` pieces are returned (the first ones).
    """
    lines = _lines(text)
    counts = counter.line_token_counts("\n".join(lines))
    return [
        Piece(start_line + lo, start_line + hi - 1, "\n".join(lines[lo:hi]))
        for lo, hi in _piece_ranges(lines, counts, max_tokens, max_pieces)
    ]


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):  # a trailing newline does not start another line
        lines.pop()
    return lines


def _piece_ranges(
    lines: list[str], counts: list[int], max_tokens: int, max_pieces: int
) -> list[tuple[int, int]]:
    """Line ranges [lo, hi) of the pieces: whole lines, at most `max_tokens` each with the
    special tokens, blank edge lines trimmed, blank-only ranges dropped, `max_pieces` first."""
    budget = max_tokens - SPECIAL_TOKENS
    ranges: list[tuple[int, int]] = []
    first = 0
    used = 0
    for i, n in enumerate(counts):
        if used + n > budget and i > first:
            _emit(ranges, lines, first, i, used)
            first, used = i, 0
        used += n
    _emit(ranges, lines, first, len(lines), used)
    return ranges[:max_pieces]


def _emit(ranges: list[tuple[int, int]], lines: list[str], lo: int, hi: int, tokens: int) -> None:
    if hi <= lo or tokens == 0:  # nothing the model could see (blank lines only)
        return
    # Trim blank edge lines so the piece's range points at content.
    while not lines[lo].strip():
        lo += 1
    while not lines[hi - 1].strip():
        hi -= 1
    ranges.append((lo, hi))


def context_header(symbol: str, language: str, context: str = "") -> str:
    """A line the model reads before each piece of a code symbol: its qualified name as words
    ("Truncator.chars" -> "truncator chars", "get_user_by_email" -> "get user by email"), then
    the chunk's context (records.Chunk.context: its class, a header's members, the signature
    of a split definition).

    Why: a method's piece does not show its class, and the small model reads glued or
    snake_case names poorly; natural-language questions match the words. Only the symbol
    (not the path) so a file rename keeps every cached vector.
    """
    if language not in CODE_LANGUAGES:
        return ""
    name = " ".join(identifier_parts(symbol))
    return "\n".join(p for p in (name, context[:EMBED_CONTEXT_MAX_CHARS]) if p)


def embedding_text(header: str, piece_text: str) -> str:
    return f"{header}\n{piece_text}" if header else piece_text


def model_texts(
    text: str,
    start_line: int,
    symbol: str,
    language: str,
    counter: LineTokenCounter,
    context: str = "",
) -> list[str]:
    """What the model reads for each piece of a chunk: the header (its symbol as words, then its
    context), then the piece. One rule for the local worker and the team index, so both embed
    the same texts."""
    header = context_header(symbol, language, context)
    budget = EMBED_MAX_TOKENS - sum(counter.line_token_counts(header))
    pieces = split_for_embedding(text, start_line, counter, budget)
    return [embedding_text(header, p.text) for p in pieces]


def model_pieces(
    text: str,
    start_line: int,
    symbol: str,
    language: str,
    tokenizer: LineTokenizer,
    context: str = "",
) -> list[ModelPiece]:
    """`model_texts` with each text's token ids, from one tokenization of the chunk: BERT
    splits words at whitespace, newlines included, so the ids of whole lines joined are the
    lines' ids joined — the counting pass already has them, and the model's input needs no
    second tokenization (issue #31: the pipeline's own work, next to inference)."""
    header = context_header(symbol, language, context)
    head_ids = [t for line in tokenizer.line_token_ids(header) for t in line] if header else []
    lines = _lines(text)
    line_ids = tokenizer.line_token_ids("\n".join(lines))
    counts = [len(ids) for ids in line_ids]
    out: list[ModelPiece] = []
    budget = EMBED_MAX_TOKENS - len(head_ids)
    for lo, hi in _piece_ranges(lines, counts, budget, EMBED_MAX_PIECES_PER_CHUNK):
        ids = [*head_ids, *(t for line in line_ids[lo:hi] for t in line)]
        piece = "\n".join(lines[lo:hi])
        out.append(ModelPiece(embedding_text(header, piece), tokenizer.wrap(ids)))
    return out
