"""The comment/string spans cached per file (code_names) cost bytes per span, not objects."""

from __future__ import annotations

import gc
import tracemalloc

from code_compass_server.symbols import code_names
from code_compass_server.symbols.code_names import code_columns_in, noise_spans


def test_cached_spans_cost_about_sixteen_bytes_each() -> None:
    """A lens scan fills the cache with most of a project's files; as lists of int objects a
    span cost ~80 bytes (Django: 180k spans, 14 MB) and scattered the heap."""
    files = ["".join(f"x{i}_{n} = 'text {n}'  # note {n}\n" for n in range(400)) for i in range(50)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        spans = 0
        for text in files:
            starts, _ends = noise_spans(text, "python")
            spans += len(starts)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        code_names._masks.clear()
    assert spans == 50 * 400 * 2  # a string and a comment per line
    assert held < spans * 24  # two 8-byte offsets a span, and the cache's own entries


def test_columns_skip_comments_and_strings_with_the_compact_spans() -> None:
    text = "name = 1  # name\nprint('name', name)\n"
    assert code_columns_in(text, "python", "name") == {1: [0], 2: [14]}
