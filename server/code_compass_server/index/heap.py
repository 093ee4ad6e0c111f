"""Give the C heap's free pages back to the system once a burst of work has freed them.

Python returns freed objects to its allocator and glibc's malloc keeps the pages: after a
full index pass (parse results, batches) or evicted parses, a long-running server would hold
tens of MB it no longer uses (30 MB after indexing Django, measured). `malloc_trim` returns
them; elsewhere than glibc it is absent and this does nothing.
"""

from __future__ import annotations

from collections.abc import Callable

_malloc_trim: list[Callable[[int], int] | None] = []  # looked up at the first call


def trim_heap() -> bool:
    """Give the heap's free pages back; False where there is no such call."""
    if not _malloc_trim:
        # Imported here: ctypes.util brings subprocess, which a CLI query never needs.
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        try:
            _malloc_trim.append(ctypes.CDLL(name).malloc_trim if name else None)
        except (OSError, AttributeError):
            _malloc_trim.append(None)
    trim = _malloc_trim[0]
    if trim is None:
        return False
    trim(0)  # ctypes lets go of the GIL meanwhile
    return True
