"""What the garbage collector would walk: objects it tracks, reachable from one object."""

from __future__ import annotations

import gc


def tracked_within(root: object) -> int:
    """How many objects reachable from ``root`` (itself included) the collector tracks.

    Every one of them is walked by each collection of the generation it is in; an object
    the collector does not track (a string, a number, a dict of such) costs it nothing.
    """
    seen: set[int] = set()
    pending = [root]
    count = 0
    while pending:
        found = pending.pop()
        if id(found) in seen:
            continue
        seen.add(id(found))
        if gc.is_tracked(found):
            count += 1
        pending.extend(gc.get_referents(found))
    return count
