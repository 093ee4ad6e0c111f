"""Give the C heap's free pages back to the system, and keep it in few arenas.

Python returns freed objects to its allocator and glibc's malloc keeps the pages: after a
full index pass (parse results, batches) or evicted parses, a long-running server would hold
tens of MB it no longer uses (30 MB after indexing Django, measured). `malloc_trim` returns
them; elsewhere than glibc it is absent and this does nothing.

glibc also gives each thread that meets contention an arena of its own, up to 8 per core; a
language server has two dozen threads (request lanes, the indexer, Tantivy's, the resolvers'),
and each arena keeps its own free chunks. `limit_arenas` caps them before the threads start.
"""

from __future__ import annotations

from typing import Any

_libc: list[Any] = []  # glibc, looked up at the first call ([None] elsewhere)
_M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)


def _glibc() -> Any:
    if not _libc:
        # Imported here: ctypes.util brings subprocess, which a CLI query never needs.
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        try:
            lib = ctypes.CDLL(name) if name else None
            _libc.append(lib if lib is not None and hasattr(lib, "malloc_trim") else None)
        except (OSError, AttributeError):
            _libc.append(None)
    return _libc[0]


def trim_heap() -> bool:
    """Give the heap's free pages back; False where there is no such call."""
    lib = _glibc()
    if lib is None:
        return False
    lib.malloc_trim(0)  # ctypes lets go of the GIL meanwhile
    return True


def limit_arenas(arenas: int) -> bool:
    """At most `arenas` malloc arenas for the threads started from now on (glibc's
    M_ARENA_MAX); False where there is no such setting."""
    lib = _glibc()
    if lib is None or not hasattr(lib, "mallopt"):
        return False
    return bool(lib.mallopt(_M_ARENA_MAX, arenas))
