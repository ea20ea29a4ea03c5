"""The Packer: turns one prepare's committed candidates into a fitted pack.

The coordinator calls :meth:`Packer.pack` after round 0 and after each expansion round
that adds candidates. It joins the families read whole for this prepare (the profile),
leaves out what the session ledger holds back, then runs the pure Builder. It reads
nothing: the bodies a request pins were read by the searches of the round that found
them, inside that round's all-or-nothing stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..builder import BuildResult, build_context
from ._ledger import hold_back

if TYPE_CHECKING:
    from ..builder import FitMemo
    from ..vocabulary import Evidence, Family, Limits, ResolvedRequest
    from ._committed import Candidates


@attrs.define
class Packer:
    """Fits candidates for one prepare.

    Attributes:
        request: the validated request being prepared.
        limits: the runtime's limits.
        memo: the runtime's encoding memo, shared by every fit.
        unsearched: the families read whole rather than searched (the profile), as read.
        held: evidence identities never delivered in this prepare: those the caller
            excludes and those the session ledger holds back this turn.
    """

    request: ResolvedRequest
    limits: Limits
    memo: FitMemo
    unsearched: dict[Family, tuple[Evidence, ...]] = attrs.Factory(dict)
    held: frozenset[str] = frozenset()

    def pack(self, candidates: Candidates) -> BuildResult:
        """Fit ``candidates`` with the profile, less what the ledger holds back."""
        merged = {**candidates, **self.unsearched}
        if self.held:
            merged = hold_back(merged, self.held)
        return build_context(
            merged,
            max_bytes=self.request.max_bytes,
            sections=self.request.sections,
            detail=self.request.detail,
            limits=self.limits,
            memo=self.memo,
        )
