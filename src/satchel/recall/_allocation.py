"""Allocators: clamp a family's candidates to its ceiling, round-robin across scopes.

Pure. Applied to round 0 and, unchanged, to every merged set, so a merge can never
exceed a ceiling (the Builder invariant holds by construction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vocabulary._errors import InvariantError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..vocabulary._evidence import Evidence


def allocate(
    per_scope: Sequence[Sequence[Evidence]],
    ceiling: int,
    delays: Sequence[int] | None = None,
) -> tuple[Evidence, ...]:
    """Take rank 1 of every scope in scope order, then rank 2, ... up to ``ceiling``.

    Each scope's list is already ranked; an identity seen twice is kept once, at its
    first position. ``delays`` gives way per list: a list delayed by ``d`` offers its
    rank 1 in the round of everyone else's rank ``d + 1`` (a reference scope behind the
    request's own).
    """
    lists: Sequence[Sequence[Evidence | None]] = per_scope
    if delays and any(delays):  # a delay is that many empty places before the list
        lists = [
            [None] * delay + list(ranked) for ranked, delay in zip(per_scope, delays, strict=True)
        ]
    chosen: list[Evidence] = []
    seen: set[str] = set()
    if len(lists) == 1:  # one scope (the common case): its own order, each identity once
        for item in lists[0]:
            if item is None or item.identity in seen:
                continue
            seen.add(item.identity)
            chosen.append(item)
            if len(chosen) == ceiling:
                break
        return tuple(chosen)
    depth = max((len(ranked) for ranked in lists), default=0)
    for rank in range(depth):
        for ranked in lists:
            item = ranked[rank] if rank < len(ranked) else None
            if item is None or item.identity in seen:
                continue
            seen.add(item.identity)
            chosen.append(item)
            if len(chosen) == ceiling:
                return tuple(chosen)
    return tuple(chosen)


def takes(lengths: Sequence[int], ceiling: int, delays: Sequence[int] | None = None) -> list[int]:
    """How many items :func:`allocate` takes from each list when list ``i`` holds
    ``lengths[i]`` items and no identity is in two lists: what a search must read for
    its list to give all it will be asked for. ``delays`` are :func:`allocate`'s."""
    gaps = list(delays) if delays else [0] * len(lengths)
    taken = [0] * len(lengths)
    if ceiling <= 0:
        return taken
    total = 0
    depth = max((length + gap for length, gap in zip(lengths, gaps, strict=True)), default=0)
    for rank in range(depth):
        for index, (length, gap) in enumerate(zip(lengths, gaps, strict=True)):
            if gap <= rank < gap + length:
                taken[index] += 1
                total += 1
                if total == ceiling:
                    return taken
    return taken


def check_ceiling(family: str, candidates: Sequence[Evidence], ceiling: int) -> None:
    """The Builder invariant: no family offers more than its ceiling."""
    if len(candidates) > ceiling:
        raise InvariantError(f"{family}-candidate-limit: {len(candidates)} > {ceiling}")
