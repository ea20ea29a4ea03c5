"""What the garbage collector would walk: objects it tracks, reachable from one object."""

from __future__ import annotations

import gc
import types

#: Objects every part of the program shares, not what one object holds: a class, a
#: module. Not followed, so that a count stays the root's own (and a walk stays short,
#: rather than reaching every module loaded through a class's methods).
SHARED: tuple[type, ...] = (type, types.ModuleType)


def tracked_within(root: object) -> int:
    """How many objects reachable from ``root`` (itself included) the collector tracks.

    Every one of them is walked by each collection of the generation it is in; an object
    the collector does not track (a string, a number, a dict of such) costs it nothing.
    Classes and modules (:data:`SHARED`) are neither counted nor followed.
    """
    seen: set[int] = set()
    pending = [root]
    count = 0
    while pending:
        found = pending.pop()
        if id(found) in seen:
            continue
        seen.add(id(found))
        if isinstance(found, SHARED):
            continue
        if gc.is_tracked(found):
            count += 1
        pending.extend(gc.get_referents(found))
    return count
