"""The coordinator: round 0, the sufficiency gate, and at most two bounded second looks.

An actor: each round is one task group whose search tasks send their outcomes through a
memory object stream; the coordinator receives them one by one and alone stages,
commits and merges. Round 0 is committed unconditionally. An expansion round is staged
whole and committed only if every search in it succeeded before the round's deadline;
otherwise it is discarded and the committed result stands. The gate fails closed.
Fitting goes through the prepare's :class:`~._packer.Packer` after each commit.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING

import anyio
import attrs

from ..recall import (
    NEIGHBOURS,
    AdmissionFloor,
    FusionWeights,
    GateAssessment,
    RecallEffort,
    RecallExpander,
    RecallSufficiencyGate,
    lowest_floor,
    reachable,
)
from ..recall import _gate as gate
from ..vocabulary import (
    PrepareFailedError,
    PrepareTimeoutError,
    StoreUnavailableError,
    loop_turn,
)
from ._committed import Committed
from ._search import RoundSettings, Searcher, SearchOutcome, SearchSpec, search_specs
from ._shares import FairShares

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    import numpy as np
    import numpy.typing as npt
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..builder import BuildResult
    from ..recall import RecallSufficiencyPolicy
    from ..stores import Store
    from ..vocabulary import AnalysedQuery, Family, Limits, ResolvedRequest
    from ._locks import ScopeGuards
    from ._packer import Packer

logger = logging.getLogger("satchel")


@attrs.frozen
class Recalled:
    """What recall hands the preparer: the final fit and, when asked, the effort."""

    build: BuildResult
    effort: RecallEffort | None


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
        prepare_timeout: float | None,
        baseline: float | None = None,
        fusion: FusionWeights | None = None,
        reference_penalty: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._limits = limits
        self._store = store
        self._searcher = Searcher(store, limits, guards, tracer)
        self._tracer = tracer
        self._policy = policy
        self._policy_id = "disabled" if policy is None else policy.effective_id()
        self._lowest_floor = AdmissionFloor() if policy is None else lowest_floor(policy)
        # What round 0 does is the runtime's alone, never the policy's: so a prepare the
        # gate does not expand is byte-identical to the gate off under the same runtime.
        self._weights = fusion or FusionWeights()
        # Round 0's floor: the embedder's calibrated cosine baseline (0.3 by design).
        self._round0 = AdmissionFloor(min_similarity=baseline)
        self._reference_penalty = reference_penalty
        self._clock = clock  # wall time, for relative dates; deadlines run on anyio's
        self._round_timeout = round_timeout
        self._prepare_timeout = prepare_timeout

    async def recall(
        self,
        request: ResolvedRequest,
        queries: Sequence[AnalysedQuery],
        vectors: Sequence[npt.NDArray[np.float32] | None],
        packer: Packer,
        *,
        effort: bool,
        started: float,
    ) -> Recalled:
        """Search, judge, expand at most twice, and pack the committed candidates.

        ``queries`` are the caller's query first, then any a planner added, each with its
        vector (or None); round 0 searches them all in one task group and every round
        re-admits all their pools. The gate judges by the caller's query. ``started`` is
        when the prepare began: ``prepare_timeout`` counts from there.

        Raises:
            StoreUnavailableError: round 0 could not reach the store's database.
            PrepareFailedError: a search of round 0 failed otherwise.
            PrepareTimeoutError: round 0 overran ``round_timeout`` or ``prepare_timeout``.
        """
        settings = RoundSettings(
            0, "search", tuple(queries), tuple(vectors), self._round0, self._ceilings(request),
            weights=self._weights, offer_neighbours=self._weights.neighbour_share > 0,
            detail=request.detail, excluded=request.excluded, now=self._clock(),
        )  # fmt: skip
        specs = search_specs(request, len(settings.queries))
        delays = {
            spec: self._reference_penalty for spec in specs if spec.scope_id != request.scope_id
        }
        shares = FairShares(specs, specs, settings.room, delays, _held(request))
        state, build = await self._round_zero(specs, settings, started, delays, shares, packer)
        rounds, reason = 1, "disabled"
        if self._policy is not None:
            rounds, reason, build = await self._expand(
                request, queries[0], packer, state, build, started
            )
        self._trace_build(build, rounds, reason, state.joined_neighbours)
        if not effort:
            return Recalled(build, None)
        return Recalled(build, state.effort(self._policy_id, reason, rounds, build))

    async def _round_zero(
        self,
        specs: Sequence[SearchSpec],
        settings: RoundSettings,
        started: float,
        delays: Mapping[SearchSpec, int],
        shares: FairShares[SearchSpec],
        packer: Packer,
    ) -> tuple[Committed, BuildResult]:
        """Run round 0 and commit it unconditionally; the committed state and its fit."""
        deadline = self._deadline(anyio.current_time(), started)
        with self._round_span(settings) as span:
            with anyio.CancelScope(deadline=deadline) as scope:
                try:
                    outcomes = await self._run_round(specs, settings, shares)
                except ExceptionGroup as group:
                    span.set_attribute("satchel.recall.round.committed", False)
                    unavailable, _ = group.split(StoreUnavailableError)
                    if unavailable is not None:  # the caller can retry: say so plainly
                        first = unavailable.exceptions[0]
                        raise StoreUnavailableError(f"round 0 failed: {first}") from group
                    raise PrepareFailedError(f"round 0 failed: {group.exceptions[0]!r}") from group
            span.set_attribute("satchel.recall.round.committed", not scope.cancelled_caught)
        if scope.cancelled_caught:
            raise PrepareTimeoutError("round 0 did not finish before its deadline")
        async with loop_turn():  # one stretch on the loop: commit, then fit
            state = Committed.round_zero(specs, outcomes, settings, self._limits, delays)
            return state, packer.pack(state.candidates)

    async def _expand(
        self,
        request: ResolvedRequest,
        query: AnalysedQuery,
        packer: Packer,
        state: Committed,
        build: BuildResult,
        started: float,
    ) -> tuple[int, str, BuildResult]:
        """Judge the committed result and take at most the policy's expansion rounds.

        Returns the rounds run, the final reason and the final fit.
        """
        assert self._policy is not None
        rounds = 1
        while True:
            async with loop_turn():
                assessment = self._assess(query, state, build, request.max_bytes)
            exhausted = assessment.reason == gate.POOL_EXHAUSTED
            if state.steps >= self._policy.max_expansions and (
                exhausted or not assessment.sufficient
            ):
                # Past the last step nothing is reachable by construction: the cap ended it.
                return rounds, gate.AT_MAX_ROUNDS, build
            if assessment.sufficient:
                return rounds, assessment.reason, build
            settings = self._expansion_settings(rounds, state)
            state.steps += 1
            async with loop_turn():
                runnable, idle = self._split_idle(state, settings)
            if not runnable:
                continue  # the step has nothing to search: no round runs, none is counted
            rounds += 1
            shares = FairShares(state.specs, runnable, settings.room, state.delays, _held(request))
            staged, stopped = await self._stage(runnable, settings, shares, started)
            staged.update(idle)
            if stopped is not None:
                state.candidates_by_round.append(state.candidates_by_round[-1])
                return rounds, stopped, build
            async with loop_turn():
                if state.commit(staged, settings, self._limits):
                    build = packer.pack(state.candidates)

    def _expansion_settings(self, index: int, state: Committed) -> RoundSettings:
        """The next expansion round: the expander's step over the committed pools, with
        round 0's query, vector and weights."""
        assert self._policy is not None
        step = RecallExpander.plan(state.steps + 1, self._policy)
        return attrs.evolve(
            state.round_zero_settings,
            index=index,
            action=step.action,
            floor=state.floor if step.floor is None else step.floor,
            room=self._room(state),
            pools={spec: outcome.pool for spec, outcome in state.outcomes.items()},
            known=state.known,
            offer_neighbours=step.action == NEIGHBOURS,
        )

    async def _stage(
        self,
        specs: Sequence[SearchSpec],
        settings: RoundSettings,
        shares: FairShares[SearchSpec],
        started: float,
    ) -> tuple[dict[SearchSpec, SearchOutcome], str | None]:
        """Run one expansion round; its staged outcomes, or why it was discarded."""
        deadline = self._deadline(anyio.current_time(), started)
        staged: dict[SearchSpec, SearchOutcome] = {}
        failed = False
        with self._round_span(settings) as span:
            with anyio.CancelScope(deadline=deadline) as scope:
                try:
                    staged = await self._run_round(specs, settings, shares)
                except ExceptionGroup as group:
                    logger.warning("expansion round %d discarded: %r", settings.index, group)
                    failed = True
            # Recorded before the span ends, whichever way the round ended.
            span.set_attribute(
                "satchel.recall.round.committed", not (failed or scope.cancelled_caught)
            )
        if scope.cancelled_caught:
            return {}, gate.EXPANSION_TIMEOUT
        return staged, gate.EXPANSION_FAILED if failed else None

    async def _run_round(
        self, specs: Sequence[SearchSpec], settings: RoundSettings, shares: FairShares[SearchSpec]
    ) -> dict[SearchSpec, SearchOutcome]:
        """One task per search, each sending its outcome here, where it is staged.

        Raises:
            ExceptionGroup: a search failed; the group's cancel scope stopped the others
                and nothing of the round is returned.
        """
        staged: dict[SearchSpec, SearchOutcome] = {}
        send, receive = anyio.create_memory_object_stream[SearchOutcome](max(len(specs), 1))
        async with anyio.create_task_group() as group:
            async with send:
                for spec in specs:
                    group.start_soon(self._searcher.search, spec, settings, shares, send.clone())
            async with receive:
                async for outcome in receive:
                    staged[outcome.spec] = outcome
        return staged

    def _split_idle(
        self, state: Committed, settings: RoundSettings
    ) -> tuple[list[SearchSpec], dict[SearchSpec, SearchOutcome]]:
        """Split a round's searches into those to run and those whose outcome is known.

        A search whose scope is unchanged and whose pool holds nothing the round's floor
        would newly admit would re-admit exactly what it admitted before: its previous
        outcome is staged, with no new candidates, instead of running a task. The
        ``"neighbours"`` action runs only searches of a neighbour-channel family that
        committed something.
        """
        runnable: list[SearchSpec] = []
        idle: dict[SearchSpec, SearchOutcome] = {}
        for spec in state.specs:
            outcome = state.outcomes[spec]
            terms = outcome.pool.counted_terms(len(settings.queries[spec.query].terms))
            unchanged = self._store.scope_version(spec.scope_id) == outcome.pool.version
            if settings.offer_neighbours:
                can_add = state.offers_neighbours(spec)
            else:
                can_add = reachable(outcome.pool, outcome.search, settings.floor, terms) > 0
            if unchanged and not can_add:
                idle[spec] = SearchOutcome(
                    spec, outcome.pool, outcome.search, retrieved_again=outcome.retrieved_again
                )
            else:
                runnable.append(spec)
        return runnable, idle

    def _assess(
        self, query: AnalysedQuery, state: Committed, build: BuildResult, max_bytes: int
    ) -> GateAssessment:
        assert self._policy is not None
        try:
            return RecallSufficiencyGate.assess(
                query=query,
                families=state.family_views(
                    self._limits, self._lowest_floor, self._next_action(state) == NEIGHBOURS
                ),
                budget=build.budget(max_bytes),
                policy=self._policy,
            )
        except Exception:  # the gate fails closed: no expansion, round 0 stands
            logger.exception("recall sufficiency gate failed; not expanding")
            return GateAssessment(True, gate.GATE_FAILED)

    def _next_action(self, state: Committed) -> str | None:
        """The action of the next expansion round, None past the last one."""
        assert self._policy is not None
        actions = self._policy.actions[: self._policy.max_expansions]
        return actions[state.steps] if state.steps < len(actions) else None

    def _ceilings(self, request: ResolvedRequest) -> dict[Family, int]:
        return {family: self._limits.ceiling(family) for family in request.families}

    def _room(self, state: Committed) -> dict[Family, int]:
        return {
            family: self._limits.ceiling(family) - len(items)
            for family, items in state.candidates.items()
        }

    def _deadline(self, now: float, started: float) -> float:
        """A round ends at ``round_timeout`` from its start or ``prepare_timeout`` from the
        prepare's, whichever comes first."""
        deadline = math.inf
        if self._round_timeout is not None:
            deadline = now + self._round_timeout
        if self._prepare_timeout is not None:
            deadline = min(deadline, started + self._prepare_timeout)
        return deadline

    def _round_span(self, settings: RoundSettings) -> AbstractContextManager[Span]:
        attributes: dict[str, AttributeValue] = {
            "satchel.recall.round.index": settings.index,
            "satchel.recall.round.action": settings.action,
        }
        return self._tracer.start_as_current_span("satchel.recall.round", attributes=attributes)

    def _trace_build(self, build: BuildResult, rounds: int, reason: str, joined: int) -> None:
        omissions = build.omissions
        attributes: dict[str, AttributeValue] = {
            "satchel.recall.rounds": rounds,
            "satchel.recall.assessment": reason,
            "satchel.recall.truncated_items": omissions.truncated_items,
            "satchel.recall.neighbours": joined,
            "satchel.recall.dropped_items": omissions.dropped_items,
            "satchel.context.status": build.context.status,
            "satchel.context.bytes": build.context.content_bytes,
        }
        with self._tracer.start_as_current_span("satchel.context.build", attributes=attributes):
            pass


def _held(request: ResolvedRequest) -> list[tuple[str, str]]:
    """The (family, scope) of each citation the caller holds: an evidence identity
    starts with them (``Citation.identity``)."""
    return [(family, scope) for family, scope, *_ in (i.split("\x1f") for i in request.excluded)]
