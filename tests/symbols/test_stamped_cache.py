"""Parses kept per file version: an open buffer and the same text on disk are one version."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.symbols.stamped_cache import StampedCache


def test_a_buffer_and_the_same_text_on_disk_share_one_build(tmp_path: Path) -> None:
    """Hovers read the open file's buffer, cross-file lookups read it from disk: with the same
    text, alternating between them must not rebuild (each rebuild was a full parse on the
    hover's path); a different buffer, or a change on disk, still rebuilds."""
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    cache: StampedCache[str] = StampedCache(tmp_path, 8)
    builds: list[str] = []

    def build(text: str) -> str:
        builds.append(text)
        return text.upper()

    assert cache.get("a.py", "x = 1\n", build) == "X = 1\n"
    for _ in range(3):
        assert cache.get("a.py", None, build) == "X = 1\n"
        assert cache.get("a.py", "x = 1\n", build) == "X = 1\n"
    assert builds == ["x = 1\n"]
    assert cache.get("a.py", "x = 2\n", build) == "X = 2\n"  # an edited buffer
    (tmp_path / "a.py").write_text("x = 3\n", encoding="utf-8")
    assert cache.get("a.py", None, build) == "X = 3\n"  # a change on disk
    assert builds == ["x = 1\n", "x = 2\n", "x = 3\n"]
