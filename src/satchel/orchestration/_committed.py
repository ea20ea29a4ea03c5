"""The committed state of one prepare: every transition of it, and what the gate and
``RecallEffort`` read of it.

A :class:`Committed` is a frozen value; each transition returns the next one
(``attrs.evolve``), so the coordinator holds the prepare's state and asks this module
how it changes, never changing a field itself. Round 0's outcomes, judged for evidence
of relevance, become it (:meth:`Committed.round_zero`); each expansion step is counted
(:meth:`Committed.stepped`); a whole, successful expansion round is merged into it by
the merge rule (round 0 stays a prefix, a saturated family cannot grow;
:meth:`Committed.commit`); a discarded round adds nothing (:meth:`Committed.discarded`).
Search tasks never see it. No I/O, no tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import attrs
import numpy as np

from ..recall import (
    NEIGHBOURS,
    VOUCHED_ONLY,
    AdmissionCounts,
    RecallEffort,
    allocate,
    check_ceiling,
    evidence_of_relevance,
    family_view,
    merge_rounds,
    reachable,
    vouched,
)
from ..vocabulary import rules
from ._search import RoundSettings, SearchOutcome

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ..builder import BuildResult
    from ..recall import (
        AdmissionFloor,
        FamilySearch,
        FamilyView,
        FusionWeights,
        RelevanceFloor,
        SearchPlan,
    )
    from ..vocabulary import AnalysedQuery, Evidence, Family, Limits, Pool
    from ._state import SearchSpec

Candidates: TypeAlias = "dict[Family, tuple[Evidence, ...]]"


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
