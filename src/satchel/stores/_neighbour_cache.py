"""Thread neighbours of rows, kept while their scope is unchanged, so the turns around a
scope's common hits are not read again by every prepare.

A row's neighbours are a function of what its scope holds: a write to the scope (an
entry added, forgotten, replaced or erased) or another process's commit moves the
scope's write version (the store's ``scope_version``), and every neighbours kept under
an older version is dropped at the next look. Neighbours read while a write was under
way are kept only if the version did not move during the read (the caller checks), so
nothing read before a write is served after it.

Measured on LoCoMo (two conversations, every question asked once): 88% of the rows
whose neighbours a prepare asks for were asked for by an earlier prepare of the scope.

Like the evidence cache, entries cost the garbage collector little: a row's neighbours
are kept as one tuple of ints (how many come before, then the keys before and after),
which a young collection untracks, not as ``ThreadNeighbours`` objects. Only the event
loop's thread uses it (``SqliteStore.neighbours``, ``OceanBaseStore.neighbours``), so
it takes no lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vocabulary._evidence import ThreadNeighbours

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..vocabulary._families import Family

#: Rows kept over every scope: ten 600-turn conversations several times over. A full
#: cache drops its oldest scopes whole.
CAPACITY = 16384

#: A row's neighbours as kept: ``(len(before), *before, *after)``; ``()`` for a row that
#: has none to give (not live, or in no thread), which a read would not find either.
_Kept = tuple[int, ...]


class NeighbourCache:
    """Thread neighbours by (family, scope, reach) and row, for one write version of the
    scope each."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._places: dict[tuple[Family, str, int], tuple[int, dict[int, _Kept]]] = {}
        self._size = 0
        self._capacity = capacity

    def __len__(self) -> int:
        return self._size

    def split(
        self, family: Family, scope_id: str, reach: int, version: int, keys: Sequence[int]
    ) -> tuple[dict[int, ThreadNeighbours], list[int]]:
        """The kept neighbours of ``keys`` at the scope's ``version`` (a row known to
        have none is left out, as a read leaves it out), and the keys to read."""
        place = self._places.get((family, scope_id, reach))
        if place is None or place[0] != version:
            return {}, list(keys)
        rows = place[1]
        found: dict[int, ThreadNeighbours] = {}
        missing: list[int] = []
        for key in keys:
            kept = rows.get(key)
            if kept is None:
                missing.append(key)
            elif kept:
                before = kept[0] + 1
                found[key] = ThreadNeighbours(kept[1:before], kept[before:])
        return found, missing

    def remember(
        self,
        family: Family,
        scope_id: str,
        reach: int,
        version: int,
        read: tuple[Sequence[int], Mapping[int, ThreadNeighbours]],
    ) -> None:
        """Keep what a read of the ``asked`` keys ``found`` (``read``), made while the
        scope stayed at ``version``; a key absent from ``found`` is kept as having none."""
        asked, found = read
        where = (family, scope_id, reach)
        place = self._places.get(where)
        if place is None or place[0] != version:
            if place is not None:
                self._size -= len(place[1])
            place = self._places[where] = (version, {})
        rows = place[1]
        for key in asked:
            if key not in rows:
                self._size += 1
            near = found.get(key)
            rows[key] = () if near is None else (len(near.before), *near.before, *near.after)
        self._evict(where)

    @staticmethod
    def joined(
        keys: Sequence[int],
        found: dict[int, ThreadNeighbours],
        read: dict[int, ThreadNeighbours],
    ) -> dict[int, ThreadNeighbours]:
        """What :meth:`split` found kept and a read of the rest found, in ``keys``'
        order."""
        if not found:
            return read
        found.update(read)
        return {key: found[key] for key in keys if key in found}

    def _evict(self, newest: tuple[Family, str, int]) -> None:
        """Drop the oldest places, whole, until the cache is within its capacity (the one
        just written last)."""
        for where in list(self._places):
            if self._size <= self._capacity:
                break
            if where != newest:
                self._size -= len(self._places.pop(where)[1])
