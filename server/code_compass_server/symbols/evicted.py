"""Evicted parses freed at once, without a full collection: a trial deletion of their own objects.

A parse evicted from a cache (stamped_cache) is cyclic (scopes point to their parents, bindings
to their module), so reference counting alone never frees it, and a full collection walks the
whole heap to find it (a second on a busy machine, the GIL held: every request waits). Here only
the evicted value's own objects are walked, and every reference to each of them is counted:
when all of them come from inside the value (and this walk), nothing else can reach it — it is
garbage, as the collector would find — so its containers are cleared, which breaks the cycles,
and reference counting frees it at once. A value something still holds (a request resolving
with it) is left for a later try. The counts are one snapshot of the heap (_unreachable).
"""

from __future__ import annotations

import ast
import gc
import sys
import time
from collections import Counter

# The objects of a value that are walked: containers, syntax trees, and instances of types
# defined beside the value's own type (its scopes, bindings...). Anything else (types,
# functions, shared constants) is a boundary: referenced, never walked, never cleared.
_CONTAINERS = (dict, list, set, frozenset, tuple, ast.AST)
_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)  # singletons
MAX_OBJECTS = 400_000  # a larger value is left to the collector (the check holds the GIL)
_HOLD_SWITCH_S = 30.0  # the switch interval between the two counts: no thread switch there
_OUR_REFS = 2  # while counting: the walk's list and getrefcount's argument
_ROOT_REFS = 3  # the root's: the caller's last one and the two functions' arguments
_COUNT_SLICE = 20_000  # references counted per C call (~2 ms) after the snapshot
_DROP_SLICE = 5_000  # cleared objects let go per step: their deallocation holds the GIL


def free_if_unreachable(value: object) -> bool:
    """Free `value` now if nothing outside it refers to it or to any of its objects (the
    caller must hold no other reference: pass the last one and drop it). False when something
    still does, or when it is too large to check: it is left as it is."""
    own = type(value).__module__
    objects = _objects(value, own)  # may switch threads: the counts below are one snapshot
    if objects is None or not _unreachable(objects, value):
        return False
    # Garbage now: no other thread can reach it, so the clearing (and the deallocations it
    # starts) may let other threads run between objects.
    for obj in objects:
        _clear(obj, own)
    while objects:  # freed a slice at a time, not in one deallocation of them all
        del objects[-_DROP_SLICE:]
    return True


def _objects(root: object, own: str) -> list[object] | None:
    """The value's own objects, a level at a time: one C call lists what a level refers to
    (a slice of it at most), the loop keeps what is the value's (twice as fast as walking
    the objects one by one, and this walk runs for every evicted parse)."""
    seen = {id(root)}
    found = [root]
    level = [root]
    skip = (type, *_SHARED)
    while level:
        refs = [
            ref
            for start in range(0, len(level), _COUNT_SLICE)
            for ref in gc.get_referents(*level[start : start + _COUNT_SLICE])
        ]
        level = []
        for ref in refs:
            if id(ref) in seen or not gc.is_tracked(ref) or isinstance(ref, skip):
                continue
            if not isinstance(ref, _CONTAINERS) and type(ref).__module__ != own:
                continue
            seen.add(id(ref))
            level.append(ref)
        found += level
        if len(found) > MAX_OBJECTS:
            return None
    return found


def _unreachable(objects: list[object], root: object) -> bool:
    """Every reference to every object comes from inside (and to the root: the caller's,
    `free_if_unreachable`'s argument and this function's, three more). The reference counts
    and the references the objects hold are read by two C calls that run no bytecode, with
    thread switches held off between them: one snapshot of the heap. Only those two calls
    hold the GIL together (a few ms for a large module's parse); the references read are
    counted afterwards, a slice at a time, from the list the second call returned (it keeps
    what it lists alive, so the ids stay theirs)."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(_HOLD_SWITCH_S)
    try:
        counts = list(map(sys.getrefcount, objects))
        held = gc.get_referents(*objects)
    finally:
        sys.setswitchinterval(previous)
        time.sleep(0)  # let go of the GIL: a thread that waited meanwhile runs now
    inside: Counter[int] = Counter()
    for start in range(0, len(held), _COUNT_SLICE):
        inside.update(map(id, held[start : start + _COUNT_SLICE]))  # other threads run between
    for obj, count in zip(objects, counts, strict=True):
        extra = _ROOT_REFS if obj is root else 0
        if count - _OUR_REFS - extra != inside[id(obj)]:
            return False
    return True


def _clear(obj: object, own: str) -> None:
    if isinstance(obj, (dict, list, set)):
        obj.clear()
    elif type(obj).__module__ == own:
        for name in getattr(type(obj), "__slots__", ()):
            object.__setattr__(obj, name, None)
