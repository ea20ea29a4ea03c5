"""Fair shares: each search of a round reads evidence only for what it can place.

A family's candidates are allocated round-robin across its scopes under the family's
room (``recall.allocate``), so of 8 scopes each places about an eighth of the room. A
search that read evidence for the whole room would read 8 times what is used. So a
round ranks first, every search in its own task; the coordinator then computes here,
from how many fresh candidates each search ranked, how many each should read
(``recall.takes``); and the round reads second, every search again in its own task. No
search ever waits on another.

What a search ranked is an upper bound on what it can give: evidence the caller
excluded is passed over while reading, and so is a record that left search meanwhile.
So each share counts the search's own ranked candidates and the others' less their
scope's excluded citations: a search may read a little more than it places, never less.
(A record retired by a concurrent write between ranking and reading is not foreseen:
its place goes unfilled that round.)

A search alone in its family, or a family that searches one scope for several queries
(a planner's, whose lists can rank one identity twice, which counts cannot see), reads
the whole room, and reads it as soon as it has ranked. Pure: no I/O, no tasks.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..recall import takes

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from ..vocabulary import Family


class Searched(Hashable, Protocol):
    """What a share needs of a search: its family and scope (``_state.SearchSpec``)."""

    @property
    def family(self) -> Family: ...

    @property
    def scope_id(self) -> str: ...


S = TypeVar("S", bound="Searched")


def whole_room(every: Sequence[S], running: Collection[S]) -> frozenset[S]:
    """The searches of ``running`` that read their family's whole room right after
    ranking: alone in their family, or in a family whose lists may repeat an identity
    (it searches one scope for several queries). ``every``: every search of the round's
    families, in allocation order."""
    families: dict[Family, list[S]] = {}
    for spec in every:
        families.setdefault(spec.family, []).append(spec)
    whole: set[S] = set()
    for own in families.values():
        alone = sum(spec in running for spec in own) <= 1
        if alone or len({spec.scope_id for spec in own}) < len(own):
            whole.update(spec for spec in own if spec in running)
    return frozenset(whole)


def fair_shares(
    every: Sequence[S],
    ranked: Mapping[S, int],
    room: Mapping[Family, int],
    delays: Mapping[S, int],
    excluded_per_place: Mapping[tuple[Family, str], int],
) -> dict[S, int]:
    """How many of its fresh candidates each search of ``ranked`` should read.

    ``every``: every search of the round's families in allocation order (one that did not
    run offers nothing); ``ranked``: how many fresh candidates each search that shares
    its family's room ranked; ``delays``: the rank positions each search's list gives
    way in allocation; ``excluded_per_place``: how many citations the caller holds per
    (family, scope) (``Exclusions.excluded_per_place``)."""
    families: dict[Family, list[S]] = {}
    for spec in every:
        families.setdefault(spec.family, []).append(spec)
    wanted: dict[S, int] = {}
    if not excluded_per_place:  # every search of a family sees the same lengths: one pass
        for family, own in families.items():
            if not any(spec in ranked for spec in own):
                continue
            lengths = [ranked.get(spec, 0) for spec in own]
            own_delays = [delays.get(spec, 0) for spec in own]
            taken = takes(lengths, room.get(family, 0), own_delays)
            wanted.update((spec, count) for spec, count in zip(own, taken, strict=True)
                          if spec in ranked)  # fmt: skip
        return wanted
    for spec, available in ranked.items():
        family = spec.family
        own = families[family]
        lengths = [
            max(0, ranked.get(other, 0) - excluded_per_place.get((family, other.scope_id), 0))
            for other in own
        ]
        index = own.index(spec)
        lengths[index] = available
        own_delays = [delays.get(other, 0) for other in own]
        wanted[spec] = takes(lengths, room.get(family, 0), own_delays)[index]
    return wanted
