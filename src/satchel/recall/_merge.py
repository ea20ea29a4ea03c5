"""The merge rule: how an expansion round's candidates join the committed ones. Pure.

Per family, the committed candidates stay a prefix; a later round contributes only
identities not already present, in its own fused order, through the same round-robin
allocator and within the room left under the family's ceiling. So round 0 is never
displaced, a saturated family cannot grow, and no merge can break the Builder invariant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._allocation import allocate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..vocabulary._evidence import Evidence


def merge_rounds(
    committed: Sequence[Evidence],
    added: Sequence[Sequence[Evidence]],
    ceiling: int,
    delays: Sequence[int] | None = None,
) -> tuple[Evidence, ...]:
    """Append a round's new identities (one ranked list per scope) to ``committed``.

    On an identity collision the earlier occurrence is kept; ``delays`` are
    :func:`allocate`'s.
    """
    room = ceiling - len(committed)
    if room <= 0:
        return tuple(committed)
    present = {item.identity for item in committed}
    fresh = [[item for item in ranked if item.identity not in present] for ranked in added]
    return (*committed, *allocate(fresh, room, delays))
