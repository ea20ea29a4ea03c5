"""The recall of one prepare as a state machine: every transition of it, and what the
gate and ``RecallEffort`` read of it.

:class:`Recall` is the machine. It is a frozen value naming the one effect it waits for
(:attr:`Recall.pending`): a round to search (:class:`~._search.Round`) or candidates to fit
(:class:`Fit`). The coordinator runs that effect (tasks, I/O) and hands the result
back (:meth:`Recall.searched`, :meth:`Recall.fitted`), which returns the next value
(``attrs.evolve``); the coordinator never decides, and never sets a field. The
machine's transitions: round 0 is committed unconditionally, judged for evidence of
relevance (none: the prepare abstains and never expands), and fitted; then, with a
policy, the gate judges each fit, the expander hands out each next step, and a round
that searches something is committed whole when it succeeded, merged by the merge rule
(round 0 stays a prefix, a saturated family cannot grow), or discarded whole.

:class:`Committed` is what the committed rounds found, a frozen value with its own
transitions. Search tasks never see either. No I/O, no tasks.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeAlias

import attrs
import numpy as np

from ..recall import (
    AT_MAX_ROUNDS,
    GATE_FAILED,
    NEIGHBOURS,
    NO_RELEVANT,
    POOL_EXHAUSTED,
    VOUCHED_ONLY,
    AdmissionCounts,
    AdmissionFloor,
    GateAssessment,
    RecallEffort,
    RecallExpander,
    RecallSufficiencyGate,
    RelevanceFloor,
    allocate,
    calibrate,
    check_ceiling,
    evidence_of_relevance,
    family_view,
    lowest_floor,
    merge_rounds,
    reachable,
    vouched,
)
from ..vocabulary import rules
from ._search import Round, RoundSettings, SearchOutcome

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ..builder import BuildResult
    from ..recall import (
        FamilySearch,
        FamilyView,
        FusionWeights,
        RecallSufficiencyPolicy,
        SearchPlan,
    )
    from ..vocabulary import AnalysedQuery, Calibration, Evidence, Family, Limits, Pool
    from ._options import RuntimeOptions
    from ._state import PrepareState, SearchSpec

logger = logging.getLogger("satchel")

Candidates: TypeAlias = "dict[Family, tuple[Evidence, ...]]"


@attrs.frozen
class RecallRules:
    """What a runtime fixes for the recall of every prepare.

    Attributes:
        limits: the candidate ceilings.
        policy: the sufficiency gate's policy, calibrated (None: the gate is off).
        weights: round 0's fusion weights, which every round keeps: the runtime's, never
            the policy's, so a prepare the gate does not expand is byte-identical to
            the gate off under the same runtime.
        round_zero: round 0's admission floor (the embedder's calibrated baseline).
        relevance: the evidence of relevance round 0 must show, else the prepare abstains.
        reference_penalty: rank positions a reference scope's searches give way.
    """

    limits: Limits
    policy: RecallSufficiencyPolicy | None
    weights: FusionWeights
    round_zero: AdmissionFloor
    relevance: RelevanceFloor
    reference_penalty: int = 0
    #: The lowest floor the policy may still apply (the gate reads what it could reach).
    lowest: AdmissionFloor = attrs.field(
        default=attrs.Factory(
            lambda self: self.round_zero if self.policy is None else lowest_floor(self.policy),
            takes_self=True,
        )
    )

    @classmethod
    def of(
        cls,
        limits: Limits,
        policy: RecallSufficiencyPolicy | None,
        options: RuntimeOptions,
        calibration: Calibration,
    ) -> RecallRules:
        """A runtime's rules: the policy calibrated to its embedder, round 0 admitting
        at the embedder's cosine baseline (0.3 by design), abstention reading round 0
        with the embedder's calibrated top-hit level."""
        return cls(
            limits,
            None if policy is None else calibrate(policy, calibration),
            options.fusion,
            AdmissionFloor(min_similarity=calibration.baseline),
            RelevanceFloor.of(calibration),
            options.reference_penalty,
        )

    @property
    def policy_id(self) -> str:
        """The gate's effective policy id (``disabled`` without one), as efforts name it."""
        return "disabled" if self.policy is None else self.policy.effective_id()


@attrs.frozen
class Fit:
    """The effect a :class:`Recall` waits for: fit these candidates (the profile and
    the exclusions are the packer's)."""

    candidates: Candidates


@attrs.frozen
class Recall:
    """The recall of one prepare (see the module): what it waits for and what it has.

    Attributes:
        rules: the runtime's.
        queries: the prepare's analysed queries, the caller's first.
        max_bytes: the request's budget (the gate reads the fit against it).
        specs: the prepare's searches.
        pending: the effect the machine waits for; None once recall is done.
        committed: what the committed rounds found (None before round 0 commits).
        build: the last fit (None before the first).
        rounds: the rounds run, round 0 included (a discarded one counts).
        reason: the final reason, once done: the gate's, ``disabled``, or why
            expansion stopped.
    """

    rules: RecallRules
    queries: tuple[AnalysedQuery, ...]
    max_bytes: int
    specs: tuple[SearchSpec, ...]
    pending: Round | Fit | None
    committed: Committed | None = None
    build: BuildResult | None = None
    rounds: int = 0
    reason: str = ""

    @classmethod
    def start(cls, rules: RecallRules, state: PrepareState) -> Recall:
        """A prepare's recall, waiting for round 0: every search, at round 0's floor,
        a reference scope's searches giving way by the runtime's penalty."""
        request = state.request
        settings = RoundSettings(
            0, "search", rules.round_zero,
            {family: rules.limits.ceiling(family) for family in request.families},
            weights=rules.weights, offer_neighbours=rules.weights.neighbour_share > 0,
            in_context=rules.weights.thread_context > 0,
        )  # fmt: skip
        delays = {
            spec: rules.reference_penalty
            for spec in state.specs
            if spec.scope_id != request.scope_id
        }
        first = Round(settings, state.specs, state.specs, delays)
        return cls(rules, state.queries, request.max_bytes, state.specs, first)

    def searched(
        self,
        outcomes: Mapping[SearchSpec, SearchOutcome],
        stopped: str | None,
        scope_version: Callable[[str], int],
    ) -> Recall:
        """The pending round ended: with every search's outcome, or (an expansion round
        only) discarded whole, ``stopped`` saying why. ``scope_version`` is the store's
        (an idle search is one whose scope is unchanged)."""
        search = self.pending
        assert isinstance(search, Round)
        settings = search.settings
        rounds = self.rounds + 1
        if self.committed is None:  # round 0: committed unconditionally, judged
            judged = verdict(outcomes, self.queries, self.rules.relevance)
            committed = Committed.round_zero(
                self.specs, outcomes, settings, self.rules.limits, search.delays, judged=judged
            )
            # An abstaining prepare delivers no searched candidate (a profile the
            # request selects is still served: the packer adds it).
            fit = Fit({} if committed.abstained else committed.candidates)
            return attrs.evolve(self, pending=fit, committed=committed, rounds=rounds)
        if stopped is not None:
            return attrs.evolve(self, rounds=rounds)._done(stopped, self.committed.discarded())
        committed = self.committed.commit({**outcomes, **search.idle}, settings, self.rules.limits)
        if committed.grew:
            return attrs.evolve(
                self, pending=Fit(committed.candidates), committed=committed, rounds=rounds
            )
        return attrs.evolve(self, committed=committed, rounds=rounds)._next(scope_version)

    def fitted(self, build: BuildResult, scope_version: Callable[[str], int]) -> Recall:
        """The pending fit is ``build``: recall ends, or the gate asks for a round."""
        assert isinstance(self.pending, Fit)
        assert self.committed is not None
        fitted = attrs.evolve(self, build=build)
        if self.committed.abstained:  # the gate never expands a round with nothing relevant
            return fitted._done(NO_RELEVANT)
        if self.rules.policy is None:
            return fitted._done("disabled")
        return fitted._next(scope_version)

    def recalled(self) -> Recalled:
        """What recall hands the preparer, once done."""
        assert self.pending is None
        assert self.committed is not None
        assert self.build is not None
        return Recalled(self.build, self.rounds, self.reason, self.committed)

    def _done(self, reason: str, committed: Committed | None = None) -> Recall:
        return attrs.evolve(
            self, pending=None, reason=reason, committed=committed or self.committed
        )

    def _next(self, scope_version: Callable[[str], int]) -> Recall:
        """Judge the committed fit and take the expander's next step that searches
        something (a step with nothing to search runs no round but is taken); done when
        the gate is satisfied or the policy allows no more steps."""
        policy, limits = self.rules.policy, self.rules.limits
        assert policy is not None
        assert self.committed is not None
        assert self.build is not None
        committed = self.committed
        while True:
            step = RecallExpander.next_step(policy, committed.steps)
            assessment = self._assess(committed, step)
            exhausted = assessment.reason == POOL_EXHAUSTED
            if step is None and (exhausted or not assessment.sufficient):
                # Past the last step nothing is reachable by construction: the cap ended it.
                return self._done(AT_MAX_ROUNDS, committed)
            if assessment.sufficient:
                return self._done(assessment.reason, committed)
            assert step is not None
            settings = committed.next_round(self.rounds, step, self.rules.weights, limits)
            committed = committed.stepped()
            runnable, idle = committed.split_idle(settings, self.queries, scope_version)
            if runnable:
                next_round = Round(
                    settings, tuple(runnable), committed.specs, committed.delays, idle
                )
                return attrs.evolve(self, pending=next_round, committed=committed)

    def _assess(self, committed: Committed, step: SearchPlan | None) -> GateAssessment:
        """The gate's judgement of the committed fit; ``step`` is the expander's next
        (None past the last). The gate fails closed: no expansion, the fit stands."""
        assert self.rules.policy is not None
        assert self.build is not None
        neighbours_next = step is not None and step.action == NEIGHBOURS
        try:
            return RecallSufficiencyGate.assess(
                query=self.queries[0],
                families=committed.family_views(
                    self.rules.limits, self.rules.lowest, self.queries, neighbours_next
                ),
                budget=self.build.budget(self.max_bytes),
                policy=self.rules.policy,
            )
        except Exception:
            logger.exception("recall sufficiency gate failed; not expanding")
            return GateAssessment(True, GATE_FAILED)


@attrs.frozen
class Recalled:
    """What recall hands the preparer: the final fit, the rounds run, the final reason,
    the committed state (which an explanation and the effort read)."""

    build: BuildResult
    rounds: int
    reason: str
    committed: Committed

    def effort(self, policy: str) -> RecallEffort:
        """The recall's ``RecallEffort`` under ``policy`` (its effective id)."""
        return self.committed.effort(policy, self.reason, self.rounds, self.build)


#: :func:`verdict` of a round that retrieved nothing: nothing to judge (the normal empty
#: result, not an abstention).
NOTHING_RETRIEVED = "nothing-retrieved"


@attrs.frozen
class Committed:
    """What the committed rounds of one prepare found.

    Attributes:
        specs: the searches of every round, in request order.
        outcomes: each search's outcome in the last committed round.
        known: the keys each search has committed over all rounds.
        candidates: each family's candidates, allocated across scopes, best first.
        candidates_by_round: how many candidates were committed after each round.
        floor: the admission floor of the last committed round.
        actions: the actions of the committed expansion rounds.
        grew: whether the last transition added a candidate (round 0: it is the first).
        joined_neighbours: candidates that joined as a hit's thread neighbour.
        steps: the expansion steps the expander has handed out; a step with nothing to
            search runs no round and commits nothing, but is taken.
        delays: per search, the rank positions its list gives way in allocation (the
            runtime's ``reference_penalty`` for a reference scope; none for the
            request's own scope).
        rounds: each committed round's index, outcomes and candidates once committed,
            in order: an explanation reads which round committed a candidate and how
            its search ranked it (references only: nothing is copied for it).
        abstained: round 0 found candidates and no evidence that any is relevant
            (:func:`verdict`): the prepare delivers none of them and never expands.
        vouched_only: round 0's only evidence was the scope's vocabulary (the weakest
            kind): every round delivers only the candidates a channel vouches for on its
            own (:func:`vouched_only`: holding a query term, or among the few nearest
            in meaning), never a thread neighbour or a distant vector hit.
    """

    specs: tuple[SearchSpec, ...]
    outcomes: Mapping[SearchSpec, SearchOutcome]
    known: Mapping[SearchSpec, frozenset[int]]
    candidates: Candidates
    candidates_by_round: tuple[int, ...]
    floor: AdmissionFloor
    actions: tuple[str, ...] = ()
    joined_neighbours: int = 0
    steps: int = 0
    delays: Mapping[SearchSpec, int] = attrs.Factory(dict)
    rounds: tuple[tuple[int, Mapping[SearchSpec, SearchOutcome], Candidates], ...] = ()
    abstained: bool = False
    vouched_only: bool = False
    grew: bool = True

    @classmethod
    def round_zero(
        cls,
        specs: Sequence[SearchSpec],
        outcomes: Mapping[SearchSpec, SearchOutcome],
        settings: RoundSettings,
        limits: Limits,
        delays: Mapping[SearchSpec, int] | None = None,
        *,
        judged: str | None = NOTHING_RETRIEVED,
    ) -> Committed:
        """Round 0's outcomes, allocated round-robin across scopes under each ceiling.

        ``judged`` is their :func:`verdict`: None abstains (the prepare delivers none of
        them and never expands); a kind in ``VOUCHED_ONLY`` keeps, in this round and
        every later one, only the candidates a channel vouches for on its own."""
        delays = delays or {}
        if judged in VOUCHED_ONLY:
            outcomes = {spec: vouched_only(outcome) for spec, outcome in outcomes.items()}
        candidates: Candidates = {}
        for family in dict.fromkeys(spec.family for spec in specs):
            own = [spec for spec in specs if spec.family == family]
            ranked = [outcomes[spec].evidence for spec in own]
            own_delays = [delays.get(spec, 0) for spec in own]
            candidates[family] = allocate(ranked, limits.ceiling(family), own_delays)
            check_ceiling(family, candidates[family], limits.ceiling(family))
        staged = dict(outcomes)
        return cls(
            specs=tuple(specs),
            outcomes=staged,
            known={spec: frozenset(outcome.keys) for spec, outcome in outcomes.items()},
            candidates=candidates,
            candidates_by_round=(sum(len(items) for items in candidates.values()),),
            floor=settings.floor,
            joined_neighbours=sum(outcome.joined_neighbours for outcome in outcomes.values()),
            delays=dict(delays),
            rounds=((settings.index, staged, candidates),),
            abstained=judged is None,
            vouched_only=judged in VOUCHED_ONLY,
        )

    def stepped(self) -> Committed:
        """The expander handed out its next step (counted whether or not a round runs)."""
        return attrs.evolve(self, steps=self.steps + 1)

    def discarded(self) -> Committed:
        """An expansion round ran and was discarded whole: nothing was added."""
        last = self.candidates_by_round[-1]
        return attrs.evolve(self, candidates_by_round=(*self.candidates_by_round, last), grew=False)

    def commit(
        self, staged: Mapping[SearchSpec, SearchOutcome], settings: RoundSettings, limits: Limits
    ) -> Committed:
        """A whole, successful round merged in (``grew``: it added a candidate)."""
        before = self.candidates
        if self.vouched_only:
            staged = {spec: vouched_only(outcome) for spec, outcome in staged.items()}
        merged: Candidates = {}
        for family, committed in before.items():
            own = [spec for spec in self.specs if spec.family == family]
            added = [staged[spec].evidence for spec in own]
            own_delays = [self.delays.get(spec, 0) for spec in own]
            merged[family] = merge_rounds(committed, added, limits.ceiling(family), own_delays)
            check_ceiling(family, merged[family], limits.ceiling(family))
        outcomes = dict(staged)
        return attrs.evolve(
            self,
            outcomes=outcomes,
            rounds=(*self.rounds, (settings.index, outcomes, merged)),
            known={spec: self.known[spec] | frozenset(staged[spec].keys) for spec in self.specs},
            candidates=merged,
            floor=settings.floor,
            joined_neighbours=self.joined_neighbours
            + sum(outcome.joined_neighbours for outcome in staged.values()),
            actions=(*self.actions, settings.action),
            candidates_by_round=(
                *self.candidates_by_round,
                sum(len(items) for items in merged.values()),
            ),
            grew=any(len(merged[family]) != len(before[family]) for family in merged),
        )

    def searches_of(
        self, family: Family, queries: Sequence[AnalysedQuery]
    ) -> list[tuple[Pool, FamilySearch, int]]:
        """The last committed pool and search of each of ``family``'s searches, with the
        distinct term count of the query (of ``queries``, the prepare's) it searched for."""
        return [
            (
                self.outcomes[spec].pool,
                self.outcomes[spec].search,
                self.outcomes[spec].pool.counted_terms(len(queries[spec.query].terms)),
            )
            for spec in self.specs
            if spec.family == family
        ]

    def next_round(
        self, index: int, step: SearchPlan, weights: FusionWeights, limits: Limits
    ) -> RoundSettings:
        """The round the expander's ``step`` runs over the committed pools, with round
        0's ``weights``; ``index`` is its place among the rounds that ran. Each family
        has the room its ceiling leaves."""
        room = {
            family: limits.ceiling(family) - len(items) for family, items in self.candidates.items()
        }
        return RoundSettings(
            index,
            step.action,
            self.floor if step.floor is None else step.floor,
            room,
            pools={spec: outcome.pool for spec, outcome in self.outcomes.items()},
            known=self.known,
            weights=weights,
            offer_neighbours=step.action == NEIGHBOURS,
        )

    def split_idle(
        self,
        settings: RoundSettings,
        queries: Sequence[AnalysedQuery],
        scope_version: Callable[[str], int],
    ) -> tuple[list[SearchSpec], dict[SearchSpec, SearchOutcome]]:
        """Split a round's searches into those to run and those whose outcome is known.

        A search whose scope is unchanged (``scope_version``, the store's) and whose pool
        holds nothing the round's floor would newly admit would re-admit exactly what it
        admitted before: its previous outcome is staged, with no new candidates, instead
        of running a task. The ``"neighbours"`` action runs only searches of a
        neighbour-channel family that committed something.
        """
        runnable: list[SearchSpec] = []
        idle: dict[SearchSpec, SearchOutcome] = {}
        for spec in self.specs:
            outcome = self.outcomes[spec]
            terms = outcome.pool.counted_terms(len(queries[spec.query].terms))
            unchanged = scope_version(spec.scope_id) == outcome.pool.version
            if settings.offer_neighbours:
                can_add = self.offers_neighbours(spec)
            else:
                can_add = reachable(outcome.pool, outcome.search, settings.floor, terms) > 0
            if unchanged and not can_add:
                idle[spec] = SearchOutcome(
                    spec, outcome.pool, outcome.search, retrieved_again=outcome.retrieved_again
                )
            else:
                runnable.append(spec)
        return runnable, idle

    def offers_neighbours(self, spec: SearchSpec) -> bool:
        """Whether a ``"neighbours"`` round can look up anything for this search: its
        family has a neighbour channel and the search committed a hit."""
        return rules(spec.family).neighbour_channel and bool(self.known[spec])

    def family_views(
        self,
        limits: Limits,
        floor: AdmissionFloor,
        queries: Sequence[AnalysedQuery],
        neighbours_next: bool,
    ) -> list[FamilyView]:
        """The gate's view of each searchable family, from the last committed round;
        ``floor`` is the lowest the policy may still apply, ``queries`` the prepare's.

        When the next action is ``"neighbours"``, a family with a neighbour channel and
        committed candidates can still grow (their neighbours are unknown until looked up).
        """
        views = []
        for family, candidates in self.candidates.items():
            view = family_view(
                family,
                self.searches_of(family, queries),
                candidates=len(candidates),
                ceiling=limits.ceiling(family),
                floor=floor,
            )
            if neighbours_next and candidates and rules(family).neighbour_channel:
                view = attrs.evolve(view, reachable=1)
            views.append(view)
        return views

    def effort(self, policy: str, reason: str, rounds: int, build: BuildResult) -> RecallEffort:
        """The ``RecallEffort`` of a finished recall: counts only, no query or entry."""
        omissions = build.omissions
        return RecallEffort(
            policy=policy,
            assessment=reason,
            rounds=rounds,
            expansion_actions=self.actions,
            candidates_by_round=self.candidates_by_round,
            admission_by_family=self.admission_by_family(),
            added_embeddings=0,  # every round reuses the round-0 query vectors
            added_generation_calls=0,  # satchel calls no model
            truncated_items=omissions.truncated_items,
            dropped_items=omissions.dropped_items,
            dropped_below_min_bytes=omissions.dropped_below_min_bytes,
            dropped_no_fitting_truncation=omissions.dropped_no_fitting_truncation,
        )

    def admission_by_family(self) -> tuple[AdmissionCounts, ...]:
        """Admission per family and scope in the last committed round, a planner's
        queries summed into their family and scope."""
        totals: dict[tuple[Family, str], tuple[int, int]] = {}
        for spec in self.specs:
            counts = self.outcomes[spec].search.counts
            retrieved, admitted = totals.get((spec.family, spec.scope_id), (0, 0))
            totals[(spec.family, spec.scope_id)] = (
                retrieved + counts.retrieved,
                admitted + counts.admitted,
            )
        return tuple(
            AdmissionCounts(family, scope, retrieved, admitted)
            for (family, scope), (retrieved, admitted) in totals.items()
        )


def verdict(
    outcomes: Mapping[SearchSpec, SearchOutcome],
    queries: Sequence[AnalysedQuery],
    floor: RelevanceFloor,
) -> str | None:
    """The kind of evidence of relevance round 0's ``outcomes`` show
    (:func:`~satchel.recall.evidence_of_relevance`), :data:`NOTHING_RETRIEVED`, or None:
    abstain. ``queries`` are the prepare's."""
    searches = [
        (outcome.pool, outcome.pool.counted_terms(len(queries[spec.query].terms)))
        for spec, outcome in outcomes.items()
    ]
    if not any(pool.retrieved for pool, _ in searches):
        return NOTHING_RETRIEVED
    return evidence_of_relevance(searches, floor)


def vouched_only(outcome: SearchOutcome) -> SearchOutcome:
    """``outcome`` with only its candidates a channel vouches for on its own
    (:func:`~satchel.recall.vouched`), in the same order."""
    keep = vouched(np.asarray(outcome.keys, dtype=np.int64), outcome.pool)
    if keep.all():
        return outcome
    return attrs.evolve(
        outcome,
        keys=tuple(key for key, kept in zip(outcome.keys, keep, strict=True) if kept),
        evidence=tuple(item for item, kept in zip(outcome.evidence, keep, strict=True) if kept),
    )
