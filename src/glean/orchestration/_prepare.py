"""One prepare, from a validated request to a fitted pack: the runtime's hot path.

Analyses and embeds the query once, reads the unsearched families (the profile) once,
starts the session's turn, and hands the coordinator a :class:`~._packer.Packer` to fit
with. Records the turn in the session ledger and reports the effort to the sink, whose
errors are logged and swallowed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

import attrs

from ..builder import FitMemo
from ..vocabulary import analyse_query, rules
from ._packer import Packer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..builder import BuildResult
    from ..embedders import Embedder
    from ..recall import RecallEffort, RecallEffortSink
    from ..stores import Store
    from ..vocabulary import Evidence, Family, Limits, ResolvedRequest
    from ._coordinator import Coordinator
    from ._ledger import DedupLedger
    from ._locks import ScopeGuards

logger = logging.getLogger("glean")


@attrs.frozen
class Preparer:
    """Runs prepares for one runtime."""

    store: Store
    embedder: Embedder
    limits: Limits
    guards: ScopeGuards
    coordinator: Coordinator
    sink: RecallEffortSink | None
    ledger: DedupLedger | None = None
    #: Encoded candidates shared by every prepare: an item is encoded once, not per fit.
    memo: FitMemo = attrs.field(
        default=attrs.Factory(lambda self: FitMemo(self.limits), takes_self=True)
    )

    async def prepare(self, request: ResolvedRequest) -> BuildResult:
        """Recall and fit one request; the final fit.

        Raises:
            PrepareFailedError: a search of round 0 failed.
            PrepareTimeoutError: round 0 overran its deadline.
        """
        query = analyse_query(request.query)
        vector = await self._embed(request)
        packer = Packer(
            request, self.limits, self.memo, unsearched=await self._read_unsearched(request)
        )
        session = request.session_id if self.ledger is not None else None
        turn = 0
        if session is not None and self.ledger is not None:
            turn, packer.held = self.ledger.begin_turn(session)
        effort = self.sink is not None
        recalled = await self.coordinator.recall(request, query, vector, packer, effort=effort)
        if session is not None and self.ledger is not None:
            self.ledger.record(session, turn, recalled.build.delivered)
        if recalled.effort is not None:
            await self._report(recalled.effort)
        return recalled.build

    async def _embed(self, request: ResolvedRequest) -> npt.NDArray[np.float32] | None:
        """The query's vector, once for every family, scope and round; None when no
        selected family has a vector channel."""
        if not any(rules(family).vector_channel for family in request.families):
            return None
        vectors = await self.embedder.embed([request.query])
        return cast("npt.NDArray[np.float32]", vectors[0])

    async def _read_unsearched(
        self, request: ResolvedRequest
    ) -> dict[Family, tuple[Evidence, ...]]:
        """The selected families that are read whole, not searched: the scope's profile."""
        if not any(not rules(family).searchable for family in request.families):
            return {}
        async with self.guards.reading(request.scope_id):
            found = await self.store.get_profile(request.scope_id)
        return {"profile": () if found is None else (found,)}

    async def _report(self, effort: RecallEffort) -> None:
        assert self.sink is not None
        try:
            await self.sink(effort)
        except Exception:  # a failing sink never fails the prepare
            logger.exception("recall effort sink failed")
