"""Fair shares: each search of a round reads evidence only for what it can place.

A family's candidates are allocated round-robin across its scopes under the family's
room (``recall.allocate``), so of 8 scopes each places about an eighth of the room. A
search that read evidence for the whole room would read 8 times what is used. So the
searches of a family post how many fresh candidates they ranked, wait for each other,
and each then reads what the allocator can take from it (``recall.takes``).

What a search posts is an upper bound on what it can give: evidence the caller excluded
is passed over while reading, and so is a record that left search meanwhile. So each
search computes its own share with its own count and the others' counts less their
scope's excluded citations: it may read a little more than it places, never less. (A
record retired by a concurrent write between ranking and reading is not foreseen: its
place goes unfilled that round.)

A family that searches one scope for several queries (a planner's) can rank one
identity in two lists, which the counts cannot see: its searches read the whole room,
as does a search alone in its family.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import anyio

from ..recall import takes

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from ..vocabulary import Family


class Searched(Hashable, Protocol):
    """What a share needs of a search: its family and scope (``_search.SearchSpec``)."""

    @property
    def family(self) -> Family: ...

    @property
    def scope_id(self) -> str: ...


S = TypeVar("S", bound="Searched")


class FairShares(Generic[S]):
    """The room of each family of one round, divided among its searches."""

    def __init__(
        self,
        specs: Sequence[S],
        running: Collection[S],
        room: Mapping[Family, int],
        delays: Mapping[S, int],
        excluded_per_place: Mapping[tuple[Family, str], int],
    ) -> None:
        """``specs``: every search of the round's families in allocation order (one
        that does not run offers nothing); ``running``: those that run; ``delays``: the
        rank positions each search's list gives way in allocation;
        ``excluded_per_place``: how many citations the caller holds per (family, scope)
        (``Exclusions.excluded_per_place``)."""
        self._room = room
        self._delays = delays
        self._excluded = excluded_per_place
        self._families: dict[Family, list[S]] = {}
        for spec in specs:
            self._families.setdefault(spec.family, []).append(spec)
        self._waiting: dict[Family, set[S]] = {
            family: {spec for spec in own if spec in running}
            for family, own in self._families.items()
        }
        self._posted: dict[S, int] = {}
        self._all_posted = {family: anyio.Event() for family in self._families}

    def whole_room(self, spec: S) -> bool:
        """Whether ``spec`` reads for the family's whole room (alone, or a family whose
        lists may repeat an identity): it then never waits for the others."""
        own = self._families[spec.family]
        alone = len(self._waiting[spec.family]) <= 1
        return alone or len({other.scope_id for other in own}) < len(own)

    def room(self, spec: S) -> int:
        return self._room.get(spec.family, 0)

    async def share(self, spec: S, available: int) -> int:
        """How many of its ``available`` fresh candidates ``spec`` should read, once
        every running search of its family has posted its own count."""
        family = spec.family
        if self.whole_room(spec):
            return self.room(spec)
        self._posted[spec] = available
        waiting = self._waiting[family]
        if all(other in self._posted for other in waiting):
            self._all_posted[family].set()
        await self._all_posted[family].wait()
        own = self._families[family]
        lengths = [
            max(0, self._posted.get(other, 0) - self._excluded.get((family, other.scope_id), 0))
            for other in own
        ]
        index = own.index(spec)
        lengths[index] = available
        delays = [self._delays.get(other, 0) for other in own]
        return takes(lengths, self.room(spec), delays)[index]
