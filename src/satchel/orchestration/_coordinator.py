"""The coordinator: runs the effects of each prepare's recall, round 0, the sufficiency
gate's second looks, and every fit.

An actor: the recall's state machine (``_committed.Recall``) says what it waits for, a
round to search or candidates to fit, and decides everything else; the coordinator runs
that effect and hands the result back. A round's searches run as tasks (``_search``: a
ranking phase and a reading phase, one task group each) that hand back their outcomes
once their group ended without an error; the coordinator receives them. Round 0 must succeed or
the prepare fails. An expansion round that fails or overruns its deadline is discarded
whole, and the committed result stands. Fitting goes through the prepare's
:class:`~._packer.Packer`.

It reads the prepare only from its :class:`~._state.PrepareState` (the request, the
deadline, the exclusions) and must never keep a copy of any of it, nor decide what a
round searches: the machine and the :class:`~satchel.recall.RecallExpander` do.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

import anyio
import attrs

from .._loop import loop_turn
from ..builder import FitMemo
from ..recall import EXPANSION_FAILED, EXPANSION_TIMEOUT
from ..stores._rounds import searching
from ..vocabulary import (
    PrepareFailedError,
    PrepareTimeoutError,
    StoreUnavailableError,
    forget_texts,
)
from ._committed import Fit, Recall
from ._deadlines import until
from ._packer import Packer
from ._search import Searcher

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..stores import Store
    from ..vocabulary import Limits
    from ._committed import Recalled, RecallRules
    from ._locks import ScopeGuards
    from ._options import RuntimeOptions
    from ._search import Round, RoundSettings, SearchOutcome
    from ._state import PrepareState, SearchSpec
    from ._telemetry import BuildSpan, PrepareMetrics

logger = logging.getLogger("satchel")

#: Budgets' rules kept at once (``Coordinator._rules_for``); past it they are made again.
MOST_SCALED: Final = 64


def _round_zero_failed(group: ExceptionGroup[Exception]) -> None:
    """Round 0 failed: the prepare fails, plainly when the caller can retry.

    Raises:
        StoreUnavailableError: a search could not reach the store's database.
        PrepareFailedError: a search failed otherwise.
    """
    unavailable, _ = group.split(StoreUnavailableError)
    if unavailable is not None:
        first = unavailable.exceptions[0]
        raise StoreUnavailableError(f"round 0 failed: {first}") from group
    raise PrepareFailedError(f"round 0 failed: {group.exceptions[0]!r}") from group


class Coordinator:
    """Runs the rounds of every prepare against one store."""

    def __init__(
        self,
        store: Store,
        rules: RecallRules,
        guards: ScopeGuards,
        tracer: Tracer,
        metrics: PrepareMetrics,
        options: RuntimeOptions,
    ) -> None:
        self._store = store
        self._rules = rules
        self._metrics = metrics
        self._searcher = Searcher(
            store, guards, tracer, metrics, identifiers=options.trace_identifiers
        )
        self._tracer = tracer
        self._round_timeout = options.round_timeout
        #: Encoded candidates shared by every prepare: an item is encoded once, not per fit.
        self._memo = FitMemo(rules.limits)
        #: The rules of each budget's limits (``Limits.for_bytes``) that differ from the
        #: runtime's, made once.
        self._scaled: dict[Limits, RecallRules] = {}

    @property
    def policy_id(self) -> str:
        """The gate's effective policy id (``disabled`` without one), as efforts name it."""
        return self._rules.policy_id

    def forget_encodings(self, scope_id: str) -> None:
        """Drop the fit memo's encodings of the scope's evidence, and every kept text
        (``vocabulary._memo``: the fit's dedup keys, the kinds of turns read, their
        terms for rating and whether they say when), after an erase."""
        self._memo.discard(scope_id)
        forget_texts()

    def limits_for(self, max_bytes: int) -> Limits:
        """The limits a prepare for ``max_bytes`` runs under: the runtime's, scaled to
        the budget (``Limits.for_bytes``)."""
        return self._rules.limits.for_bytes(max_bytes)

    def packer(self, state: PrepareState, span: BuildSpan) -> Packer:
        """The packer of one prepare, with the runtime's shared encoding memo."""
        return Packer(state, state.limits, self._memo, span)

    def _rules_for(self, limits: Limits) -> RecallRules:
        """The runtime's rules under a prepare's ``limits``."""
        if limits is self._rules.limits:
            return self._rules
        rules = self._scaled.get(limits)
        if rules is None:
            if len(self._scaled) >= MOST_SCALED:
                self._scaled.clear()
            rules = self._scaled[limits] = attrs.evolve(self._rules, limits=limits)
        return rules

    async def recall(self, state: PrepareState, packer: Packer) -> Recalled:
        """Search, judge, expand at most twice, and pack the committed candidates.

        Round 0 searches every query of ``state`` in one round and every round
        re-admits all their pools; the gate judges by the caller's query. No round runs
        past ``state.deadline``.

        Raises:
            StoreUnavailableError: round 0 could not reach the store's database.
            PrepareFailedError: a search of round 0 failed otherwise.
            PrepareTimeoutError: round 0 overran ``round_timeout`` or the prepare's deadline.
        """
        recall = Recall.start(self._rules_for(state.limits), state)
        versions = self._store.scope_version
        while (effect := recall.pending) is not None:
            if isinstance(effect, Fit):
                build = await packer.pack(effect.candidates)
                async with loop_turn():  # judge the fit, take the next step
                    recall = recall.fitted(build, versions)
            else:
                outcomes, stopped = await self._round(state, effect)
                async with loop_turn():  # commit the round, judge it
                    recall = recall.searched(outcomes, stopped, versions)
        return recall.recalled()

    async def _round(
        self, state: PrepareState, round: Round
    ) -> tuple[dict[SearchSpec, SearchOutcome], str | None]:
        """Run one round in its span, until it ends or its deadline does: its outcomes,
        or why an expansion round was discarded.

        Raises:
            StoreUnavailableError: round 0 could not reach the store's database.
            PrepareFailedError: a search of round 0 failed otherwise.
            PrepareTimeoutError: round 0 overran its deadline.
        """
        settings = round.settings
        outcomes: dict[SearchSpec, SearchOutcome] = {}
        stopped = None
        with self._round_span(settings) as span:
            with until(self._deadline(state)) as scope:
                try:
                    with searching():  # the store looks for other processes' commits once
                        outcomes = await self._searcher.run(state, round)
                except ExceptionGroup as group:
                    span.set_attribute("satchel.recall.round.committed", False)
                    if not settings.index:
                        _round_zero_failed(group)
                    logger.warning("expansion round %d discarded: %r", settings.index, group)
                    stopped = EXPANSION_FAILED
            if scope.cancelled_caught:
                stopped = EXPANSION_TIMEOUT
            # Recorded before the span ends, whichever way the round ended.
            span.set_attribute("satchel.recall.round.committed", stopped is None)
        if not settings.index and scope.cancelled_caught:
            raise PrepareTimeoutError("round 0 did not finish before its deadline")
        if settings.index:
            self._metrics.expanded(settings.action, committed=stopped is None)
        return outcomes, stopped

    def _deadline(self, state: PrepareState) -> float:
        """A round ends ``round_timeout`` after it starts or at the prepare's deadline,
        whichever comes first."""
        if self._round_timeout is None:
            return state.deadline
        return min(anyio.current_time() + self._round_timeout, state.deadline)

    def _round_span(self, settings: RoundSettings) -> AbstractContextManager[Span]:
        attributes: dict[str, AttributeValue] = {
            "satchel.recall.round.index": settings.index,
            "satchel.recall.round.action": settings.action,
        }
        return self._tracer.start_as_current_span("satchel.recall.round", attributes=attributes)
