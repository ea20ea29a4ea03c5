"""``satchel.Receipt``, ``satchel.Omission`` and ``satchel.Explanation``: why a pack
holds what it holds, and why it left out what it left out.

``Runtime.explain_context`` makes them beside the very pack ``prepare_context`` returns.
They name records (citations) and say how each ranked, so they must never reach a span,
a log line or the ``RecallEffort`` sink: only the caller who asked gets them. Pure
values.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._citations import Citation
    from ._families import Tier
    from ._requests import PreparedContext

#: A ranked list a search fuses: full text, vector similarity, the time window a query's
#: date names, and a hit's thread neighbours.
Channel: TypeAlias = Literal["lexical", "vector", "time", "neighbour"]
CHANNELS: Final[tuple[Channel, ...]] = ("lexical", "vector", "time", "neighbour")

#: Why a candidate was not delivered (:class:`Omission`).
OmissionCause: TypeAlias = Literal["budget", "held-back", "excluded", "duplicate", "floor"]
BUDGET: Final = "budget"
HELD_BACK: Final = "held-back"
EXCLUDED: Final = "excluded"
DUPLICATE: Final = "duplicate"
FLOOR: Final = "floor"
OMISSION_CAUSES: Final[tuple[OmissionCause, ...]] = (BUDGET, HELD_BACK, EXCLUDED, DUPLICATE, FLOOR)


def _channels(value: Mapping[str, int]) -> Mapping[str, int]:
    """A read-only copy of ``value``, in :data:`CHANNELS` order."""
    return MappingProxyType({name: value[name] for name in CHANNELS if name in value})


@attrs.frozen
class Receipt:
    """Why one delivered item is in the pack.

    Attributes:
        citation: the item's exact citation, equal to what :func:`satchel.parse_context`
            reads for it.
        channels: each channel that ranked it (``lexical``, ``vector``, ``time``,
            ``neighbour``) and its rank there, 1-based, among the candidates that
            channel admitted in the round that committed it; empty for a profile, which
            is read whole, not searched.
        score: its fused score (weighted reciprocal-rank fusion, a thread neighbour's
            lifted score included), by which its search ranked it; None for a profile.
        round: the round that committed it: 0, or an expansion round (1, 2).
        tier: the tier it was delivered at.
        truncated: whether its content was cut to fit.
    """

    citation: Citation
    channels: Mapping[str, int] = attrs.field(converter=_channels, hash=False)
    score: float | None
    round: int
    tier: Tier
    truncated: bool


@attrs.frozen
class Omission:
    """A candidate the pack does not deliver, and why.

    Attributes:
        citation: the record version that was left out.
        cause: ``budget`` (committed, or ranked past the family's candidate ceiling,
            but the pack's bytes or item limits had no room for it), ``held-back`` (the
            session's dedup ledger holds it back this turn), ``excluded`` (the request's
            ``exclude`` names it), ``duplicate`` (its text, case, whitespace and
            punctuation aside, repeats a candidate offered before it) or ``floor``
            (retrieved, but below the admission floor of the last committed round; or
            any candidate of a prepare that abstained, its round showing no evidence of
            relevance).
        channels: as :attr:`Receipt.channels`; for a candidate below the floor, its
            rank in what each channel retrieved.
        score: its fused score; None for a candidate below the floor (never fused) or
            a profile.
    """

    citation: Citation
    cause: OmissionCause
    channels: Mapping[str, int] = attrs.field(converter=_channels, hash=False)
    score: float | None


@attrs.frozen
class Explanation:
    """What ``Runtime.explain_context`` returns.

    Attributes:
        context: the pack, byte for byte what ``prepare_context`` returns for the same
            request and state.
        receipts: one per delivered item, in pack order.
        omitted: at most :data:`MAX_OMISSIONS` candidates that were not delivered, best
            first: those committed to the pack's candidates (by fused score), then
            those ranked but never read for want of room, then those below the floor
            (by their best channel rank).
    """

    context: PreparedContext
    receipts: tuple[Receipt, ...]
    omitted: tuple[Omission, ...]


#: The most candidates :attr:`Explanation.omitted` lists.
MAX_OMISSIONS: Final = 8
