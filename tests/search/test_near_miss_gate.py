"""A near-miss option written in a code snippet does not pass minScore on a real small index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search
from tests.conftest import write_tree

FILES: dict[str, str | bytes] = {
    "src/lexer.ts": (
        "/** Options of the Lexer. */\n"
        "export interface ILexerConfig {\n"
        '  /** How much position information each token carries: "full" (offsets, lines and\n'
        '   * columns) or "onlyOffset" (faster). */\n'
        '  positionTracking?: "full" | "onlyOffset"\n'
        "  /** Report lexing errors instead of throwing. */\n"
        "  recoverFromErrors?: boolean\n"
        "}\n\n"
        "/** Splits a text into tokens with the token types it was given. */\n"
        "export class Lexer {\n"
        "  constructor(tokenTypes: TokenType[], config: ILexerConfig = {}) {\n"
        '    this.trackLines = config.positionTracking !== "onlyOffset"\n'
        "    this.recover = config.recoverFromErrors ?? true\n"
        "  }\n\n"
        '  /** Offsets always; lines and columns only when positionTracking is "full". */\n'
        "  tokenize(text: string): ILexingResult {\n"
        "    const tokens = []\n"
        "    let offset = 0\n"
        "    while (offset < text.length) {\n"
        "      const match = this.matchAt(text, offset)\n"
        "      if (this.trackLines) { this.updateLine(match) }\n"
        "      tokens.push(match)\n"
        "      offset += match.image.length\n"
        "    }\n"
        "    return { tokens, errors: [] }\n"
        "  }\n"
        "}\n"
    ),
    "README.md": (
        "# tinylex\n\nA small lexer. Create one with\n"
        '`new Lexer(tokenTypes, { positionTracking: "onlyOffset" })` to skip line and column\n'
        "tracking.\n"
    ),
}
ASKED = (
    "I only need offsets from the Lexer, not lines or columns."
    " What does `new Lexer(allTokens, {{ {option} }})` skip?"
)


def test_an_option_the_workspace_lacks_in_a_snippet_scores_below_min_score(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(
        write_tree(tmp_path / "ws", FILES), settings=EngineSettings(embeddings=True)
    )
    engine.index(embed=True)
    # `lineTracking` exists nowhere: the Lexer's options are positionTracking and
    # recoverFromErrors. Retrieval rightly finds the real neighbour, but the gate must not let
    # it pass as the answer (on main it scored 0.64).
    near_miss = engine.search(validate_search(ASKED.format(option="lineTracking: false"), 3))
    real = engine.search(validate_search(ASKED.format(option='positionTracking: "onlyOffset"'), 3))
    assert near_miss and real
    assert near_miss[0].score < DEFAULT_MIN_SCORE, near_miss[0]
    # The same question about the option that exists keeps its evidence.
    assert real[0].score >= DEFAULT_MIN_SCORE, real[0]
