"""The budget probe: the Builder's fitting pass, keeping only its counts.

Pure: no I/O. The recall gate reads it to tell a budget-bound pack (items cut or
dropped, nothing unused) from a recall-thin one (bytes to spare).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vocabulary._budget import BudgetView
from ._fitting import FittedPack, fit_pack

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._families import Family, Tier
    from ..vocabulary._limits import Limits
    from ..vocabulary._requests import Section


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
    return budget_view(pack, max_bytes)


def budget_view(pack: FittedPack, max_bytes: int) -> BudgetView:
    """The view of one fitting pass: what it delivered, cut, dropped and left unused."""
    return BudgetView(
        max_bytes=max_bytes,
        delivered_items=len(pack.items),
        truncated_items=pack.omissions.truncated_items,
        dropped_items=pack.omissions.dropped_items,
        unused_bytes=max_bytes - pack.content_bytes,
    )
