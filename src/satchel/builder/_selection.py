"""Selection: which ranked candidates a pack offers to fitting, and in what order.

Pure: no I/O. Selection happens before any byte is counted, so the order it fixes is the
order in which items compete for the budget and in which they are rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..vocabulary._families import INTERLEAVE_ORDER, Family

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._limits import Limits
    from ..vocabulary._requests import Section


def select(
    candidates: Mapping[Family, Sequence[Evidence]],
    sections: Sequence[Section] | None,
    limits: Limits,
) -> tuple[Evidence, ...]:
    """The items offered to fitting, in rank order.

    Without sections the families interleave by rank; with sections each section takes
    its family's best items in the caller's order. Either way at most
    ``limits.max_items`` items are offered.
    """
    if sections is None:
        return interleave(candidates, limits)
    return assemble(candidates, sections, limits)


def interleave(
    candidates: Mapping[Family, Sequence[Evidence]], limits: Limits
) -> tuple[Evidence, ...]:
    """Rank 0 of every family in interleave order, then rank 1, and so on.

    Each family stops at its item limit and the whole selection at ``max_items``.
    """
    columns = [
        column
        for family in INTERLEAVE_ORDER
        if (column := candidates.get(family, ())[: limits.item_limit(family)])
    ]
    if len(columns) == 1:  # one family: its own order (the common case, no interleave)
        return tuple(columns[0][: limits.max_items])
    selected: list[Evidence] = []
    for rank in range(max((len(column) for column in columns), default=0)):
        selected.extend(column[rank] for column in columns if rank < len(column))
        if len(selected) >= limits.max_items:
            break
    return tuple(selected[: limits.max_items])


def assemble(
    candidates: Mapping[Family, Sequence[Evidence]],
    sections: Sequence[Section],
    limits: Limits,
) -> tuple[Evidence, ...]:
    """Each section's best ``limit`` items, sections in the caller's order.

    Families without a section are not offered at all.
    """
    selected: list[Evidence] = []
    for section in sections:
        family = cast("Family", section.family)
        selected.extend(candidates.get(family, ())[: section.limit])
    return tuple(selected[: limits.max_items])
