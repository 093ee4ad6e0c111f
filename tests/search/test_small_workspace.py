"""Calibration holds in a tiny workspace too (BM25 is rescaled to the index size)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search
from tests.conftest import write_tree

FILES: dict[str, str | bytes] = {
    "geometry/shapes.py": (
        '"""Areas of basic shapes."""\n\nimport math\n\n\n'
        "def circle_area(radius: float) -> float:\n"
        '    """Return the area of a circle: pi times the radius squared."""\n'
        "    return math.pi * radius**2\n\n\n"
        "def rectangle_area(width: float, height: float) -> float:\n"
        '    """Return the area of a rectangle."""\n'
        "    return width * height\n"
    ),
    "README.md": "# shapes-demo\n\n## Circles\n\n`circle_area(radius)` computes a circle's area.\n",
}


def test_tiny_workspace_keeps_the_right_hit_and_refuses_the_unrelated(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(
        write_tree(tmp_path / "ws", FILES), settings=EngineSettings(embeddings=True)
    )
    engine.index(embed=True)
    for mode in ("hybrid", "lexical"):
        hits = engine.search(validate_search("How is the area of a circle computed?", 3, mode=mode))
        symbols = [h.symbol for h in hits]
        # The README section about circle_area answers too ("computes a circle's area"): it may
        # come first, but the implementation must be kept, and before rectangle_area.
        assert "circle_area" in symbols[:2], (mode, symbols)
        assert symbols.index("circle_area") < symbols.index("rectangle_area"), (mode, symbols)
        top_code = hits[symbols.index("circle_area")]
        assert top_code.path == "geometry/shapes.py"
        # The list is kept; a second hit reads the top's score times its relevance odds.
        assert hits[0].score >= (DEFAULT_MIN_SCORE if mode == "hybrid" else 0.4), (mode, hits[0])
    unrelated = engine.search(validate_search("how do I configure kafka consumers?", 3))
    assert all(h.score < DEFAULT_MIN_SCORE for h in unrelated)
