"""The resolver's jedi answers: stored when they come, even when they come at once."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest

from code_compass_server.constants import RESOLVER_WARMED_VERSIONS
from code_compass_server.symbols.resolve import SymbolResolver

pytest.importorskip("jedi", reason="jedi is not installed")


class _AtOnce(Executor):
    """jedi's process, waited for inside submit: each future is done before submit returns
    (what happens now and then when jedi answers before the caller goes on)."""

    def __init__(self) -> None:
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut = self.pool.submit(fn, *args, **kwargs)
        wait([fut])
        return fut


class _ImmediateResolver(SymbolResolver):
    def __init__(self, lane: _AtOnce) -> None:
        super().__init__(budget_s=5.0)
        self.lane = lane

    def _jedi(self) -> Any:
        return self.lane


def test_an_answer_already_there_is_stored_without_a_deadlock(tmp_path: Path) -> None:
    """A jedi call done before its callback was added ran the callback under the resolver's
    lock, which the callback takes again: the hover and every request after it hung."""
    text = "def f(x):\n    return x.whatever\n"
    (tmp_path / "m.py").write_text(text)
    lane = _AtOnce()
    r = _ImmediateResolver(lane)
    out: list[Any] = []
    column = text.split("\n")[1].index("whatever")
    t = threading.Thread(
        target=lambda: out.append(r.resolve(tmp_path, "m.py", "python", text, 1, column)),
        daemon=True,
    )
    try:
        t.start()
        t.join(timeout=30)
        assert not t.is_alive(), "resolve() deadlocked on an answer that came at once"
        key = (str(tmp_path), "m.py", len(text), hash(text), 1, column)
        assert key in r._jedi_cache  # stored: the next hover there needs no jedi call
    finally:
        r.close()
        lane.pool.shutdown()


def test_the_versions_remembered_as_warmed_are_bounded(tmp_path: Path) -> None:
    """Each code-lens request warms the version it shows, every edit a new one: the keys
    that stop a version being warmed twice were kept for ever."""
    r = SymbolResolver()
    try:
        for n in range(RESOLVER_WARMED_VERSIONS + 5):
            r.warm_later(tmp_path, "a.js", "javascript", f"const v{n} = {n};\n")
        assert len(r._warming) == RESOLVER_WARMED_VERSIONS
        first = (tmp_path, "a.js", hash("const v0 = 0;\n"))
        last = RESOLVER_WARMED_VERSIONS + 4
        newest = (tmp_path, "a.js", hash(f"const v{last} = {last};\n"))
        assert first not in r._warming  # the oldest went first
        assert newest in r._warming
    finally:
        r.close()
