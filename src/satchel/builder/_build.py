"""The Builder's entry point: fit the candidates, then render what was delivered.

Pure: no I/O, no anyio, no store, no OpenTelemetry, no clock. The same input always
renders the same bytes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs

from ..vocabulary._budget import BudgetView
from ..vocabulary._errors import InvariantError
from ..vocabulary._requests import PreparedContext, Section
from ._fitting import FitMemo, Fitted, FittedPack, OmissionCounts, fitting, run_through
from ._render import WRAPPER_BYTES, group_line, render_pack
from ._utf8 import utf8_len

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._families import Family, Tier
    from ..vocabulary._limits import Limits


@attrs.frozen
class DeliveredItem:
    """One item of a pack: the evidence, the tier it was served at, whether it was cut."""

    evidence: Evidence
    tier: Tier
    truncated: bool


@attrs.frozen(eq=False)
class BuildResult:
    """A fitted pack: what it delivers in render order, what the budget cost, and its
    rendering on demand.

    A fit is judged by its counts (the gate's budget view, the ledger's delivered items);
    it is rendered only by :meth:`render`, which its owner calls once for the pack it
    returns, so a fit that an expansion round supersedes is never rendered.
    """

    _pack: FittedPack

    def render(self) -> PreparedContext:
        """The prepared context ("empty" when nothing fits). Renders anew at each call.

        Raises:
            InvariantError: if the rendered length disagrees with the fitted length.
        """
        return _prepared(self._pack)

    @functools.cached_property
    def delivered(self) -> tuple[DeliveredItem, ...]:
        """The delivered items, in render order."""
        return tuple(_delivered(item) for item in self._pack.items)

    @property
    def delivered_count(self) -> int:
        return len(self._pack.items)

    @property
    def content_bytes(self) -> int:
        """The rendered context's length in UTF-8 bytes, known without rendering it."""
        return self._pack.content_bytes

    @property
    def omissions(self) -> OmissionCounts:
        return self._pack.omissions

    @property
    def duplicates(self) -> tuple[Evidence, ...]:
        """The candidates left out because an item offered before them says the same
        text (case, whitespace and punctuation aside), in the order they were offered:
        an explanation's omissions with the cause ``duplicate``."""
        return self._pack.duplicates

    def keep(self, indices: Sequence[int]) -> BuildResult:
        """The pack with only the delivered items at ``indices``, in that order within
        their groups (the groups keep their order: an assembly's sections stay in the
        caller's order). The items keep their placements, so the smaller pack still
        fits; omissions stay those of the fit. An empty selection is the empty pack.
        """
        pack = self._pack
        groups = dict.fromkeys(item.candidate.group for item in pack.items)
        rank = {group: position for position, group in enumerate(groups)}
        chosen = sorted(
            (pack.items[index] for index in indices),
            key=lambda item: rank[item.candidate.group],
        )  # stable: the caller's order within each group
        return BuildResult(attrs.evolve(pack, items=tuple(chosen), content_bytes=_size(chosen)))

    def budget(self, max_bytes: int) -> BudgetView:
        """The budget probe: what this fitting pass delivered, cut, dropped and left unused
        of ``max_bytes``, read without rendering (the gate reads it after every fit)."""
        pack = self._pack
        return BudgetView(
            max_bytes=max_bytes,
            delivered_items=len(pack.items),
            truncated_items=pack.omissions.truncated_items,
            dropped_items=pack.omissions.dropped_items,
            unused_bytes=max_bytes - pack.content_bytes,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BuildResult):
            return NotImplemented
        return (self.render(), self.delivered, self.omissions) == (
            other.render(),
            other.delivered,
            other.omissions,
        )

    __hash__ = None  # type: ignore[assignment]


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
        memo: Encoded candidates reused across fits (made for limits of the same item
            cap and truncation floor), so a refit encodes only new candidates; the
            result is identical without it.

    Returns:
        The fitted pack ("empty" when nothing fits; :meth:`BuildResult.render` renders
        it), the delivered items and the omission counts.
    """
    fitted = fitting(
        candidates,
        max_bytes=max_bytes,
        sections=sections,
        detail=detail,
        limits=limits,
        memo=memo,
    )
    return BuildResult(run_through(fitted))


def _size(items: Sequence[Fitted]) -> int:
    """The rendered length of ``items``, counted as fitting counts it."""
    if not items:
        return 0
    groups = {item.candidate.group for item in items}
    size = WRAPPER_BYTES + sum(group_line(group)[1] for group in groups)
    return size + sum(item.placement.size for item in items)


def _prepared(pack: FittedPack) -> PreparedContext:
    if not pack.items:
        return PreparedContext.empty()
    content = render_pack((item.candidate.group, _item_line(item)) for item in pack.items)
    content_bytes = utf8_len(content)
    if content_bytes != pack.content_bytes:
        raise InvariantError(
            f"rendered {content_bytes} bytes where fitting counted {pack.content_bytes}"
        )
    return PreparedContext(status="ready", content=content, content_bytes=content_bytes)


def _item_line(item: Fitted) -> str:
    placement = item.placement
    return item.candidate.render(placement.tier, placement.literal, truncated=placement.truncated)


def _delivered(item: Fitted) -> DeliveredItem:
    placement = item.placement
    return DeliveredItem(
        evidence=item.candidate.evidence, tier=placement.tier, truncated=placement.truncated
    )
