"""The Builder's entry point: fit the candidates, then render what was delivered.

Pure: no I/O, no anyio, no store, no OpenTelemetry, no clock. The same input always
renders the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .._errors import InvariantError
from .._requests import PreparedContext, Section
from ._fitting import FitMemo, Fitted, FittedPack, OmissionCounts, fit_pack
from ._utf8 import utf8_len

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._families import Family, Tier
    from .._limits import Limits
    from ..recall._evidence import Evidence


@attrs.frozen
class DeliveredItem:
    """One item of a pack: the evidence, the tier it was served at, whether it was cut."""

    evidence: Evidence
    tier: Tier
    truncated: bool


@attrs.frozen
class BuildResult:
    """The rendered context, what it delivered in render order, and what the budget cost."""

    context: PreparedContext
    delivered: tuple[DeliveredItem, ...]
    omissions: OmissionCounts


def build_context(
    candidates: Mapping[Family, Sequence[Evidence]],
    *,
    max_bytes: int,
    sections: Sequence[Section] | None,
    detail: Mapping[Family, Tier],
    limits: Limits,
    memo: FitMemo | None = None,
) -> BuildResult:
    """Fit ranked candidates into ``max_bytes`` and render them as a prepared context.

    Args:
        candidates: Each family's evidence, best first, already clamped to its ceiling.
        max_bytes: The budget for the rendered content, in UTF-8 bytes.
        sections: The assembly's sections in the caller's order, or None for the
            default interleaved pack.
        detail: Tier pins by family; empty for none.
        limits: Item limits, the per-item byte cap and the truncation floor.
        memo: Reused across fits of one prepare (same detail and limits) so a refit
            encodes only new candidates; the result is identical without it.

    Returns:
        The prepared context ("empty" when nothing fits), the delivered items and the
        omission counts.

    Raises:
        InvariantError: if the rendered length disagrees with the fitted length.
    """
    pack = fit_pack(
        candidates,
        max_bytes=max_bytes,
        sections=sections,
        detail=detail,
        limits=limits,
        memo=memo,
    )
    delivered = tuple(_delivered(item) for item in pack.items)
    return BuildResult(context=_prepared(pack), delivered=delivered, omissions=pack.omissions)


def _prepared(pack: FittedPack) -> PreparedContext:
    if not pack.items:
        return PreparedContext.empty()
    content = pack.layout.render(
        (item.candidate.evidence.family, _item_json(item)) for item in pack.items
    )
    content_bytes = utf8_len(content)
    if content_bytes != pack.content_bytes:
        raise InvariantError(
            f"rendered {content_bytes} bytes where fitting counted {pack.content_bytes}"
        )
    return PreparedContext(status="ready", content=content, content_bytes=content_bytes)


def _item_json(item: Fitted) -> str:
    placement = item.placement
    return item.candidate.head.render(
        placement.tier, placement.literal, truncated=placement.truncated
    )


def _delivered(item: Fitted) -> DeliveredItem:
    placement = item.placement
    return DeliveredItem(
        evidence=item.candidate.evidence, tier=placement.tier, truncated=placement.truncated
    )
