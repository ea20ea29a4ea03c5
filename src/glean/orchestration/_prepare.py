"""One prepare, from a validated request to a fitted pack: the runtime's hot path.

Analyses and embeds the query once, reads the unsearched families (the profile) once,
asks the session ledger what this turn holds back, and hands the coordinator a
:class:`~._packer.Packer` to fit with. Reports the effort to the sink (whose errors are
logged and swallowed), then records the turn. ``prepare_timeout`` bounds all of it.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, cast

import anyio
import attrs

from ..builder import FitMemo
from ..vocabulary import PrepareTimeoutError, analyse_query, rules
from ._packer import Packer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..builder import BuildResult
    from ..embedders import Embedder
    from ..recall import RecallEffort, RecallEffortSink
    from ..stores import Store
    from ..vocabulary import AnalysedQuery, Evidence, Family, Limits, ResolvedRequest
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
    #: Seconds the whole call may take, embedding, every read and the sink included.
    prepare_timeout: float | None = None
    #: Encoded candidates shared by every prepare: an item is encoded once, not per fit.
    memo: FitMemo = attrs.field(
        default=attrs.Factory(lambda self: FitMemo(self.limits), takes_self=True)
    )

    async def prepare(self, request: ResolvedRequest) -> BuildResult:
        """Recall and fit one request; the final fit.

        ``prepare_timeout`` bounds the whole call from here: the query's embedding, the
        profile read, every round (an expansion round that would overrun is discarded)
        and the sink (cut off, the pack still returned). The session's turn counts only
        once the pack is about to be returned.

        Raises:
            PrepareFailedError: a search of round 0 failed.
            PrepareTimeoutError: the call overran ``prepare_timeout`` (or round 0 its
                ``round_timeout``) before a pack was fitted.
        """
        started = anyio.current_time()
        deadline = math.inf if self.prepare_timeout is None else started + self.prepare_timeout
        prelude = None
        with anyio.CancelScope(deadline=deadline):
            prelude = await self._prelude(request)
        if prelude is None:
            raise PrepareTimeoutError("the query was not embedded before prepare_timeout")
        query, vector, packer = prelude
        session = request.session_id if self.ledger is not None else None
        turn = 0
        if session is not None and self.ledger is not None:
            turn, held = self.ledger.next_turn(session)
            packer.held |= held
        recalled = await self.coordinator.recall(
            request, query, vector, packer, effort=self.sink is not None, started=started
        )
        if recalled.effort is not None:
            await self._report(recalled.effort, deadline)
        if session is not None and self.ledger is not None:
            self.ledger.record(session, turn, recalled.build.delivered)
        return recalled.build

    async def _prelude(
        self, request: ResolvedRequest
    ) -> tuple[AnalysedQuery, npt.NDArray[np.float32] | None, Packer]:
        """The query analysed and embedded once, and a Packer holding the profile."""
        query = analyse_query(request.query)
        vector = await self._embed(request)
        unsearched = await self._read_unsearched(request)
        packer = Packer(
            request, self.limits, self.memo, unsearched=unsearched, held=request.excluded
        )
        return query, vector, packer

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

    async def _report(self, effort: RecallEffort, deadline: float) -> None:
        """Await the sink until the prepare's deadline; its failures are only logged."""
        assert self.sink is not None
        with anyio.CancelScope(deadline=deadline) as scope:
            try:
                await self.sink(effort)
            except Exception:  # a failing sink never fails the prepare
                logger.exception("recall effort sink failed")
        if scope.cancelled_caught:
            logger.warning("recall effort sink cut off at prepare_timeout")
