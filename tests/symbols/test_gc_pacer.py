"""Cached parses are kept out of the collector's walks, and evicted ones are still freed:
at once when nothing holds them (no full collection), else by a reclaim."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.symbols import resolve_python, stamped_cache
from code_compass_server.symbols.evicted import free_if_unreachable
from code_compass_server.symbols.resolve import SymbolResolver
from code_compass_server.symbols.resolve_python import ModuleInfo, parse_module
from code_compass_server.symbols.stamped_cache import StampedCache, release_retired

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


def test_cached_parses_leave_the_collectors_walk_and_evicted_ones_are_freed_without_it(
    workspace: Path, resolver: SymbolResolver
) -> None:
    resolver.pacer.idle_s = 3600.0  # never idle: no reclaim may run
    _resolve_everywhere(resolver, workspace)
    assert _ours(workspace) == []  # frozen: a full collection does not walk them
    deadline = time.monotonic() + 10
    while resolver.pacer.released < FILES - CACHED and time.monotonic() < deadline:
        time.sleep(0.05)
    assert resolver.pacer.released >= FILES - CACHED
    assert resolver.pacer.reclaims == 0
    _evicted_are_collected(workspace)


def test_an_evicted_parse_still_held_waits_and_is_freed_once_dropped(tmp_path: Path) -> None:
    release_retired()  # what earlier tests left
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(_module(1))
    cache: StampedCache[ModuleInfo] = StampedCache(tmp_path, 1, cyclic=True)

    def parse(source: str) -> ModuleInfo | None:
        return parse_module("a.py", source, ())

    held = cache.get("a.py", None, parse)
    assert held is not None
    scope = held.module
    del held
    cache.get("b.py", None, parse)  # evicts a.py, whose module scope is still held here
    assert release_retired() == (0, 1)
    assert scope.bindings  # untouched while held
    del scope
    assert release_retired() == (1, 0)


def test_a_parse_is_freed_only_when_nothing_outside_reaches_it() -> None:
    source = (Path(resolve_python.__file__)).read_text()  # a large module: thousands of objects
    info = parse_module("freed_probe.py", source, ())
    assert info is not None
    binding = next(iter(info.module.bindings.values()))[0]
    assert not free_if_unreachable(info)  # a binding of it is held
    assert binding.scope is info.module
    del binding
    was = gc.isenabled()
    gc.disable()  # nothing may be left for the collector: reference counting frees it all
    try:
        assert free_if_unreachable(info)
        del info
        left = [
            o for o in gc.get_objects()
            if isinstance(o, ModuleInfo) and o.rel == "freed_probe.py"
        ]  # fmt: skip
        assert left == []
    finally:
        if was:
            gc.enable()


def test_evictions_force_a_reclaim_when_requests_never_pause(
    workspace: Path, resolver: SymbolResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stamped_cache, "RETIRED_MAX", 0)  # evictions left to the collector
    resolver.pacer.idle_s = 3600.0
    resolver.pacer.max_evicted = FILES - CACHED  # due once every evicted parse is garbage
    _resolve_everywhere(resolver, workspace)
    _wait_for_reclaim(resolver, keep_busy=True)
    _evicted_are_collected(workspace)


def test_no_reclaim_while_a_request_resolves_and_gc_comes_back_on(
    workspace: Path, resolver: SymbolResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stamped_cache, "RETIRED_MAX", 0)  # evictions left to the collector
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
