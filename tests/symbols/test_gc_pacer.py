"""Cached parses are kept out of the collector's walks, and evicted ones are still reclaimed."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.symbols import resolve_python
from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_python import ModuleInfo

FILES = 40
CACHED = 4  # far fewer than FILES: the cache evicts


def _module(i: int) -> str:
    # Classes, methods and an import: scopes point to parents, bindings to their module,
    # so an evicted parse is cyclic garbage that reference counting alone cannot free.
    prev = f"from gcmod_{i - 1} import Thing{i - 1}\n" if i else ""
    return (
        f"{prev}class Thing{i}:\n"
        "    def run(self, n):\n"
        "        self.n = n\n"
        "        return self.n\n"
        f"value = Thing{i}().run({i})\n"
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(resolve_python, "MODULE_CACHE_FILES", CACHED)
    for i in range(FILES):
        (tmp_path / f"gcmod_{i}.py").write_text(_module(i))
    yield tmp_path
    gc.unfreeze()  # what the pacer froze goes back to the collector for later tests


@pytest.fixture
def resolver() -> Iterator[SymbolResolver]:
    found = SymbolResolver()
    yield found
    found.close()


def _ours(root: Path) -> list[ModuleInfo]:
    """This workspace's parses the collector still tracks (frozen ones are not listed)."""
    prefix = "gcmod_"
    return [o for o in gc.get_objects() if isinstance(o, ModuleInfo) and o.rel.startswith(prefix)]


def _resolve_everywhere(resolver: SymbolResolver, root: Path) -> None:
    for i in range(FILES):
        rel = f"gcmod_{i}.py"
        with resolver.foreground():
            found = resolver.fast(root, rel, "python", None, 5 if i else 4, 8)
        assert found is not None and found.targets, rel  # `value = Thing{i}` resolves
        assert gc.isenabled()  # a request turns the collector off only while it resolves


def _wait_for_reclaim(resolver: SymbolResolver, keep_busy: bool) -> None:
    deadline = time.monotonic() + 10
    while resolver.pacer.reclaims == 0 and time.monotonic() < deadline:
        if keep_busy:
            resolver.pacer.touch()  # requests keep coming: never idle
        time.sleep(0.05)
    assert resolver.pacer.reclaims >= 1


def _evicted_are_collected(root: Path) -> None:
    gc.unfreeze()  # list the frozen heap too: the evicted parses must be gone from it
    alive = _ours(root)
    assert len(alive) <= CACHED, sorted(o.rel for o in alive)


def test_cached_parses_leave_the_collectors_walk_and_idle_reclaims_the_evicted(
    workspace: Path, resolver: SymbolResolver
) -> None:
    resolver.pacer.idle_s = 0.3
    _resolve_everywhere(resolver, workspace)
    assert _ours(workspace) == []  # frozen: a full collection does not walk them
    _wait_for_reclaim(resolver, keep_busy=False)
    _evicted_are_collected(workspace)


def test_evictions_force_a_reclaim_when_requests_never_pause(
    workspace: Path, resolver: SymbolResolver
) -> None:
    resolver.pacer.idle_s = 3600.0
    resolver.pacer.max_evicted = FILES - CACHED  # due once every evicted parse is garbage
    _resolve_everywhere(resolver, workspace)
    _wait_for_reclaim(resolver, keep_busy=True)
    _evicted_are_collected(workspace)


def test_no_reclaim_while_a_request_resolves_and_gc_comes_back_on(
    workspace: Path, resolver: SymbolResolver
) -> None:
    resolver.pacer.idle_s = 3600.0
    resolver.pacer.max_evicted = 10**6
    _resolve_everywhere(resolver, workspace)  # 36 evictions, no reclaim yet
    resolver.pacer.close()  # its thread stops: what is due is only read below
    resolver.pacer.max_evicted = 1
    with resolver.foreground():
        assert resolver.pacer._due() == ""  # evictions are due, but a request runs
        assert not gc.isenabled()
    assert resolver.pacer._due() == "evictions"
    assert gc.isenabled()


def test_gc_is_enabled_again_even_if_freezing_fails(
    workspace: Path, resolver: SymbolResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("cannot start a thread at interpreter shutdown")

    _resolve_everywhere(resolver, workspace)
    monkeypatch.setattr(resolver.pacer, "settle", broken)
    with pytest.raises(RuntimeError), resolver.foreground():
        pass
    assert gc.isenabled()
