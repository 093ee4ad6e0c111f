"""The Python resolver keeps parses of at most PYTHON_PARSE_CACHE_BYTES of source."""

from __future__ import annotations

from pathlib import Path

from code_compass_server.constants import PYTHON_PARSE_CACHE_BYTES
from code_compass_server.symbols.resolve_python import PythonScopes


def test_parses_kept_stay_within_the_source_bound(tmp_path: Path) -> None:
    """A parse costs ~55x its source on the heap: the bound is what keeps a long navigation
    session's memory flat. Files worth 1.5x the bound are parsed in turn; the cache keeps the
    most recent ones within it, and the first one is parsed again when asked for."""
    line = "def f{n}_{i}(a, b):\n    return a + b  # {pad}\n"
    per_file = 40_000
    count = int(PYTHON_PARSE_CACHE_BYTES * 1.5) // per_file + 1
    for n in range(count):
        body = "".join(line.format(n=n, i=i, pad="x" * 20) for i in range(per_file // 50))
        (tmp_path / f"m{n}.py").write_text(body)
    s = PythonScopes(tmp_path)
    assert all(s.module(f"m{n}.py") is not None for n in range(count))
    files, source = s._files.size()
    assert source <= PYTHON_PARSE_CACHE_BYTES
    assert files < count  # some were evicted: the bound, not the file count, decided
    assert s.module("m0.py") is not None  # evicted, built again on demand
