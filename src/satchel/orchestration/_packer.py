"""The Packer: turns one prepare's committed candidates into a fitted pack.

The preparer makes one for each prepare and the coordinator awaits :meth:`Packer.pack`
after round 0 and after each expansion round that adds candidates; the first fit opens
the prepare's ``satchel.context.build`` span (``_telemetry.BuildSpan``), which the
preparer closes once the pack is final. A fit runs on the loop in short
stretches, each in a loop turn of its own (a whole fit of a large scope's candidates
would hold the host's loop 1.5-2 ms), and once begun it finishes: it is shielded from
cancellation, so a prepare's committed candidates and its fit never disagree.

It joins the families read whole for this prepare (the profile), leaves out every
identity the prepare never delivers (the caller's exclusions and what the session
ledger holds back), then runs the pure Builder. It must never read or render: the
bodies a request pins were read by the searches of the round that found them, inside
that round's all-or-nothing stage, and the preparer renders the final fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import attrs

from .._loop import loop_turn
from ..builder import BuildResult, fitting

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..builder import FitMemo
    from ..vocabulary import Evidence, Family, Limits
    from ._committed import Candidates
    from ._state import PrepareState
    from ._telemetry import BuildSpan


@attrs.frozen
class Packer:
    """Fits candidates for one prepare.

    Attributes:
        state: the prepare's state: its request, its profile and its exclusions.
        limits: the prepare's limits (the runtime's, scaled to its budget).
        memo: the runtime's encoding memo, shared by every fit.
        span: the prepare's build span, opened by the first fit.
    """

    state: PrepareState
    limits: Limits
    memo: FitMemo
    span: BuildSpan

    async def pack(self, candidates: Candidates) -> BuildResult:
        """Fit ``candidates`` with the profile, less what the prepare never delivers;
        one loop turn per stretch of the fit. Never cancelled once begun."""
        self.span.started()
        request = self.state.request
        merged = {**candidates, **self.state.unsearched}
        never = self.state.exclusions.never_delivered
        stretches = fitting(  # nothing runs until the first stretch is asked for
            without(merged, never) if never else merged,
            max_bytes=request.max_bytes,
            sections=request.sections,
            detail=request.detail,
            limits=self.limits,
            memo=self.memo,
        )
        with anyio.CancelScope(shield=True):
            while True:
                async with loop_turn():
                    try:
                        next(stretches)
                    except StopIteration as done:
                        fitted = done.value
                        break
        return BuildResult(fitted)


def without(
    candidates: Mapping[Family, Sequence[Evidence]], identities: frozenset[str]
) -> dict[Family, tuple[Evidence, ...]]:
    """The candidates less those whose identity is in ``identities``, each family's
    order kept."""
    return {
        family: tuple(item for item in items if item.identity not in identities)
        for family, items in candidates.items()
    }
