"""The budget probe: the Builder's fitting pass, keeping only its counts.

Pure: no I/O. The recall gate reads it to tell a budget-bound pack (items cut or
dropped, nothing unused) from a recall-thin one (bytes to spare).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ._fitting import fit_pack

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._families import Family, Tier
    from .._limits import Limits
    from .._requests import Section
    from ..recall._evidence import Evidence
    from ._fitting import OmissionCounts


@attrs.frozen
class BudgetView:
    """``max_bytes`` with what one fitting pass over the candidates would deliver."""

    max_bytes: int
    delivered_items: int
    truncated_items: int
    dropped_items: int
    unused_bytes: int

    @classmethod
    def from_fit(
        cls, max_bytes: int, delivered: int, omissions: OmissionCounts, content_bytes: int
    ) -> BudgetView:
        """The view of one fitting pass: what it delivered, cut, dropped and left unused."""
        return cls(
            max_bytes=max_bytes,
            delivered_items=delivered,
            truncated_items=omissions.truncated_items,
            dropped_items=omissions.dropped_items,
            unused_bytes=max_bytes - content_bytes,
        )


def probe_budget(
    candidates: Mapping[Family, Sequence[Evidence]],
    *,
    max_bytes: int,
    sections: Sequence[Section] | None,
    detail: Mapping[Family, Tier],
    limits: Limits,
) -> BudgetView:
    """Run the Builder's fitting over ``candidates`` without rendering.

    Takes the same arguments as :func:`~glean.builder.build_context` and agrees with
    its counts and its ``content_bytes`` exactly; ``unused_bytes`` is ``max_bytes``
    when nothing would be delivered.
    """
    pack = fit_pack(
        candidates, max_bytes=max_bytes, sections=sections, detail=detail, limits=limits
    )
    return BudgetView.from_fit(max_bytes, len(pack.items), pack.omissions, pack.content_bytes)
