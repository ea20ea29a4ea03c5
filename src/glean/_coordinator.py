"""The coordinator: round 0, the sufficiency gate, and at most two bounded second looks.

An actor: search tasks send their outcomes to it and it alone stages, commits and
merges. Round 0 is committed unconditionally. An expansion round is staged whole and
committed only if every search in it succeeded before the round's deadline; otherwise
it is discarded and the previous committed result stands. The gate fails closed.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import anyio
import attrs

from ._committed import (
    Committed,
    budget_view,
    effort_of,
    family_views,
    lowest_floor,
    reachable,
)
from ._errors import PrepareFailedError, PrepareTimeoutError
from ._families import SEARCHABLE, Family
from ._rounds import RoundInput, RoundRunner, SearchOutcome, SearchSpec
from .recall import _gate as gate
from .recall._admission import AdmissionFloor
from .recall._allocation import allocate, check_ceiling
from .recall._fusion import FusionWeights
from .recall._gate import GateAssessment, RecallSufficiencyGate
from .recall._merge import merge_rounds
from .recall._policy import RecallExpander

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from contextlib import AbstractContextManager

    import numpy as np
    import numpy.typing as npt
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from ._limits import Limits
    from ._locks import ScopeGuards
    from ._requests import PreparePlan
    from .builder import BuildResult
    from .recall._analysis import AnalysedQuery
    from .recall._effort import RecallEffort
    from .recall._evidence import Evidence
    from .recall._policy import RecallSufficiencyPolicy
    from .stores._protocol import Store

    Candidates = dict[Family, tuple[Evidence, ...]]
    Fit = Callable[[Candidates], BuildResult]
    Bodies = Callable[[Candidates], Awaitable[None]]

logger = logging.getLogger("glean")

NEIGHBOURS = "neighbours"

#: Families searched in the request's own scope only.
OWN_SCOPE_ONLY = frozenset({"topic-memory"})


@attrs.frozen
class Recalled:
    """What recall hands the runtime: the final fit and, when asked, the effort."""

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
        sequential: bool = False,
        baseline: float | None = None,
    ) -> None:
        self._limits = limits
        self._store = store
        self._runner = RoundRunner(store, limits, guards, tracer, sequential=sequential)
        self._tracer = tracer
        self._policy = policy
        self._lowest_floor = AdmissionFloor() if policy is None else lowest_floor(policy)
        self._weights = FusionWeights() if policy is None else policy.fusion
        # Round 0's floor: the embedder's calibrated cosine baseline (0.3 by design).
        self._round0 = AdmissionFloor(min_similarity=baseline)
        self._round_timeout = round_timeout
        self._prepare_timeout = prepare_timeout

    async def recall(
        self,
        plan: PreparePlan,
        query: AnalysedQuery,
        vector: npt.NDArray[np.float32] | None,
        fit: Fit,
        *,
        bodies: Bodies,
        effort: bool,
    ) -> Recalled:
        """Search, judge, expand at most twice, and fit the committed candidates.

        Raises:
            PrepareFailedError: a search of round 0 failed.
            PrepareTimeoutError: round 0 overran ``round_timeout`` or ``prepare_timeout``.
        """
        started = anyio.current_time()
        specs = search_specs(plan)
        shared = RoundInput(
            0, "search", query, vector, self._round0, self._ceilings(plan),
            weights=self._weights, neighbours=self._weights.neighbours > 0,
        )  # fmt: skip
        state = await self._round_zero(specs, shared, self._deadline(started, started))

        async def refit(candidates: Candidates) -> BuildResult:
            await bodies(candidates)
            return fit(candidates)

        build = await refit(state.candidates)
        rounds, reason = 1, "disabled"
        if self._policy is not None:
            rounds, reason, build = await self._expand(
                plan, query, vector, refit, state, build, started
            )
        self._trace_build(build, rounds, reason, state.neighbours)
        if not effort:
            return Recalled(build, None)
        policy = "disabled" if self._policy is None else self._policy.policy
        return Recalled(build, effort_of(policy, reason, rounds, state, build))

    async def _round_zero(
        self, specs: Sequence[SearchSpec], shared: RoundInput, deadline: float
    ) -> Committed:
        with self._round_span(shared) as span, anyio.CancelScope(deadline=deadline) as scope:
            try:
                outcomes = await self._runner.run(specs, shared)
            except ExceptionGroup as group:
                raise PrepareFailedError(f"round 0 failed: {group.exceptions[0]!r}") from group
            span.set_attribute("glean.recall.round.committed", True)
        if scope.cancelled_caught:
            raise PrepareTimeoutError("round 0 did not finish before its deadline")
        candidates: Candidates = {}
        for family in dict.fromkeys(spec.family for spec in specs):
            ranked = [outcomes[spec].evidence for spec in specs if spec.family == family]
            candidates[family] = allocate(ranked, self._limits.ceiling(family))
            check_ceiling(family, candidates[family], self._limits.ceiling(family))
        known = {spec: frozenset(outcome.keys) for spec, outcome in outcomes.items()}
        total = sum(len(items) for items in candidates.values())
        joined = sum(outcome.neighbours for outcome in outcomes.values())
        return Committed(
            tuple(specs), outcomes, known, candidates, [total], shared.floor, neighbours=joined
        )

    async def _expand(
        self,
        plan: PreparePlan,
        query: AnalysedQuery,
        vector: npt.NDArray[np.float32] | None,
        fit: Callable[[Candidates], Awaitable[BuildResult]],
        state: Committed,
        build: BuildResult,
        started: float,
    ) -> tuple[int, str, BuildResult]:
        assert self._policy is not None
        rounds = 1
        while True:
            assessment = self._assess(query, state, build, plan.max_bytes)
            exhausted = assessment.reason == gate.POOL_EXHAUSTED
            if len(state.actions) >= self._policy.max_expansions and (
                exhausted or not assessment.sufficient
            ):
                # Past the last round nothing is reachable by construction: the cap ended it.
                return rounds, gate.AT_MAX_ROUNDS, build
            if assessment.sufficient:
                return rounds, assessment.reason, build
            step = RecallExpander.plan(len(state.actions) + 1, self._policy)
            floor = state.floor if step.floor is None else step.floor
            shared = RoundInput(
                rounds, step.action, query, vector, floor, self._room(state),
                {spec: outcome.pool for spec, outcome in state.outcomes.items()}, state.known,
                weights=self._weights, neighbours=step.action == NEIGHBOURS,
            )  # fmt: skip
            rounds += 1
            runnable, carried = self._plan_round(state, shared)
            staged, stopped = await self._stage(runnable, shared, started)
            staged.update(carried)
            if stopped is not None:
                state.candidates_by_round.append(state.candidates_by_round[-1])
                return rounds, stopped, build
            if self._commit(state, staged, shared):
                build = await fit(state.candidates)

    async def _stage(
        self, specs: Sequence[SearchSpec], shared: RoundInput, started: float
    ) -> tuple[dict[SearchSpec, SearchOutcome], str | None]:
        """Run one expansion round; its outcomes, or why it was discarded."""
        deadline = self._deadline(anyio.current_time(), started)
        staged: dict[SearchSpec, SearchOutcome] = {}
        failed = False
        with self._round_span(shared) as span, anyio.CancelScope(deadline=deadline) as scope:
            try:
                staged = await self._runner.run(specs, shared)
            except ExceptionGroup as group:
                logger.warning("expansion round %d discarded: %r", shared.index, group)
                failed = True
            span.set_attribute("glean.recall.round.committed", not failed)
        if scope.cancelled_caught:
            span.set_attribute("glean.recall.round.committed", False)
            return {}, gate.EXPANSION_TIMEOUT
        return staged, gate.EXPANSION_FAILED if failed else None

    def _plan_round(
        self, state: Committed, shared: RoundInput
    ) -> tuple[list[SearchSpec], dict[SearchSpec, SearchOutcome]]:
        """Split a round's searches into those to run and those whose outcome is known.

        A search whose scope is unchanged and whose pool holds nothing the round's floor
        would newly admit would re-admit exactly what it admitted before: its previous
        outcome is staged, with no new candidates, instead of running a task. The
        ``"neighbours"`` action runs only memory searches that committed something.
        """
        runnable: list[SearchSpec] = []
        carried: dict[SearchSpec, SearchOutcome] = {}
        terms = len(shared.query.terms)
        for spec in state.specs:
            outcome = state.outcomes[spec]
            unchanged = self._store.scope_version(spec.scope_id) == outcome.pool.version
            if shared.neighbours:
                idle = unchanged and not (spec.family == "memory" and state.known[spec])
            else:
                idle = unchanged and not reachable(outcome, shared.floor, terms)
            if idle:
                carried[spec] = SearchOutcome(
                    spec, outcome.pool, outcome.search, (), (), outcome.retrieved_again
                )
            else:
                runnable.append(spec)
        return runnable, carried

    def _commit(
        self, state: Committed, staged: dict[SearchSpec, SearchOutcome], shared: RoundInput
    ) -> bool:
        """Merge a whole, successful round into the committed state; True if it added any."""
        before = state.candidates
        merged: Candidates = {}
        for family, committed in before.items():
            added = [staged[spec].evidence for spec in state.specs if spec.family == family]
            merged[family] = merge_rounds(committed, added, self._limits.ceiling(family))
            check_ceiling(family, merged[family], self._limits.ceiling(family))
        state.outcomes = staged
        state.known = {
            spec: state.known[spec] | frozenset(staged[spec].keys) for spec in state.specs
        }
        state.candidates = merged
        state.floor = shared.floor
        state.neighbours += sum(outcome.neighbours for outcome in staged.values())
        state.actions.append(shared.action)
        state.candidates_by_round.append(sum(len(items) for items in merged.values()))
        return any(len(merged[family]) != len(before[family]) for family in merged)

    def _assess(
        self, query: AnalysedQuery, state: Committed, build: BuildResult, max_bytes: int
    ) -> GateAssessment:
        assert self._policy is not None
        try:
            return RecallSufficiencyGate.assess(
                query=query,
                families=family_views(
                    state, self._limits, self._lowest_floor, query, self._neighbours_next(state)
                ),
                budget=budget_view(build, max_bytes),
                policy=self._policy,
            )
        except Exception:  # the gate fails closed: no expansion, round 0 stands
            logger.exception("recall sufficiency gate failed; not expanding")
            return GateAssessment(True, gate.GATE_FAILED)

    def _neighbours_next(self, state: Committed) -> bool:
        """Whether the next expansion round's action is ``"neighbours"``."""
        assert self._policy is not None
        actions = self._policy.actions[: self._policy.max_expansions]
        return len(state.actions) < len(actions) and actions[len(state.actions)] == NEIGHBOURS

    def _ceilings(self, plan: PreparePlan) -> dict[Family, int]:
        return {family: self._limits.ceiling(family) for family in plan.families}

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

    def _round_span(self, shared: RoundInput) -> AbstractContextManager[Span]:
        attributes: dict[str, AttributeValue] = {
            "glean.recall.round.index": shared.index,
            "glean.recall.round.action": shared.action,
        }
        return self._tracer.start_as_current_span("glean.recall.round", attributes=attributes)

    def _trace_build(self, build: BuildResult, rounds: int, reason: str, neighbours: int) -> None:
        omissions = build.omissions
        attributes: dict[str, AttributeValue] = {
            "glean.recall.rounds": rounds,
            "glean.recall.assessment": reason,
            "glean.recall.truncated_items": omissions.truncated_items,
            "glean.recall.neighbours": neighbours,
            "glean.recall.dropped_items": omissions.dropped_items,
            "glean.context.status": build.context.status,
            "glean.context.bytes": build.context.content_bytes,
        }
        with self._tracer.start_as_current_span("glean.context.build", attributes=attributes):
            pass


def search_specs(plan: PreparePlan) -> list[SearchSpec]:
    """One search per selected searchable family and scope (topic memory: own scope)."""
    return [
        SearchSpec(family, scope)
        for family in plan.families
        if family in SEARCHABLE
        for scope in ((plan.scope_id,) if family in OWN_SCOPE_ONLY else plan.scopes)
    ]
