"""Splitting chunks into <=256-token pieces that map back to exact lines."""

from __future__ import annotations

from code_compass_server.embed.model import Embedder
from code_compass_server.embed.split import (
    Piece,
    model_pieces,
    model_texts,
    split_for_embedding,
)


def _code(n: int) -> str:
    return "\n".join(
        f"    result_{i} = compute_value(alpha_{i}, beta_{i}, gamma={i})  # step {i}"
        + ("\n" if i % 7 == 0 else "")
        for i in range(n)
    )


def test_pieces_fit_and_map_back_to_lines(embedder: Embedder) -> None:
    text = _code(45)
    assert embedder.count_tokens(text) > 3 * 256
    start = 41
    pieces = split_for_embedding(text, start, embedder)
    assert len(pieces) >= 4
    lines = text.split("\n")
    covered: set[int] = set()
    for p in pieces:
        assert embedder.count_tokens(p.text) <= 256, p
        assert p.text == "\n".join(lines[p.start_line - start : p.end_line - start + 1])
        assert p.text.strip() and lines[p.start_line - start].strip()
        covered.update(range(p.start_line, p.end_line + 1))
    non_blank = {start + i for i, line in enumerate(lines) if line.strip()}
    assert non_blank <= covered
    assert [p.start_line for p in pieces] == sorted(p.start_line for p in pieces)
    assert pieces[-1].end_line == start + len(lines) - 1


def test_short_text_is_one_piece_and_blank_is_none(embedder: Embedder) -> None:
    assert split_for_embedding("\n  x = 1\n\n", 10, embedder) == [Piece(11, 11, "  x = 1")]
    assert split_for_embedding(" \n\t\n", 1, embedder) == []
    assert split_for_embedding("", 1, embedder) == []


def test_overlong_single_line_stands_alone(embedder: Embedder) -> None:
    text = "a = 1\n" + "token " * 600 + "\nb = 2"
    pieces = split_for_embedding(text, 1, embedder)
    assert [(p.start_line, p.end_line) for p in pieces] == [(1, 1), (2, 2), (3, 3)]


def test_piece_cap(embedder: Embedder) -> None:
    text = "\n".join("word " * 300 for _ in range(12))
    assert len(split_for_embedding(text, 1, embedder, max_pieces=8)) == 8


def test_pieces_tokenized_once_are_what_the_model_would_tokenize(embedder: Embedder) -> None:
    """The ids taken from the counting pass equal the model's own encoding of each text:
    accents, CJK, glued punctuation, a blank-edged chunk with a header and context, a line
    longer than the window (truncated the same way), and text with no header at all."""
    long_line = "value = [" + ", ".join(f"item_{i}" for i in range(400)) + "]"
    cases = [
        (_code(45), "Engine.compute_all", "python", "class Engine:"),
        ("\n\n  déjà_vu = naïve('Ünïcode')  # 東京 コード\n  x=a+b;y=c//d\n\n", "f", "python", ""),
        (f"def huge():\n    {long_line}\n    return value\n", "huge", "python", ""),
        ("Some prose, with *markup* and `code`.\nSecond line.", "", "markdown", ""),
        ("export function addDays(date, amount) {\n  return date + amount;\n}\n", "addDays",
         "javascript", "/** Add the specified number of days. */"),
    ]  # fmt: skip
    for text, symbol, language, context in cases:
        texts = model_texts(text, 10, symbol, language, embedder, context)
        pieces = model_pieces(text, 10, symbol, language, embedder, context)
        assert texts and [p.text for p in pieces] == texts
        assert [p.ids for p in pieces] == embedder.encode(texts), text[:40]
    assert len(model_pieces(_code(45), 1, "f", "python", embedder)) > 3
