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
    if not delays or not any(delays):
        return _round_robin(per_scope, ceiling)
    chosen: list[Evidence] = []
    seen: set[str] = set()
    depth = max(
        (len(ranked) + delay for ranked, delay in zip(per_scope, delays, strict=True)), default=0
    )
    for turn in range(depth):
        for ranked, delay in zip(per_scope, delays, strict=True):
            rank = turn - delay
            if not 0 <= rank < len(ranked) or ranked[rank].identity in seen:
                continue
            seen.add(ranked[rank].identity)
            chosen.append(ranked[rank])
            if len(chosen) == ceiling:
                return tuple(chosen)
    return tuple(chosen)


def _round_robin(per_scope: Sequence[Sequence[Evidence]], ceiling: int) -> tuple[Evidence, ...]:
    """:func:`allocate` without delays: the hot path of every prepare."""
    chosen: list[Evidence] = []
    seen: set[str] = set()
    depth = max((len(ranked) for ranked in per_scope), default=0)
    for rank in range(depth):
        for ranked in per_scope:
            if rank >= len(ranked) or ranked[rank].identity in seen:
                continue
            seen.add(ranked[rank].identity)
            chosen.append(ranked[rank])
            if len(chosen) == ceiling:
                return tuple(chosen)
    return tuple(chosen)


def check_ceiling(family: str, candidates: Sequence[Evidence], ceiling: int) -> None:
    """The Builder invariant: no family offers more than its ceiling."""
    if len(candidates) > ceiling:
        raise InvariantError(f"{family}-candidate-limit: {len(candidates)} > {ceiling}")
