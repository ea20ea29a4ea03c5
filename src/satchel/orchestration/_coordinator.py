"""The coordinator: round 0, the sufficiency gate, and at most two bounded second looks.

An actor: each round's searches run as tasks (``_search``: a ranking phase and a reading
phase, each one task group) that send their outcomes through memory object streams; the
coordinator receives them and alone stages and commits them. Round 0 is committed
unconditionally. An expansion round is staged whole and committed only if every search
in it succeeded before the round's deadline; otherwise it is discarded and the committed
result stands. The gate fails closed. Fitting goes through the prepare's
:class:`~._packer.Packer` after each commit.

The prepare's recall state is a frozen :class:`~._committed.Committed`: the coordinator
holds the current value and asks ``_committed`` for each next one, never setting a field.
It reads the prepare only from its :class:`~._state.PrepareState` (the request, the
deadline, the exclusions) and must never keep a copy of any of it, nor decide what an
expansion step does: the :class:`~satchel.recall.RecallExpander` alone does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import attrs

from .._loop import loop_turn
from ..builder import FitMemo
from ..recall import (
    AT_MAX_ROUNDS,
    EXPANSION_FAILED,
    EXPANSION_TIMEOUT,
    GATE_FAILED,
    NEIGHBOURS,
    NO_RELEVANT,
    POOL_EXHAUSTED,
    AdmissionFloor,
    FusionWeights,
    GateAssessment,
    RecallEffort,
    RecallExpander,
    RecallSufficiencyGate,
    RelevanceFloor,
    lowest_floor,
)
from ..vocabulary import (
    Calibration,
    PrepareFailedError,
    PrepareTimeoutError,
    StoreUnavailableError,
)
from ._committed import Committed, verdict
from ._packer import Packer
from ._search import RoundSettings, Searcher, SearchOutcome
from ._shares import FairShares
from ._telemetry import BuildSpan, PrepareMetrics

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..builder import BuildResult
    from ..recall import RecallSufficiencyPolicy, SearchPlan
    from ..stores import Store
    from ..vocabulary import Family, Limits
    from ._locks import ScopeGuards
    from ._state import PrepareState, SearchSpec

logger = logging.getLogger("satchel")


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


@attrs.frozen
class Recalled:
    """What recall hands the preparer: the final fit, the rounds run, the gate's final
    reason, the committed state (which an explanation and the effort read)."""

    build: BuildResult
    rounds: int
    reason: str
    committed: Committed

    def effort(self, policy: str) -> RecallEffort:
        """The recall's ``RecallEffort`` under ``policy`` (its effective id)."""
        return self.committed.effort(policy, self.reason, self.rounds, self.build)


class Coordinator:
    """Runs the rounds of every prepare against one store."""

    def __init__(
        self,
        store: Store,
        limits: Limits,
        guards: ScopeGuards,
        tracer: Tracer,
        *,
        policy: RecallSufficiencyPolicy | None,
        round_timeout: float | None,
        baseline: float | None = None,
        fusion: FusionWeights | None = None,
        reference_penalty: int = 0,
        metrics: PrepareMetrics | None = None,
        trace_identifiers: bool = False,
        relevance: RelevanceFloor | None = None,
    ) -> None:
        self._limits = limits
        self._store = store
        self._metrics = metrics or PrepareMetrics(None)
        self._searcher = Searcher(
            store, limits, guards, tracer, self._metrics, identifiers=trace_identifiers
        )
        self._tracer = tracer
        self._policy = policy
        self._policy_id = "disabled" if policy is None else policy.effective_id()
        self._lowest_floor = AdmissionFloor() if policy is None else lowest_floor(policy)
        # What round 0 does is the runtime's alone, never the policy's: so a prepare the
        # gate does not expand is byte-identical to the gate off under the same runtime.
        self._weights = fusion or FusionWeights()
        # Round 0's floor: the embedder's calibrated cosine baseline (0.3 by design).
        self._round0 = AdmissionFloor(min_similarity=baseline)
        # Abstention reads round 0 alone, with the embedder's calibrated top-hit level.
        self._relevance = relevance or RelevanceFloor.of(Calibration())
        self._reference_penalty = reference_penalty
        self._round_timeout = round_timeout
        #: Encoded candidates shared by every prepare: an item is encoded once, not per fit.
        self._memo = FitMemo(limits)

    def forget_encodings(self, scope_id: str) -> None:
        """Drop the fit memo's encodings of the scope's evidence, after an erase."""
        self._memo.discard(scope_id)

    @property
    def policy_id(self) -> str:
        """The gate's effective policy id (``disabled`` without one), as efforts name it."""
        return self._policy_id

    def packer(self, state: PrepareState, span: BuildSpan) -> Packer:
        """The packer of one prepare, with the runtime's shared encoding memo."""
        return Packer(state, self._limits, self._memo, span)

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
        committed = await self._round_zero(state)
        # An abstaining prepare delivers no searched candidate; a profile the request
        # selects is read whole with every request, so it alone is still served.
        build = await packer.pack({} if committed.abstained else committed.candidates)
        if committed.abstained:  # the gate never expands a round with nothing relevant
            return Recalled(build, 1, NO_RELEVANT, committed)
        if self._policy is None:
            return Recalled(build, 1, "disabled", committed)
        return await self._expand(state, packer, committed, build)

    async def _round_zero(self, state: PrepareState) -> Committed:
        """Run round 0 and commit it unconditionally, judged for evidence of relevance
        (``Committed.abstained`` when it shows none)."""
        request = state.request
        settings = RoundSettings(
            0, "search", self._round0, self._ceilings(request.families),
            weights=self._weights, offer_neighbours=self._weights.neighbour_share > 0,
        )  # fmt: skip
        delays = {
            spec: self._reference_penalty
            for spec in state.specs
            if spec.scope_id != request.scope_id
        }
        outcomes, timed_out = await self._round(
            state, state.specs, state.specs, settings, delays, _round_zero_failed
        )
        if timed_out:
            raise PrepareTimeoutError("round 0 did not finish before its deadline")
        async with loop_turn():  # one stretch on the loop: judge and commit
            judged = verdict(outcomes, state.queries, self._relevance)
            return Committed.round_zero(
                state.specs, outcomes, settings, self._limits, delays, judged=judged
            )

    async def _expand(
        self, state: PrepareState, packer: Packer, committed: Committed, build: BuildResult
    ) -> Recalled:
        """Judge the committed result and take at most the policy's expansion steps."""
        assert self._policy is not None
        rounds = 1
        while True:
            step = RecallExpander.next_step(self._policy, committed.steps)
            async with loop_turn():
                assessment = self._assess(state, committed, build, step)
            exhausted = assessment.reason == POOL_EXHAUSTED
            if step is None and (exhausted or not assessment.sufficient):
                # Past the last step nothing is reachable by construction: the cap ended it.
                return Recalled(build, rounds, AT_MAX_ROUNDS, committed)
            if assessment.sufficient:
                return Recalled(build, rounds, assessment.reason, committed)
            assert step is not None
            settings = committed.next_round(rounds, step, self._weights, self._limits)
            committed = committed.stepped()
            async with loop_turn():
                runnable, idle = committed.split_idle(
                    settings, state.queries, self._store.scope_version
                )
            if not runnable:
                continue  # the step has nothing to search: no round runs, none is counted
            rounds += 1
            staged, stopped = await self._stage(state, committed, runnable, settings)
            if stopped is not None:
                return Recalled(build, rounds, stopped, committed.discarded())
            async with loop_turn():
                committed = committed.commit(staged | idle, settings, self._limits)
            if committed.grew:
                build = await packer.pack(committed.candidates)

    async def _stage(
        self,
        state: PrepareState,
        committed: Committed,
        specs: Sequence[SearchSpec],
        settings: RoundSettings,
    ) -> tuple[dict[SearchSpec, SearchOutcome], str | None]:
        """Run one expansion round of ``specs``; its staged outcomes, or why it was
        discarded."""
        failed = False

        def discard(group: ExceptionGroup[Exception]) -> None:
            nonlocal failed
            logger.warning("expansion round %d discarded: %r", settings.index, group)
            failed = True

        staged, timed_out = await self._round(
            state, committed.specs, specs, settings, committed.delays, discard
        )
        if timed_out:
            return {}, EXPANSION_TIMEOUT
        if failed:
            return {}, EXPANSION_FAILED
        return staged, None

    async def _round(
        self,
        state: PrepareState,
        every: Sequence[SearchSpec],
        specs: Sequence[SearchSpec],
        settings: RoundSettings,
        delays: Mapping[SearchSpec, int],
        failed: Callable[[ExceptionGroup[Exception]], None],
    ) -> tuple[dict[SearchSpec, SearchOutcome], bool]:
        """Run one round of ``specs`` (shares fair among ``every`` search of the prepare)
        in its span, until it ends or its deadline does: its staged outcomes and whether
        the deadline stopped it. A failed search's group goes to ``failed`` (inside the
        span), which raises or notes it; nothing of a failed round is returned."""
        excluded = state.exclusions.excluded_per_place
        shares = FairShares(every, specs, settings.room, delays, excluded)
        staged: dict[SearchSpec, SearchOutcome] = {}
        committed = False
        with self._round_span(settings) as span:
            with anyio.CancelScope(deadline=self._deadline(state)) as scope:
                try:
                    staged = await self._searcher.run(state, specs, settings, shares)
                    committed = True
                except ExceptionGroup as group:
                    span.set_attribute("satchel.recall.round.committed", False)
                    failed(group)
            # Recorded before the span ends, whichever way the round ended.
            committed = committed and not scope.cancelled_caught
            span.set_attribute("satchel.recall.round.committed", committed)
        if settings.index:
            self._metrics.expanded(settings.action, committed=committed)
        return staged, scope.cancelled_caught

    def _assess(
        self,
        state: PrepareState,
        committed: Committed,
        build: BuildResult,
        step: SearchPlan | None,
    ) -> GateAssessment:
        """The gate's judgement of the committed fit; ``step`` is the expander's next
        (None past the last)."""
        assert self._policy is not None
        neighbours_next = step is not None and step.action == NEIGHBOURS
        try:
            return RecallSufficiencyGate.assess(
                query=state.queries[0],
                families=committed.family_views(
                    self._limits, self._lowest_floor, state.queries, neighbours_next
                ),
                budget=build.budget(state.request.max_bytes),
                policy=self._policy,
            )
        except Exception:  # the gate fails closed: no expansion, round 0 stands
            logger.exception("recall sufficiency gate failed; not expanding")
            return GateAssessment(True, GATE_FAILED)

    def _ceilings(self, families: Sequence[Family]) -> dict[Family, int]:
        return {family: self._limits.ceiling(family) for family in families}

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
